"""Step 5: one clause into drafts: per subject conjunct, listed name, word of a pair and adjunct."""

from ...text import STOPWORDS
from ..lexicon import AUXILIARIES, DETERMINERS, PLURAL_TO_SINGULAR, PREPOSITIONS
from .embedded import complement_at, embedded_start
from .tokens import Token, be, first_verb, is_past, is_verb, quote_depths, strip, text_of, verb_form
from .words import ADJUNCT, ADVERBS, NAME_WORD, QUOTES, SUBJECT_PLACE, TIME_WORDS


def subject_conjuncts(subject: list[Token]) -> list[list[Token]]:
    """A coordinated subject split where a new name, number or determiner follows "and" or ","."""
    parts, current = [], []
    for i, t in enumerate(subject):
        nxt = subject[i + 1] if i + 1 < len(subject) else None
        if (
            t.text in {",", "and", "&"}
            and current
            and nxt is not None
            and (nxt.capitalised or nxt.number or nxt.lower in DETERMINERS)
            and t.text != "&"
        ):
            parts.append(current)
            current = []
            continue
        current.append(t)
    if current:
        parts.append(current)
    parts = [strip(p) for p in parts if strip(p)]
    if not any(t.lower in {"and", "&"} for t in subject):
        return [subject]
    if (
        len(parts) == 2
        and len(parts[0]) == 1
        and len(parts[1]) == 2
        and all(NAME_WORD.match(t.text) for t in subject if t.text != "and")
    ):
        return [subject]  # "Paul and Laura Elliott": a couple sharing a surname
    if len(parts) < 2 or not all(p[0].capitalised or p[0].number or p[0].lower in DETERMINERS for p in parts[1:]):
        return [subject]
    return parts


def split_subject(tokens: list[Token], sentence: str) -> list[list[str]]:
    """Drafts of one clause as lists of text pieces: one per subject conjunct, plus "S is/was PLACE"
    for a place or origin inside a short subject."""
    verb = first_verb(tokens)
    if verb is None:  # a headline-like clause: a leading list of names still splits
        verb = 0
        while verb < len(tokens) and (tokens[verb].capitalised or tokens[verb].text in {",", "and"}):
            verb += 1
        if verb == len(tokens) or len(subject_conjuncts(tokens[:verb])) < 2:
            return [[text_of(tokens, sentence)]]
    subject, predicate = tokens[:verb], tokens[verb:]
    while subject and subject[-1].lower in ADVERBS:  # "X now assisting": the adverb goes with the verb
        predicate = [subject.pop()] + predicate
    if not subject:
        return [[text_of(tokens, sentence)]]
    drafts: list[list[str]] = []
    conjuncts = subject_conjuncts(subject)
    for conjunct in conjuncts:
        head, place = conjunct, None
        place_at = next((i for i, t in enumerate(conjunct) if t.lower in SUBJECT_PLACE and i > 0), None)
        if place_at is not None and 1 <= place_at <= 3 and len(conjunct) - place_at >= 2:
            head = conjunct[:place_at]
            place = [text_of(head, sentence), be(head, is_past(predicate)), text_of(conjunct[place_at:], sentence)]
        variants = [a for e in split_entity_lists(predicate) for v in split_word_pairs(e) for a in split_adjuncts(v)]
        for variant in variants:
            pred = text_of(variant, sentence)
            if len(conjuncts) > 1 and all(t.capitalised for t in head):
                first, _, rest = pred.partition(" ")
                pred = " ".join([PLURAL_TO_SINGULAR.get(first.lower(), first), rest]).strip()
            drafts.append([text_of(head, sentence), pred])
        if place:
            drafts.append(place)
    return drafts


def split_entity_lists(tokens: list[Token]) -> list[list[Token]]:
    """A predicate naming a list of names ("visited Paris , Rome and Madrid"): one copy per name."""
    i = 0
    while i < len(tokens):
        if (tokens[i].capitalised or tokens[i].number and len(tokens[i].text) == 4) and i > 0:
            j = i
            items, current = [], []
            while j < len(tokens) and (
                tokens[j].capitalised
                or tokens[j].number
                and (tokens[i].number or tokens[j - 1].text in {",", "and"})
                or tokens[j].text in {",", "and"}
                or tokens[j].lower == "of"
            ):
                if tokens[j].text in {",", "and"}:
                    if current:
                        items.append(current)
                    current = []
                else:
                    current.append(tokens[j])
                j += 1
            if current:
                items.append(current)
            separators = [t for t in tokens[i:j] if t.text in {",", "and"}]
            if len(items) >= 2 and any(t.text == "and" for t in separators) and tokens[j - 1].text not in {",", "and"}:
                before, after = tokens[:i], tokens[j:]
                return [before + item + after for item in items]
            i = max(j, i + 1)
        else:
            i += 1
    return [tokens]


def split_word_pairs(tokens: list[Token]) -> list[list[Token]]:
    """Two single nouns joined by "and"/"or" at the end of a phrase ("caused boils and spots",
    "coins and notes in agar"): one copy per noun."""

    for i in range(1, len(tokens) - 1):
        if tokens[i].lower not in {"and", "or"}:
            continue
        left, right = tokens[i - 1], tokens[i + 1]
        after = tokens[i + 2] if i + 2 < len(tokens) else None
        before = tokens[i - 2] if i >= 2 else None
        plain = all(
            t.text.isalpha()
            and t.lower not in STOPWORDS
            and not t.capitalised
            and not is_verb(tokens, t.index - tokens[0].index)
            for t in (left, right)
        )
        if not plain or before is None or before.text == ",":
            continue
        if after is not None and after.lower not in PREPOSITIONS and after.text not in {",", "."}:
            continue
        return [tokens[:i] + tokens[i + 2 :], tokens[: i - 1] + tokens[i + 1 :]]
    return [tokens]


def adjunct_start(tokens: list[Token], i: int) -> bool:
    t = tokens[i]
    if t.capitalised:
        return False
    if t.lower == "by" and i > 0 and (verb_form(tokens[i - 1].lower) or tokens[i - 1].lower.endswith("ed")):
        return False  # "sold by Porto": the agent of a participle belongs to it
    if t.lower in ADJUNCT:
        return True
    nxt = tokens[i + 1].lower if i + 1 < len(tokens) else ""
    return t.lower in {"last", "this", "next"} and (nxt in TIME_WORDS or nxt == "coming")


def strip_piece(tokens: list[Token]) -> list[Token]:
    """`strip`, keeping a closing quote mark whose quotation opened inside the piece."""
    stripped = strip(tokens)
    if sum(t.text in QUOTES for t in stripped) % 2:
        closing = next((t for t in tokens[len(stripped) :] if t.text in QUOTES), None)
        stripped = stripped + [closing] if closing is not None and closing.index == stripped[-1].index + 1 else stripped
    return stripped


def split_adjuncts(predicate: list[Token]) -> list[list[Token]]:
    """A predicate with trailing adjuncts ("slept outdoors because of aftershocks", "joined Real
    Madrid in the summer for £ 23million"): the core up to the first adjunct, then the verb with
    each adjunct (one fact each; a long object is repeated beside a single adjunct only), as
    Lite3Pyramid's units keep one argument per unit.

    The core must hold a content word after the verb; an adjunct starts at a top-level
    preposition, subordinator or time phrase ("last year"), never inside a name ("University of
    Surrey") or a quotation."""

    verb_end = 0
    while verb_end < len(predicate) and (
        is_verb(predicate, verb_end)
        or predicate[verb_end].lower in {"not", "n't"} | ADVERBS
        or predicate[verb_end].lower == "to"
        and verb_end + 1 < len(predicate)
        and is_verb(predicate, verb_end + 1)
    ):
        verb_end += 1
    quoted = quote_depths(predicate)
    starts = [i for i in range(verb_end + 1, len(predicate)) if not quoted[i] and adjunct_start(predicate, i)]
    # a non-finite adjunct ("after winning ...") or a complement clause is drafted by
    # `embedded_clauses`: the adjuncts end there
    stop = embedded_start(predicate, verb_end, quoted)
    if stop is not None and complement_at(predicate, stop - 1) is not None:
        return [predicate]  # "claims she shared a kiss in Vegas": the claim stays whole
    if stop is not None:
        predicate = strip(predicate[:stop])
        starts = [i for i in starts if i < len(predicate)]
    if not starts:
        return [predicate]
    # "in an excerpt from her book": a short phrase followed by from/of/with is one adjunct
    starts = [
        b
        for a, b in zip([None] + starts, starts, strict=False)
        if a is None or not (predicate[b].lower in {"from", "of", "with"} and b - a <= 3)
    ]
    core = predicate[: starts[0]]
    if not any(t.lower not in STOPWORDS and t.text.isalnum() for t in core[verb_end:]):
        if len(starts) == 1:
            return [predicate]
        core, starts = predicate[: starts[1]], starts[1:]
    pieces = [predicate[a:b] for a, b in zip(starts, starts[1:] + [len(predicate)], strict=False)]
    pieces = [p for p in (strip_piece(p) for p in pieces) if len(p) >= 2]
    if not pieces:
        return [predicate]
    verb_only = core[:verb_end]
    copula = all(t.lower in AUXILIARIES | {"not", "n't"} | ADVERBS for t in verb_only)
    # a short object stays, and so does a long one beside a single adjunct ("approved the new
    # housing plan on Monday", not the bare "approved on Monday": bench/RESULTS.md, issue 30)
    head = core if copula or len(core) - verb_end <= 2 or len(pieces) == 1 else verb_only
    return [core] + [head + p for p in pieces]
