"""Step 5: one clause into drafts: per subject conjunct, listed name, word of a pair and adjunct."""

from ...language import lexicon
from ...language.inflections import getAllLemmas
from ...language.lexicon import AUXILIARIES, DETERMINERS, INTRANSITIVE, OBJECT_OPTIONAL, PREPOSITIONS
from ...language.tokens import Token, be, finite, first_verb, is_past, is_verb, quote_depths, strip, text_of, verb_form
from ...language.words import (
    ADJUNCT,
    ADVERBS,
    BE,
    COLLECTIVE_PHRASAL,
    COLLECTIVE_VERBS,
    COUNTS,
    MONTHS,
    NAME_WORD,
    PARTICLES,
    QUOTES,
    SUBJECT_PLACE,
    SUBJECT_PRONOUNS,
    SUBORDINATORS,
    TIME_SPANS,
    TIME_WORDS,
    VERBAL_PREPOSITIONS,
    WH_WORDS,
)
from ...text import STOPWORDS
from .embedded import complement_at, embedded_start
from .lists import split_noun_lists
from .reports import split_report


def subject_conjuncts(subject: list[Token]) -> list[list[Token]]:
    """A coordinated subject split where a new name, number or determiner follows "and" or ","."""
    parts, current = [], []
    for i, t in enumerate(subject):
        if t.text in {",", "and"} and current and i + 1 < len(subject) and opens_conjunct(subject[i + 1]):
            parts.append(current)
            current = []
            continue
        current.append(t)
    if current:
        parts.append(current)
    parts = [strip(p) for p in parts if strip(p)]
    if not any(t.lower in {"and", "&"} for t in subject) or shared_surname(subject, parts):
        return [subject]
    if len(parts) < 2 or not all(opens_conjunct(p[0]) for p in parts[1:]):
        return [subject]
    if any(t.lower in PREPOSITIONS for p in parts[:-1] for t in p[1:]):
        return [subject]  # "Fans from Leeds and Hull": the list may be inside the phrase
    return parts


def opens_conjunct(token: Token) -> bool:
    """A word that can open a conjunct of a subject: a name, a number or a determiner."""
    return token.capitalised or token.number or token.lower in DETERMINERS


def shared_surname(subject: list[Token], parts: list[list[Token]]) -> bool:
    """ "Paul and Laura Elliott": a couple sharing a surname, one subject."""
    return (
        len(parts) == 2
        and len(parts[0]) == 1
        and len(parts[1]) == 2
        and all(NAME_WORD.match(t.text) for t in subject if t.text != "and")
    )


def collective(predicate: list[Token]) -> bool:
    """A predicate true of a group only ("met", "married", "drew 1 - 1", "each other", "together")."""
    words = {t.lower for t in predicate}
    if words & {"together", "each", "both", "one", "between", "jointly", "respectively"}:
        return True
    lowers = [t.lower for t in predicate]
    at = next((i for i, w in enumerate(lowers) if w not in AUXILIARIES | ADVERBS | {"not", "n't"}), len(lowers))
    head = lowers[at] if at < len(lowers) else ""
    lemma = (getAllLemmas(head, "VERB").get("VERB") or (head,))[0]
    particle = lowers[at + 1] if at + 1 < len(lowers) else ""
    return lemma in COLLECTIVE_VERBS or (lemma, particle) in COLLECTIVE_PHRASAL


def split_subject(tokens: list[Token], sentence: str) -> list[list[str]]:
    """Drafts of one clause as lists of text pieces: one per subject conjunct, plus "S is/was PLACE"
    for a place or origin inside a short subject."""
    verb = subject_end(tokens)
    if verb is None:
        return [[text_of(tokens, sentence)]]
    subject, predicate = tokens[:verb], tokens[verb:]
    if subject and (subject[0].lower in AUXILIARIES or verb_form(subject[0].lower) in {"VBD", "VBN"}):
        return [[text_of(tokens, sentence)]]  # a headline without its subject ("Was five miles from ...")
    while subject and subject[-1].lower in ADVERBS:  # "X now assisting": the adverb goes with the verb
        predicate = [subject.pop()] + predicate
    if fronted_phrase_then_pronoun(subject, tokens):
        subject = subject[-1:]  # "Later in the program he hoarded ...": a fronted time or place, then the subject
    if not subject:
        return [[text_of(tokens, sentence)]]
    drafts: list[list[str]] = []
    conjuncts = subject_conjuncts(subject)
    if len(conjuncts) > 1 and (collective(predicate) or verb_form(predicate[0].lower) == "VBZ"):
        # "Pair and friends met in a park": no one met alone. A singular verb after two subjects
        # means the subject ends elsewhere ("Tom and Ann face charges": "face" is the verb).
        conjuncts = [subject]
    variants = predicate_variants(predicate)
    for conjunct in conjuncts:
        head, place = subject_place(conjunct, predicate, sentence)
        for variant in variants:
            pred = text_of(variant, sentence)
            if len(conjuncts) > 1 and all(t.capitalised for t in head):
                first, _, rest = pred.partition(" ")
                pred = " ".join([lexicon.PLURAL_TO_SINGULAR.get(first.lower(), first), rest]).strip()
            drafts.append([text_of(head, sentence), pred])
        if place:
            drafts.append(place)
    return drafts


def fronted_phrase_then_pronoun(subject: list[Token], tokens: list[Token]) -> bool:
    """ "Later in the program he", "On the show he": a time or place phrase before the subject
    pronoun, without a comma (outside quotations: a quotation keeps every word)."""
    return (
        len(subject) >= 3
        and subject[-1].lower in SUBJECT_PRONOUNS
        and subject[0].lower in {"later", "earlier", "then", "on", "in", "at", "during"}
        and not any(t.text in {",", "and", "or"} for t in subject)
        and not any(t.text in QUOTES for t in tokens)
    )


def subject_end(tokens: list[Token]) -> int | None:
    """Where the subject ends: at the first verb, or in a headline-like clause without one after a
    leading list of names (which still splits); None when the clause has no subject to split."""
    verb = first_verb(tokens)
    if verb is not None:
        return verb
    verb = 0
    while verb < len(tokens) and (tokens[verb].capitalised or tokens[verb].text in {",", "and"}):
        verb += 1
    if verb == len(tokens) or len(subject_conjuncts(tokens[:verb])) < 2:
        return None
    return verb


def subject_place(conjunct: list[Token], predicate: list[Token], sentence: str) -> tuple[list[Token], list[str] | None]:
    """A place or origin inside a short subject ("Students from the University of Surrey"): the
    head before it and the draft "S is/was PLACE"; else the whole conjunct and None."""
    place_at = next((i for i, t in enumerate(conjunct) if t.lower in SUBJECT_PLACE and i > 0), None)
    if place_at is not None and any(t.text in QUOTES for t in conjunct[:place_at]):
        return conjunct, None  # "' In the end I": a quotation's first words are no head
    if place_at is not None and 1 <= place_at <= 3 and len(conjunct) - place_at >= 2:
        head = conjunct[:place_at]
        return head, [text_of(head, sentence), be(head, is_past(predicate)), text_of(conjunct[place_at:], sentence)]
    return conjunct, None


def predicate_variants(predicate: list[Token]) -> list[list[Token]]:
    """The predicate split per listed name, word of a pair, noun phrase after "be" and adjunct;
    inside what a verb of saying reports, with the speaker kept (`reports.split_report`)."""
    reported = split_report(predicate, predicate_variants)
    if reported is not None:
        return reported
    return [
        a
        for e in split_entity_lists(predicate)
        for n in split_noun_lists(e)
        for w in split_word_pairs(n)
        for v in split_nominals(w)
        for a in split_adjuncts(v)
    ]


def split_entity_lists(tokens: list[Token]) -> list[list[Token]]:
    """A predicate naming a list of names ("visited Paris , Rome and Madrid"): one copy per name."""
    i = 0
    while i < len(tokens):
        if i > 0 and (tokens[i].capitalised or tokens[i].number and len(tokens[i].text) == 4):
            items, j = list_items(tokens, i)
            if separate_items(tokens, i, j, items):
                before, after = tokens[:i], tokens[j:]
                return [before + item + after for item in items]
            i = max(j, i + 1)
        else:
            i += 1
    return [tokens]


def in_list(tokens: list[Token], i: int, j: int) -> bool:
    """tokens[j] belongs to the list of names or numbers that starts at tokens[i]."""
    t = tokens[j]
    return (
        t.capitalised
        or t.number
        and (tokens[i].number or tokens[j - 1].text in {",", "and"})
        or t.text in {",", "and"}
        or t.lower == "of"
    )


def list_items(tokens: list[Token], i: int) -> tuple[list[list[Token]], int]:
    """The items of the list starting at tokens[i], between its commas and "and", and where it ends."""
    j = i
    items, current = [], []
    while j < len(tokens) and in_list(tokens, i, j):
        if tokens[j].text in {",", "and"}:
            if current:
                items.append(current)
            current = []
        else:
            current.append(tokens[j])
        j += 1
    if current:
        items.append(current)
    return items, j


def separate_items(tokens: list[Token], i: int, j: int, items: list[list[Token]]) -> bool:
    """The list tokens[i:j] names things each the predicate is true of: two or more items closed by
    "and", not shared ("between A and B", "A and B 's") and no pair that is as often one name
    ("Hampstead and Kilburn", "Marks and Spencer")."""
    separators = [t for t in tokens[i:j] if t.text in {",", "and"}]
    shared = tokens[i - 1].lower in {"between", "both", "and"} or (j < len(tokens) and tokens[j].lower == "'s")
    named_pair = len(items) == 2 and not any(t.text == "," for t in separators) and not tokens[i].number
    return (
        len(items) >= 2
        and not shared
        and not named_pair
        and any(t.text == "and" for t in separators)
        and tokens[j - 1].text not in {",", "and"}
    )


def split_nominals(tokens: list[Token]) -> list[list[Token]]:
    """ "was a USC freshman and a member of the house": one copy per noun phrase after "be", each
    opened by "a"/"an"/"the", with no verb or comma between (each is said of the subject)."""
    if len(tokens) < 5 or tokens[0].lower not in BE or tokens[1].lower not in {"a", "an", "the"}:
        return [tokens]
    quoted = quote_depths(tokens)
    for j in range(2, len(tokens) - 2):
        if tokens[j].lower in PREPOSITIONS:
            return [tokens]  # "the network behind X and the Sopranos": the "and" is inside the phrase
        if tokens[j].lower == "and" and not quoted[j] and tokens[j + 1].lower in {"a", "an", "the"}:
            if any(t.text in {",", ";"} or is_verb(tokens, k) for k, t in enumerate(tokens[1:], start=1) if k != j):
                return [tokens]
            return [tokens[:j], tokens[:1] + tokens[j + 1 :]]
    return [tokens]


def split_word_pairs(tokens: list[Token]) -> list[list[Token]]:
    """Two single nouns joined by "and" at the end of a phrase ("caused boils and spots",
    "coins and notes in agar"): one copy per noun. Only where nothing before the pair could
    modify both nouns ("a £ 40 voucher and refund", "young women and girls" stay whole) and
    never for "or" (a choice is not two facts)."""

    for i in range(1, len(tokens) - 1):
        if tokens[i].lower != "and":
            continue
        left, right = tokens[i - 1], tokens[i + 1]
        after = tokens[i + 2] if i + 2 < len(tokens) else None
        before = tokens[i - 2] if i >= 2 else None
        plain = all(
            t.text.isalpha() and t.lower not in STOPWORDS and not t.capitalised and not is_verb(tokens, k)
            for k, t in ((i - 1, left), (i + 1, right))
        )
        if not plain or before is None or before.text == ",":
            continue
        # not after "of": "two counts of intimidation and harassment" may count both together
        opens = before.lower in (DETERMINERS | PREPOSITIONS) - {"between", "both", "of"} or is_verb(tokens, i - 2)
        if not opens:
            continue
        if after is not None and after.text not in {",", "."}:
            continue  # "men with guns and executioner with a meat cleaver": the phrase after is the last noun's
        return [tokens[:i] + tokens[i + 2 :], tokens[: i - 1] + tokens[i + 1 :]]
    return [tokens]


def adjunct_start(tokens: list[Token], i: int) -> bool:
    """An adjunct starts at tokens[i]: a preposition or subordinator at the top level, or a time
    phrase ("last year"). Not inside a hyphenated word ("14-under - par"), not a quantity ("over
    100 names"), not a preposition taking a verb ("kept him from returning": the verb's own
    complement), not the agent of a participle ("sold by Porto")."""
    t = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    previous = tokens[i - 1] if i > 0 else None
    if (
        t.lower in MONTHS
        and t.capitalised
        and nxt is not None
        and nxt.number
        and previous is not None
        and previous.lower not in PREPOSITIONS
    ):
        return True  # "found dead March 18": a date
    if t.capitalised or bound_to_neighbour(tokens, i):
        return False
    if t.lower in ADJUNCT:
        return not (
            t.lower not in SUBORDINATORS
            and nxt is not None
            and (verb_form(nxt.lower) == "VBG" or nxt.lower in {"being", "having"})
        )
    return time_phrase_start(tokens, i)


def bound_to_neighbour(tokens: list[Token], i: int) -> bool:
    """tokens[i] belongs with the word before or after it: inside a hyphenated word, the agent of
    a participle, a quantity, after a time span or an -ly adverb."""
    t = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    previous = tokens[i - 1] if i > 0 else None
    if previous is not None and previous.text == "-" or nxt is not None and nxt.text == "-":
        return True
    if t.lower == "by" and previous is not None and (verb_form(previous.lower) or previous.lower.endswith("ed")):
        return True
    if t.lower in {"over", "under", "around", "about", "nearly", "almost"} and nxt is not None and nxt.number:
        return True
    if previous is not None and previous.lower in TIME_SPANS:
        return True  # "a day after initial break - in", "moments after he walked": one time phrase
    # "on Apple TV exclusively for three months": the adverb may be the next phrase's
    return previous is not None and previous.lower.endswith("ly") and previous.lower not in {"only", "early", "daily"}


def time_phrase_start(tokens: list[Token], i: int) -> bool:
    """A time phrase starts at tokens[i]: "two days ago", "20 minutes later", "last year", "this coming"."""
    t = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    after = tokens[i + 2] if i + 2 < len(tokens) else None
    if (t.number or t.lower in COUNTS) and nxt is not None and nxt.lower in TIME_WORDS and after is not None:
        return after.lower in {"ago", "later", "earlier"}
    return (
        t.lower in {"last", "this", "next"} and nxt is not None and (nxt.lower in TIME_WORDS or nxt.lower == "coming")
    )


def strip_piece(tokens: list[Token]) -> list[Token]:
    """`strip`, keeping a closing quote mark whose quotation opened inside the piece."""
    stripped = strip(tokens)
    if sum(t.text in QUOTES for t in stripped) % 2:
        closing = next((t for t in tokens[len(stripped) :] if t.text in QUOTES), None)
        stripped = stripped + [closing] if closing is not None and closing.index == stripped[-1].index + 1 else stripped
    return stripped


def modifier(tokens: list[Token], i: int) -> bool:
    """tokens[i] (an -ing form) modifies the noun after it ("the new housing plan"), no verb."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return (
        nxt is not None
        and nxt.text.isalpha()
        and not nxt.capitalised
        and nxt.lower not in PREPOSITIONS | DETERMINERS | STOPWORDS
    )


def inner_verb(tokens: list[Token], i: int) -> bool:
    """tokens[i] makes the phrase it is in a clause: a question word ("into what caused the
    blaze") or a finite verb."""
    return tokens[i].lower in WH_WORDS or finite(tokens, i) and not no_verb_here(tokens, i)


def passive(group: list[Token]) -> bool:
    """A verb group "be + past participle" ("was jailed", "were left", "has been caught")."""
    words = [t.lower for t in group if t.lower not in ADVERBS | {"not", "n't"}]
    return len(words) >= 2 and words[-2] in BE and verb_form(words[-1]) in {"VBD", "VBN"}


def verbal(piece: list[Token]) -> bool:
    """An adjunct that can only belong to the verb: led by "during", "despite", "after" ... or a
    time phrase ("last year"), or a preposition with a time or a number ("in 2009", "on Tuesday",
    "in the first period", "for £ 23million", "from 25 yards")."""
    head = piece[0].lower
    if head in VERBAL_PREPOSITIONS or head in {"last", "this", "next"}:
        return True
    return any(
        t.lower in TIME_WORDS or t.lower in MONTHS or t.number or t.text in {"£", "$", "€"} or t.lower == "ago"
        for t in piece[1:5]
    )


def split_adjuncts(predicate: list[Token]) -> list[list[Token]]:
    """A predicate with two or more adjuncts ("joined Real Madrid in the summer for £ 23million"):
    the core with each adjunct, one fact each ("joined Real Madrid in the summer", "joined Real
    Madrid for £ 23million"). Never the core alone beside them (a draft that is another plus a
    modifier), never the verb without its object ("put ahead" for "put QPR ahead"); a single
    adjunct stays in its clause.

    Only where the structure is plain: an adjunct starts at a top-level preposition,
    subordinator or time phrase ("last year"), never inside a name ("University of Surrey") or a
    quotation; a subordinate clause ("when Huminski forced her into car") runs to the end; and a
    second finite verb outside it ("stabbed to death ... was celebrated", "a ball which raised
    £ 400,000") leaves the predicate whole, since which word an adjunct belongs to is then unclear."""

    verb_end = verb_group_end(predicate)
    quoted = quote_depths(predicate)
    # a non-finite adjunct ("after winning ...") or a factive complement is drafted by
    # `embedded_clauses`: the adjuncts end there
    stop = embedded_start(predicate, verb_end, quoted)
    if stop is not None and complement_at(predicate, stop - 1) is not None:
        return [predicate]  # "revealed she was pregnant in May": the complement stays whole
    if stop is not None:
        predicate = strip(predicate[:stop])
    # the first phrase after the verb is the verb's complement ("took to Instagram", "relied on
    # her") unless the verb is passive ("was jailed for life in April 2000": each is a fact)
    first = verb_end if passive(predicate[:verb_end]) or intransitive(predicate[:verb_end]) else verb_end + 1
    starts = [i for i in range(first, len(predicate)) if not quoted[i] and adjunct_start(predicate, i)]
    if agent_at(predicate, verb_end):
        starts = [verb_end] + starts  # "were launched by Saudi forces a month ago": the agent is a fact
    clause = subordinate_start(predicate, starts)
    if from_to_range(predicate, starts, clause):
        return [predicate]  # "fell from 147th in 1996 to 1,001st in 2013": each time is an end's
    if second_verb(predicate, quoted, verb_end, clause):
        return [predicate]  # a second verb: which word each adjunct belongs to is unclear
    starts = phrase_starts(predicate, [i for i in starts if i <= clause])
    if (
        len(starts) >= 2
        and first > verb_end
        and not any(t.lower not in STOPWORDS and t.text.isalnum() for t in predicate[verb_end : starts[0]])
    ):
        starts = starts[1:]  # "came up with idea when ...": the first phrase completes the verb
    return object_dropped(predicate, verb_end, starts) or core_with_each_adjunct(predicate, starts)


def intransitive(group: list[Token]) -> bool:
    """The verb group ends in a verb that takes no object ("died", "vanished"): the phrase after it
    is an adjunct ("died in London two days ago"), not its complement."""
    words = [t.lower for t in group if t.lower not in ADVERBS | {"not", "n't"}]
    if not words:
        return False
    lemma = (getAllLemmas(words[-1], "VERB").get("VERB") or (words[-1],))[0]
    return lemma in INTRANSITIVE


def agent_at(predicate: list[Token], i: int) -> bool:
    """ "by" right after a passive verb group opens its agent ("were launched by Saudi forces"): a
    phrase of the verb of its own, like any adjunct of a passive verb."""
    return (
        0 < i < len(predicate) - 1
        and predicate[i].lower == "by"
        and passive(predicate[:i])
        and predicate[i + 1].text not in QUOTES
        and verb_form(predicate[i + 1].lower) != "VBG"
    )


def from_to_range(predicate: list[Token], starts: list[int], clause: int) -> bool:
    """A "from ... to ..." range with a phrase inside it: the phrases belong to its ends."""
    froms = [i for i in starts if i < clause and predicate[i].lower == "from"]
    if not froms:
        return False
    to = next((k for k in range(froms[0] + 1, clause) if predicate[k].lower == "to"), None)
    # a phrase between the ends ("from 14th in 1990 to ...") is the first end's
    return to is not None and any(froms[0] < i < to for i in starts)


def subordinate_start(predicate: list[Token], starts: list[int]) -> int:
    """Where a subordinate clause ("when Huminski forced her into car") starts among the adjunct
    starts (it runs to the end); the end of the predicate when there is none."""
    return next(
        (i for i in starts if predicate[i].lower in SUBORDINATORS and first_verb(predicate[i + 1 :], 0) is not None),
        len(predicate),
    )


def core_with_each_adjunct(predicate: list[Token], starts: list[int]) -> list[list[Token]]:
    """The core (up to the first adjunct) with each adjunct of two or more words, when there are two
    or more of them; else the predicate whole."""
    if len(starts) < 2:
        return [predicate]
    core = predicate[: starts[0]]
    pieces = [predicate[a:b] for a, b in zip(starts, starts[1:] + [len(predicate)], strict=False)]
    pieces = [p for p in (strip_piece(p) for p in pieces) if len(p) >= 2]
    if len(pieces) < 2:
        return [predicate]
    return [core + p for p in pieces]


def verb_group_end(predicate: list[Token]) -> int:
    """The end of the verb group opening a predicate: verbs, adverbs, particles, "not", "to" + verb."""
    verb_end = 0
    while verb_end < len(predicate) and (
        is_verb(predicate, verb_end)
        or predicate[verb_end].lower in {"not", "n't"} | ADVERBS | PARTICLES
        or predicate[verb_end].lower == "to"
        and verb_end + 1 < len(predicate)
        and is_verb(predicate, verb_end + 1)
    ):
        verb_end += 1
    return verb_end


def second_verb(predicate: list[Token], quoted: list[int], verb_end: int, clause: int) -> bool:
    """A verb between the verb group and the subordinate clause ("stabbed to death ... was
    celebrated"): a finite verb, a verbal -ing form, or "and"/"but"/"or" before a verb."""
    return any(
        not quoted[i]
        and not no_verb_here(predicate, i)
        and (
            finite(predicate, i)
            or verb_form(predicate[i].lower) == "VBG"
            and is_verb(predicate, i)
            and not modifier(predicate, i)
            and not preposition_use(predicate, i)
            or predicate[i].lower in {"and", "but", "or"}
            and first_verb(predicate[i + 1 : i + 3], 0) is not None
        )
        for i in range(verb_end, clause)
    )


def no_verb_here(predicate: list[Token], i: int) -> bool:
    """A verb form that is no verb where it stands: "aged 80" (an age), a plural noun after a
    preposition and a name ("by Saudi forces")."""
    t = predicate[i]
    nxt = predicate[i + 1] if i + 1 < len(predicate) else None
    if t.lower == "aged" and nxt is not None and nxt.number:
        return True
    if t.lower in MONTHS and t.capitalised and i > 0 and predicate[i - 1].lower in PREPOSITIONS:
        return True  # "in May": a month, not the modal
    return (
        i >= 2
        and verb_form(t.lower) == "VBZ"
        and predicate[i - 1].capitalised
        and predicate[i - 2].lower in PREPOSITIONS
    )


def time_piece(piece: list[Token]) -> bool:
    """A phrase that only names a time ("on Saturday", "two days ago", "March 18", "last week")."""
    words = [t for t in piece if t.text not in {",", "-"}]
    return bool(words) and all(
        t.number
        or t.lower
        in TIME_WORDS | MONTHS | COUNTS | {"on", "in", "at", "last", "this", "next", "the", "ago", "later", "earlier"}
        for t in words
    )


def object_dropped(predicate: list[Token], verb_end: int, starts: list[int]) -> list[list[Token]] | None:
    """A verb whose object may be left out ("leave", "pay", "win") with its object and adjuncts:
    the verb with its object, and the verb with each adjunct ("Klopp will leave Borussia Dortmund",
    "Klopp will leave at the end of the season"), none repeating another; None otherwise."""
    if not starts or starts[0] <= verb_end or passive(predicate[:verb_end]):
        return None
    obj = predicate[verb_end : starts[0]]
    if not object_optional(predicate[:verb_end]) or any(
        t.text in QUOTES or t.lower == "to" or is_verb(predicate, verb_end + k) for k, t in enumerate(obj)
    ):
        return None
    pieces = [predicate[a:b] for a, b in zip(starts, starts[1:] + [len(predicate)], strict=False)]
    pieces = [p for p in (strip_piece(p) for p in pieces) if len(p) >= 2]
    if not pieces:
        return None
    return [strip(predicate[: starts[0]])] + [predicate[:verb_end] + p for p in pieces]


def object_optional(group: list[Token]) -> bool:
    """The verb group ends in a verb whose object may go ("will leave"), not in an infinitive
    ("wants to leave the club in May": what is wanted keeps its object)."""
    words = [t.lower for t in group if t.lower not in ADVERBS | {"not", "n't"}]
    if not words or "to" in words:
        return False
    return (getAllLemmas(words[-1], "VERB").get("VERB") or (words[-1],))[0] in OBJECT_OPTIONAL


def preposition_use(predicate: list[Token], i: int) -> bool:
    """An -ing word used as a preposition ("following a battle with cancer"): no second verb."""
    nxt = predicate[i + 1] if i + 1 < len(predicate) else None
    return predicate[i].lower in VERBAL_PREPOSITIONS and nxt is not None and nxt.lower in DETERMINERS


def phrase_starts(predicate: list[Token], starts: list[int]) -> list[int]:
    """Of the adjunct starts, those that open a phrase of the verb's own."""
    # "in an excerpt from her book": a short phrase followed by from/of/with is one adjunct
    starts = [
        b
        for a, b in zip([None] + starts, starts, strict=False)
        if a is None or not (predicate[b].lower in {"from", "of", "with"} and b - a <= 3)
    ]
    # a phrase after the first adjunct may modify that adjunct's noun ("won the vote on campaign
    # against corruption"): it stands alone only when it can only be the verb's (a time, a
    # number, "during", "despite", ...); else it stays with the phrase before it
    # (after a time phrase: "March 18 at a frat house", a date takes no phrase of its own)
    kept: list[int] = []
    for k, b in enumerate(starts):
        piece = predicate[b : (starts + [len(predicate)])[k + 1]]
        if not kept or verbal(piece) or time_piece(predicate[kept[-1] : b]):
            kept.append(b)
    starts = kept
    # a phrase holding a verb or a question word ("into what cause the blaze") is a clause: what
    # follows it ("30 years ago") may be that clause's, so it stays with it
    clausal = next(
        (
            k
            for k, b in enumerate(starts)
            if any(inner_verb(predicate, i) for i in range(b + 1, (starts + [len(predicate)])[k + 1]))
        ),
        None,
    )
    return starts if clausal is None else starts[: clausal + 1]
