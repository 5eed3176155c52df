"""The `rules` drafter: clause and coordination splitting of one sentence, no model.

A sentence becomes draft ACUs in four steps, each a plain function:

1. `tokenize`: words, numbers and punctuation with their character spans (the draft's text is
   cut from the sentence, so numbers like "£ 23million" and names stay exactly as written);
2. `split_clauses`: ";", a fronted subordinate clause ("After ..., X did Y"), comma-delimited
   relative clauses (", who ...", ", which ...") and appositions (", the founder of ...,") become
   their own clauses, the antecedent repeated as their subject; "and"/"but" split where the right
   side has a verb of its own (the subject is kept when the right side starts with the verb);
3. `split_subject`: a coordinated subject of names or numbers ("Anuradha Koirala and 425 young women")
   gives one ACU per conjunct, and a place or origin inside the subject ("Students from the
   University of Surrey") its own ACU;
4. `split_entity_lists`: a list of names in the predicate gives one ACU per name.

Runs of capitalised words and numbers are never split. Verbs are found with the word lists
in `lexicon` (no tagger): good enough for short news summaries; when no verb is found the
sentence is one draft.
"""

import re
from dataclasses import dataclass

from .lexicon import (
    AUXILIARIES,
    COORDINATORS,
    DETERMINERS,
    FRONT_SUBORDINATORS,
    NOT_VERBS,
    PLURAL_TO_SINGULAR,
    PREPOSITIONS,
    VERBS,
)

_TOKEN = re.compile(r"\d+(?:[.,:]\d+)*\w*|\w+(?:['’\-]\w+)*|'s|’s|[^\w\s]")
_CLOSING = {".", "!", "?", '"', "'", "''", "”", "’"}
_ADVERBS = frozenset(
    ["now", "also", "still", "already", "just", "then", "later", "recently", "reportedly", "allegedly", "currently"]
)
_PAST = frozenset(["was", "were", "had", "did", "said", "told"])
_SUBJECT_PLACE = frozenset({"from", "in", "at"})


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int
    index: int

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def capitalised(self) -> bool:
        return self.text[:1].isupper()

    @property
    def number(self) -> bool:
        return self.text[:1].isdigit()


def tokenize(sentence: str) -> list[Token]:
    return [Token(m.group(), m.start(), m.end(), i) for i, m in enumerate(_TOKEN.finditer(sentence))]


def is_verb(tokens: list[Token], i: int) -> bool:
    """A verb reading of tokens[i]: from the lexicon (or an -ed form), not after a determiner,
    and not a capitalised word inside the sentence (a name)."""
    token = tokens[i]
    word = token.lower
    if word in NOT_VERBS or token.number:
        return False
    if token.capitalised and i > 0 and tokens[i - 1].text not in {'"', "``", ":"} and word not in AUXILIARIES:
        return False
    if word in AUXILIARIES:
        return True
    previous = tokens[i - 1].lower if i > 0 else ""
    if previous in DETERMINERS or previous in PREPOSITIONS - {"to"}:
        return False
    if word in VERBS:
        return True
    return len(word) > 4 and word.endswith("ed") and word.isalpha()


_PRONOUNS = frozenset(["he", "she", "they", "we", "it", "i", "you"])


def first_verb(tokens: list[Token], start: int = 1) -> int | None:
    """The first verb from `start`; a verb right after a pronoun inside a longer subject
    ("45 children she cares for were ...") opens a reduced relative clause and is passed over."""
    for i in range(start, len(tokens)):
        if is_verb(tokens, i):
            if i >= 2 and tokens[i - 1].lower in _PRONOUNS and tokens[i].lower not in AUXILIARIES:
                later = next((j for j in range(i + 1, len(tokens)) if is_verb(tokens, j)), None)
                if later is not None:
                    return later
            return i
    return None


def text_of(tokens: list[Token], sentence: str) -> str:
    """The tokens' text cut from the sentence; runs that were not adjacent are joined by a space."""
    if not tokens:
        return ""
    parts, run = [], [tokens[0]]
    for token in tokens[1:]:
        if token.index == run[-1].index + 1:
            run.append(token)
        else:
            parts.append(sentence[run[0].start : run[-1].end])
            run = [token]
    parts.append(sentence[run[0].start : run[-1].end])
    return " ".join(" ".join(parts).split())


def _strip(tokens: list[Token]) -> list[Token]:
    """Without leading/trailing commas, coordinators and the closing full stop or quote."""
    tokens = list(tokens)
    while tokens and (tokens[-1].text in _CLOSING | {",", ";", ":", "-", "--"} or tokens[-1].lower in COORDINATORS):
        tokens.pop()
    while tokens and (tokens[0].text in {",", ";", ":", "-", "--"} or tokens[0].lower in COORDINATORS):
        tokens.pop(0)
    return tokens


def _noun_phrase_before(tokens: list[Token], end: int) -> list[Token]:
    """The phrase just before position `end`: back to the previous verb or clause mark."""
    start = end
    while start > 0 and tokens[start - 1].text not in {",", ";"} and not is_verb(tokens, start - 1):
        start -= 1
    return tokens[start:end]


def _be(subject: list[Token], past: bool) -> str:
    plural = len(subject) > 0 and (
        any(t.lower == "and" for t in subject)
        or (subject[-1].lower.endswith("s") and (not subject[-1].capitalised or subject[-1].index == 0))
    )
    if past:
        return "were" if plural else "was"
    return "are" if plural else "is"


def _is_past(tokens: list[Token]) -> bool:
    v = first_verb(tokens, 0)
    return v is not None and (tokens[v].lower in _PAST or tokens[v].lower.endswith("ed"))


@dataclass
class Clause:
    """A clause as tokens; `extra` (e.g. a fronted "after ..." phrase) is appended to its text."""

    tokens: list[Token]
    extra: list[Token] | None = None
    words: list[str] | None = None  # a clause made of new words (apposition: "X is Y")


def _comma_spans(tokens: list[Token]) -> list[tuple[int, int]]:
    """(start, end) of each comma-delimited stretch after a comma: tokens[start:end], end at the
    next comma or the end."""
    commas = [i for i, t in enumerate(tokens) if t.text == ","]
    spans = []
    for k, c in enumerate(commas):
        end = commas[k + 1] if k + 1 < len(commas) else len(tokens)
        spans.append((c + 1, end))
    return spans


def _extract_inserts(tokens: list[Token], sentence: str) -> tuple[list[Token], list[Clause]]:
    """Relative clauses and appositions set off by commas: removed from the main clause and
    returned as clauses of their own with the antecedent as subject.

    "Koirala , the founder of Maiti Nepal ," gives "Koirala is the founder of Maiti Nepal";
    "Eva Chapin , 34 , from West Linn , Oregon ," gives "Eva Chapin is 34" and "Eva Chapin is
    from West Linn , Oregon" (a name right after an apposition continues it)."""
    removed: set[int] = set()
    clauses: list[Clause] = []
    main_verb = first_verb(tokens)
    past = _is_past(tokens)
    previous: tuple[int, list[Token], Clause] | None = None  # (end, antecedent, clause) of the last insert
    for start, end in _comma_spans(tokens):
        if start >= end or any(i in removed for i in range(start, end)):
            continue
        inner = tokens[start:end]
        closed = end < len(tokens)
        follows_insert = previous is not None and previous[0] == start - 1
        antecedent = previous[1] if follows_insert else _noun_phrase_before(tokens, start - 1)
        if not antecedent:
            continue
        head = inner[0]
        before_verb = main_verb is not None and end <= main_verb
        after_verb = main_verb is not None and main_verb < start
        if follows_insert and all(t.capitalised for t in inner) and previous[2].words:
            previous[2].words[-1] += " , " + text_of(inner, sentence)  # "West Linn , Oregon"
            removed.update(range(start - 1, end + 1 if closed else end))
            previous = (end, antecedent, previous[2])
            continue
        clause = None
        if head.lower in {"who", "which", "whose"} and len(inner) > 2:
            rest = _strip(inner[1:])
            if head.lower == "whose":
                clause = Clause(tokens=[], words=[text_of(antecedent, sentence) + " 's", text_of(rest, sentence)])
            elif first_verb(rest, 0) is not None:
                clause = Clause(tokens=antecedent + rest)
        elif first_verb(inner, 0) is None and (closed and before_verb or after_verb and not closed):
            entity = [t for t in antecedent if t.capitalised or t.number] if antecedent[-1].capitalised else antecedent
            entity = entity or antecedent
            nominal = head.lower in DETERMINERS or (head.capitalised and len(inner) >= 2)
            place = head.lower in {"from", "of", "in"} and len(inner) >= 2
            age = len(inner) == 1 and head.number
            if (antecedent[-1].capitalised and (nominal or place or age)) or (
                antecedent[0].lower in DETERMINERS and head.lower in DETERMINERS
            ):
                clause = Clause(
                    tokens=[], words=[text_of(entity, sentence), _be(entity, past), text_of(_strip(inner), sentence)]
                )
        if clause is None:
            previous = None
            continue
        clauses.append(clause)
        removed.update(range(start - 1, end + 1 if closed else end))
        previous = (end, antecedent, clause)
    return [t for i, t in enumerate(tokens) if i not in removed], clauses


def _split_coordination(tokens: list[Token]) -> list[list[Token]]:
    """Split at "and"/"but" (with or without a comma) where the right side has its own verb.

    When the right side starts with the verb (possibly after an adverb) it shares the left
    side's subject, which is repeated."""
    verb = first_verb(tokens)
    if verb is None:
        return [tokens]
    for i in range(verb + 1, len(tokens) - 1):
        if tokens[i].lower not in COORDINATORS:
            continue
        right = _strip(tokens[i + 1 :])
        if not right:
            continue
        right_verb = first_verb(right, 0)
        if right_verb is None:
            continue
        left = _strip(tokens[:i])
        lead = [t for t in right[:right_verb] if t.lower not in _ADVERBS]
        if not lead:  # "X did A and did B": B shares the subject
            subject = left[:verb]
            to = [k for k in range(verb, len(left) - 1) if left[k].lower == "to" and is_verb(left, k + 1)]
            if to and right[0].lower == right[0].text and not right[0].lower.endswith(("s", "ed", "ing")):
                subject = left[: to[-1] + 1]  # "hopes to build A and take B": "hopes to take B"
            rest = _split_coordination(subject + right)
            return [left] + rest
        if right_verb <= 6 and not any(t.lower in PREPOSITIONS for t in lead[:1]):
            return [left] + _split_coordination(right)
    return [tokens]


def split_clauses(sentence: str) -> list[Clause]:
    """The sentence's clauses, each to be drafted on its own (see the module docstring)."""
    tokens = _strip(tokenize(sentence))
    segments: list[list[Token]] = [[]]
    for t in tokens:
        if t.text == ";":
            segments.append([])
        else:
            segments[-1].append(t)
    clauses: list[Clause] = []
    for segment in (_strip(s) for s in segments):
        if not segment:
            continue
        extra = None
        if segment[0].lower in FRONT_SUBORDINATORS:
            comma = next((i for i, t in enumerate(segment) if t.text == ","), None)
            if comma is not None and first_verb(segment[comma + 1 :], 1) is not None:
                extra = segment[:comma]
                segment = _strip(segment[comma + 1 :])
        main, inserts = _extract_inserts(segment, sentence)
        parts = _split_coordination(_strip(main))
        for k, part in enumerate(parts):
            clauses.append(Clause(tokens=part, extra=extra if k == 0 else None))
        clauses.extend(inserts)
    return clauses


def _conjuncts(subject: list[Token]) -> list[list[Token]]:
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
    parts = [_strip(p) for p in parts if _strip(p)]
    if not any(t.lower in {"and", "&"} for t in subject):
        return [subject]
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
        if verb == len(tokens) or len(_conjuncts(tokens[:verb])) < 2:
            return [[text_of(tokens, sentence)]]
    subject, predicate = tokens[:verb], tokens[verb:]
    while subject and subject[-1].lower in _ADVERBS:  # "X now assisting": the adverb goes with the verb
        predicate = [subject.pop()] + predicate
    if not subject:
        return [[text_of(tokens, sentence)]]
    drafts: list[list[str]] = []
    conjuncts = _conjuncts(subject)
    for conjunct in conjuncts:
        head, place = conjunct, None
        place_at = next((i for i, t in enumerate(conjunct) if t.lower in _SUBJECT_PLACE and i > 0), None)
        if place_at is not None and 1 <= place_at <= 3 and len(conjunct) - place_at >= 2:
            head = conjunct[:place_at]
            place = [text_of(head, sentence), _be(head, _is_past(predicate)), text_of(conjunct[place_at:], sentence)]
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
        if tokens[i].capitalised and i > 0:
            j = i
            items, current = [], []
            while j < len(tokens) and (
                tokens[j].capitalised or tokens[j].text in {",", "and"} or tokens[j].lower == "of"
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
    from ..text import STOPWORDS

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


_ADJUNCT = frozenset(
    [
        "because",
        "after",
        "before",
        "since",
        "while",
        "when",
        "during",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "despite",
        "following",
        "amid",
        "near",
        "over",
    ]
)


def split_adjuncts(predicate: list[Token]) -> list[list[Token]]:
    """A predicate with trailing adjuncts ("slept outdoors because of aftershocks", "joined Real
    Madrid in the summer for £ 23million"): the core up to the first adjunct, then the core with
    each adjunct (one fact each), as Lite3Pyramid's units keep one argument per unit.

    The core must hold a content word after the verb; an adjunct starts at a top-level
    preposition or subordinator (not inside a name: "University of Surrey")."""
    from ..text import STOPWORDS

    verb_end = 0
    while verb_end < len(predicate) and (
        is_verb(predicate, verb_end) or predicate[verb_end].lower in {"to", "not", "n't"} | _ADVERBS
    ):
        verb_end += 1
    starts = [
        i
        for i in range(verb_end + 1, len(predicate))
        if predicate[i].lower in _ADJUNCT and not predicate[i].capitalised and predicate[i - 1].text not in {"'", '"'}
    ]
    if not starts or any(t.text in {"'", '"', "``", "''", ":", "‘", "“"} for t in predicate):
        return [predicate]  # quotations stay whole
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
    pieces = [p for p in (_strip(p) for p in pieces) if len(p) >= 2]
    if not pieces:
        return [predicate]
    return [core] + [core + p for p in pieces]


def _finish(pieces: list[str]) -> str:
    text = " ".join(" ".join(p for p in pieces if p).split())
    text = re.sub(r"\s+([,;:])$", "", text).strip(" ,;:-")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def draft_sentence(sentence: str) -> list[str]:
    """Draft ACUs of one reference sentence, in sentence order, without duplicates."""
    drafts: list[str] = []
    for clause in split_clauses(sentence):
        if clause.words is not None:
            candidates = [clause.words]
        else:
            candidates = split_subject(clause.tokens, sentence)
            if clause.extra:
                extra = text_of(clause.extra, sentence)
                extra = extra[0].lower() + extra[1:]
                candidates = [c + [extra] for c in candidates[:1]] + candidates[1:]
        for pieces in candidates:
            text = _finish(pieces)
            if len(text.split()) >= 2 and text.lower() not in {d.lower() for d in drafts}:
                drafts.append(text)
    if not drafts:
        whole = _finish([sentence])
        return [whole] if whole else []
    return drafts
