"""The `rules` drafter: the units an expert writes for a reference, by rules over word lists, no model.

`draft_reference(sentences)` drafts a whole reference sentence by sentence; `draft_sentence` one
sentence. Each step is a plain function:

1. `is_boilerplate`: page furniture the guidelines leave out ("CLICK HERE for ...") gives no unit;
2. `resolve_references`: a name met earlier in the reference replaces "he"/"she", a role ("The
   Welshman", "German boss"), a surname alone ("Adam", "Mr Carroll") or a title before a name, and
   stands in for the missing subject of a headline ("Came up with idea ..."); the "X is Y" facts this
   reveals, and those of a role written before a name ("single mother Gina Michelle"), are units;
3. `split_run_on`: a run-on sentence is cut where a new one starts without punctuation (after a
   closing quote, at "The"/"He" after a word, at a comma splice);
4. `tokenize` and `split_clauses`: ";", a fronted subordinate clause, comma-set relative clauses and
   appositions (their antecedent repeated as subject), "and"/"but" with a verb on the right;
5. `split_subject`, `split_entity_lists`, `split_word_pairs`, `split_adjuncts`: one unit per subject
   conjunct, per listed name or year, per noun of a pair, per adjunct (the core, then the verb with
   each adjunct; a long object is repeated only beside a single adjunct);
6. `embedded_clauses`: a non-finite clause ("after winning X", "despite being jailed", "to show")
   and the complement of a verb of saying ("claims she shared ...") become finite units, drafted in turn.

Runs of capitalised words and numbers are never cut, nor quotations. Verbs come from the word lists
in `lexicon` and lemminflect's lexicon of English word forms (shipped in its package; it also gives
"won" for "winning"). When no verb is found the sentence is one draft.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from lemminflect import getAllInflections, getAllLemmas, getInflection

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
    [
        "now",
        "also",
        "still",
        "already",
        "just",
        "then",
        "later",
        "recently",
        "reportedly",
        "allegedly",
        "currently",
        "only",
        "finally",
        "eventually",
        "even",
        "never",
        "again",
        "previously",
        "initially",
        "subsequently",
    ]
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
    if len(word) > 4 and word.endswith("ed") and word.isalpha():
        return True
    form = verb_form(word)
    if form == "VBZ":  # "she returns", "Apple plans": only right after a pronoun or a name
        return i > 0 and (previous in {"he", "she", "it"} or _NAME_WORD.match(tokens[i - 1].text) is not None)
    return form in {"VBD", "VBN", "VBG"} and not token.capitalised


@lru_cache(maxsize=50_000)
def verb_form(word: str) -> str | None:
    """The Penn tag of an inflected verb form from lemminflect's lexicon (VBD, VBN, VBG, VBZ), or None:
    "winning" is VBG of "win", "drove" VBD of "drive"; base forms and nouns give None."""
    if not word.isalpha() or len(word) < 3:
        return None
    lemmas = getAllLemmas(word, "VERB").get("VERB")
    if not lemmas or lemmas[0] == word:
        return None
    forms = getAllInflections(lemmas[0], "VERB")
    for tag in ("VBD", "VBN", "VBG", "VBZ"):
        if word in forms.get(tag, ()):
            return tag
    return None


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
            nominal = head.lower in DETERMINERS or (
                head.capitalised and len(inner) >= 2 and not any(t.lower == "and" for t in inner)
            )
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
    if (
        len(parts) == 2
        and len(parts[0]) == 1
        and len(parts[1]) == 2
        and all(_NAME_WORD.match(t.text) for t in subject if t.text != "and")
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
        "by",
        "under",
        "against",
        "without",
        "across",
        "through",
        "into",
        "toward",
        "towards",
    ]
)


_TIME_WORDS = frozenset(
    [
        "year",
        "week",
        "month",
        "night",
        "season",
        "summer",
        "winter",
        "spring",
        "autumn",
        "weekend",
        "morning",
        "evening",
        "afternoon",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "century",
        "decade",
        "time",
    ]
)
_QUOTES = frozenset(["'", '"', "``", "''", "‘", "’", "“", "”"])


def _quote_depths(tokens: list[Token]) -> list[int]:
    """1 for a token inside a quotation (between an opening and a closing quote mark), else 0."""
    depth, out = 0, []
    for t in tokens:
        if t.text in _QUOTES:
            depth = 1 - depth
            out.append(1)
        else:
            out.append(depth)
    return out


def _adjunct_start(tokens: list[Token], i: int) -> bool:
    t = tokens[i]
    if t.capitalised:
        return False
    if t.lower == "by" and i > 0 and (verb_form(tokens[i - 1].lower) or tokens[i - 1].lower.endswith("ed")):
        return False  # "sold by Porto": the agent of a participle belongs to it
    if t.lower in _ADJUNCT:
        return True
    nxt = tokens[i + 1].lower if i + 1 < len(tokens) else ""
    return t.lower in {"last", "this", "next"} and (nxt in _TIME_WORDS or nxt == "coming")


def _strip_piece(tokens: list[Token]) -> list[Token]:
    """`_strip`, keeping a closing quote mark whose quotation opened inside the piece."""
    stripped = _strip(tokens)
    if sum(t.text in _QUOTES for t in stripped) % 2:
        closing = next((t for t in tokens[len(stripped) :] if t.text in _QUOTES), None)
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
    from ..text import STOPWORDS

    verb_end = 0
    while verb_end < len(predicate) and (
        is_verb(predicate, verb_end)
        or predicate[verb_end].lower in {"not", "n't"} | _ADVERBS
        or predicate[verb_end].lower == "to"
        and verb_end + 1 < len(predicate)
        and is_verb(predicate, verb_end + 1)
    ):
        verb_end += 1
    quoted = _quote_depths(predicate)
    starts = [i for i in range(verb_end + 1, len(predicate)) if not quoted[i] and _adjunct_start(predicate, i)]
    # a non-finite adjunct ("after winning ...") or a complement clause is drafted by
    # `embedded_clauses`: the adjuncts end there
    stop = _embedded_start(predicate, verb_end, quoted)
    if stop is not None and _complement_at(predicate, stop - 1) is not None:
        return [predicate]  # "claims she shared a kiss in Vegas": the claim stays whole
    if stop is not None:
        predicate = _strip(predicate[:stop])
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
    pieces = [p for p in (_strip_piece(p) for p in pieces) if len(p) >= 2]
    if not pieces:
        return [predicate]
    verb_only = core[:verb_end]
    copula = all(t.lower in AUXILIARIES | {"not", "n't"} | _ADVERBS for t in verb_only)
    # a short object stays, and so does a long one beside a single adjunct ("approved the new
    # housing plan on Monday", not the bare "approved on Monday": bench/RESULTS.md, issue 30)
    head = core if copula or len(core) - verb_end <= 2 or len(pieces) == 1 else verb_only
    return [core] + [head + p for p in pieces]


def _finish(pieces: list[str]) -> str:
    text = " ".join(" ".join(p for p in pieces if p).split())
    text = re.sub(r"\s+([,;:])$", "", text).strip(" ,;:-")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


_BOILERPLATE = re.compile(
    r"^\W*(click here|scroll down|read more|see more|for more|follow us|watch the video|share this|"
    r"sign up|subscribe|download the|like us on|do you know more|contact us|to see more)\b",
    re.IGNORECASE,
)


def is_boilerplate(sentence: str) -> bool:
    """A reference sentence the guidelines leave out ("CLICK HERE for all the latest Chelsea
    news.", "Scroll down for video"): page furniture, not a fact of the summary."""
    return bool(_BOILERPLATE.search(sentence))


_NEW_SENTENCE = frozenset(["The", "He", "She", "They", "It", "His", "Her", "Their", "A", "An", "But", "This", "These"])


def split_run_on(sentence: str) -> list[str]:
    """A run-on sentence cut where a new sentence starts without punctuation: after a closing
    quote followed by a capitalised word ("... ' bleeding ' East of England ambulance service
    warned ..."), or at a capitalised "The"/"He"/"She"... right after a word ("... last year The
    Welshman ..."), when both sides have a verb of their own."""
    tokens = tokenize(sentence)
    quoted = _quote_depths(tokens)
    cuts = [0]
    for i in range(2, len(tokens) - 2):
        t, before = tokens[i], tokens[i - 1]
        closing = before.text in _QUOTES and quoted[i] == 0 and t.capitalised
        if before.text == "," and _NAME_WORD.match(t.text) and t.text not in _NEW_SENTENCE and not quoted[i]:
            # a comma splice: ", Bobby Zamora made it three" after a clause of its own
            k = i
            while k < len(tokens) and _NAME_WORD.match(tokens[k].text) and k - i < 3:
                k += 1
            spliced = k < len(tokens) and (verb_form(tokens[k].lower) == "VBD" or tokens[k].lower in _PAST)
            if spliced and first_verb(tokens[cuts[-1] : i - 1], 1) is not None:
                cuts.append(i)
                continue
        fresh = t.text in _NEW_SENTENCE and before.text.isalnum() and before.lower not in DETERMINERS | PREPOSITIONS
        if not (closing or fresh) or tokens[i - 2].text in {":", ","}:
            continue
        left, right = tokens[cuts[-1] : i], tokens[i:]
        if first_verb(left, 1) is not None and first_verb(right, 1) is not None and len(right) >= 3:
            cuts.append(i)
    if len(cuts) == 1:
        return [sentence]
    bounds = cuts + [len(tokens)]
    return [sentence[tokens[a].start : tokens[b - 1].end] for a, b in zip(bounds, bounds[1:], strict=False)]


_NONFINITE_LEAD = frozenset(["after", "before", "despite", "while", "since", "without", "when"])
_SAY = frozenset(
    [
        "say",
        "says",
        "said",
        "claim",
        "claims",
        "claimed",
        "insist",
        "insists",
        "insisted",
        "believe",
        "believes",
        "believed",
        "think",
        "thinks",
        "thought",
        "reveal",
        "reveals",
        "revealed",
        "warn",
        "warns",
        "warned",
        "admit",
        "admits",
        "admitted",
        "deny",
        "denies",
        "denied",
        "fear",
        "fears",
        "feared",
        "announce",
        "announces",
        "announced",
        "confirm",
        "confirms",
        "confirmed",
        "suggest",
        "suggests",
        "suggested",
        "argue",
        "argues",
        "argued",
        "explain",
        "explains",
        "explained",
        "show",
        "shows",
        "showed",
        "found",
        "find",
        "finds",
        "discovered",
        "know",
        "knew",
        "realised",
        "realized",
    ]
)
_SUBJECT_PRONOUNS = frozenset(["he", "she", "they", "it", "i", "we"])


def _past(word: str, plural: bool) -> str:
    """The past tense of a verb form ("winning" -> "won", "being" -> "was")."""
    lower = word.lower()
    if lower == "being":
        return "were" if plural else "was"
    if lower == "having":
        return "had"
    lemmas = getAllLemmas(lower, "VERB").get("VERB")
    if not lemmas:
        return word
    past = getInflection(lemmas[0], "VBD")
    return past[0] if past else word


def _nonfinite_at(tokens: list[Token], i: int) -> bool:
    """tokens[i] leads a non-finite adjunct: "after winning", "despite being", "to show" after an object."""
    if i + 1 >= len(tokens) or tokens[i + 1].capitalised:
        return False
    t, nxt = tokens[i].lower, tokens[i + 1].lower
    if t in _NONFINITE_LEAD:
        return verb_form(nxt) == "VBG" or nxt in {"being", "having"}
    if t == "to" and i >= 2 and tokens[i - 1].text.isalnum() and not is_verb(tokens, i - 1):
        return nxt in VERBS and getAllLemmas(nxt, "VERB").get("VERB", ("",))[0] == nxt  # "to show"
    return False


def _complement_at(tokens: list[Token], i: int) -> int | None:
    """Where the complement clause of a verb of saying at tokens[i] starts, if it has its own
    subject and verb ("claims she shared", "said that the hedge was")."""
    if tokens[i].lower not in _SAY or not is_verb(tokens, i):
        return None
    j = i + 1 + (i + 1 < len(tokens) and tokens[i + 1].lower == "that")
    rest = tokens[j:]
    if len(rest) < 3 or not rest[0].text.isalnum() or rest[0].lower in PREPOSITIONS or rest[0].lower == "to":
        return None
    inner = first_verb(rest, 1)
    if inner is None or inner > 8 or any(t.text == "," for t in rest[:inner]):
        return None
    return j


def _embedded_start(tokens: list[Token], verb_end: int, quoted: list[int]) -> int | None:
    for i in range(max(verb_end - 1, 0), len(tokens) - 1):
        if quoted[i]:
            continue
        if i >= verb_end and _nonfinite_at(tokens, i):
            return i
        if i < verb_end + 2 and _complement_at(tokens, i) is not None:
            return i + 1
    return None


def embedded_clauses(tokens: list[Token], sentence: str) -> list[str]:
    """Facts inside one clause as sentences of their own:

    - a non-finite adjunct ("after winning The Open last year", "despite being jailed for life")
      with the clause's subject and a finite verb: "McIlroy won The Open last year.";
    - the complement of a verb of saying or thinking with its own subject and verb ("claims she
      shared a kiss" -> "she shared a kiss"), a subject pronoun replaced by the clause's subject
      when that is a name."""
    verb = first_verb(tokens)
    if verb is None or verb == 0:
        return []
    subject = _strip(tokens[:verb])
    subject_text = text_of(subject, sentence)
    plural = _be(subject, False) == "are"
    named = all(t.capitalised for t in subject if t.text.isalpha())
    quoted = _quote_depths(tokens)
    out = []
    for i in range(verb, len(tokens) - 1):
        if quoted[i]:
            continue
        if i > verb and _nonfinite_at(tokens, i):
            end = next(
                (k for k in range(i + 2, len(tokens)) if tokens[k].text in {",", ";"} or _nonfinite_at(tokens, k)),
                len(tokens),
            )
            rest = text_of(_strip(tokens[i + 2 : end]), sentence)
            if rest:
                out.append(f"{subject_text} {_past(tokens[i + 1].text, plural)} {rest}")
            continue
        j = _complement_at(tokens, i) if i - verb <= 2 else None
        if j is not None:
            rest = _strip(tokens[j:])
            words = [text_of(rest, sentence)]
            if rest[0].lower in {"he", "she"} and named and subject and subject[-1].text not in _NOT_SURNAMES:
                words = [subject_text, text_of(rest[1:], sentence)]
            out.append(" ".join(words))
            break
    return out


def draft_sentence(sentence: str, _depth: int = 0) -> list[str]:
    """Draft ACUs of one reference sentence, in sentence order, without duplicates; nothing
    for boilerplate the guidelines leave out."""
    if is_boilerplate(sentence):
        return []
    pieces = split_run_on(sentence) if _depth == 0 else [sentence]
    if len(pieces) > 1:
        drafts: list[str] = []
        for piece in pieces:
            _add(drafts, draft_sentence(piece, _depth + 1))
        return drafts
    drafts = []
    for clause in split_clauses(sentence):
        if clause.words is not None:
            candidates = [clause.words]
        else:
            candidates = split_subject(clause.tokens, sentence)
            if clause.extra:
                extra = text_of(clause.extra, sentence)
                extra = extra[0].lower() + extra[1:]
                candidates = [c + [extra] for c in candidates[:1]] + candidates[1:]
        _add(drafts, [_finish(pieces) for pieces in candidates])
        if clause.words is None and _depth < 2:
            for inner in embedded_clauses(clause.tokens, sentence):
                _add(drafts, draft_sentence(inner, _depth + 1))
    if not drafts:
        whole = _finish([text_of(_strip(tokenize(sentence)), sentence)])
        return [whole] if whole else []
    return drafts


def _add(drafts: list[str], new: list[str]) -> None:
    from ..text import content_words

    seen = {d.lower() for d in drafts}
    for text in new:
        if len(content_words(text)) >= 2 and text.lower() not in seen:  # a fact needs two content words
            drafts.append(text)
            seen.add(text.lower())


# Heads of a noun phrase that names a person by role ("the Welshman", "German boss", "the 62-year-old").
_PERSON_NOUNS = frozenset(
    [
        "boss",
        "manager",
        "coach",
        "star",
        "player",
        "striker",
        "midfielder",
        "forward",
        "defender",
        "goalkeeper",
        "keeper",
        "captain",
        "winger",
        "ace",
        "actor",
        "actress",
        "singer",
        "model",
        "mother",
        "father",
        "wife",
        "husband",
        "girlfriend",
        "boyfriend",
        "girl",
        "boy",
        "teen",
        "teenager",
        "prisoner",
        "officer",
        "president",
        "minister",
        "leader",
        "chief",
        "owner",
        "driver",
        "pilot",
        "victim",
        "suspect",
        "attorney",
        "doctor",
        "nurse",
        "pensioner",
        "grandmother",
        "grandfather",
        "daughter",
        "son",
        "champion",
        "winner",
        "international",
        "legend",
        "veteran",
        "candidate",
        "chef",
        "presenter",
        "host",
        "reporter",
        "journalist",
        "businessman",
        "businesswoman",
        "billionaire",
        "millionaire",
        "founder",
        "director",
        "chairman",
        "golfer",
        "boxer",
        "cricketer",
        "footballer",
        "rider",
        "runner",
        "youngster",
        "star",
        "dominatrix",
        "student",
        "teacher",
        "musician",
        "rapper",
        "politician",
        "senator",
        "governor",
        "mayor",
        "general",
        "soldier",
        "killer",
        "gunman",
        "man",
        "woman",
    ]
)
_INDEFINITE = frozenset(
    ["a", "an", "one", "another", "some", "two", "three", "several", "many", "his", "her", "their", "its", "our"]
)
_TITLES = frozenset(["Mr", "Mrs", "Ms", "Miss", "Dr", "Sir", "Dame", "Lord", "Lady"])
# Last words of names that are not people: a surname alone is never expanded to these.
_NOT_SURNAMES = frozenset(
    [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "City",
        "United",
        "Street",
        "Road",
        "League",
        "Cup",
        "Championship",
        "Club",
        "Park",
        "Church",
        "House",
        "Palace",
        "Council",
        "Party",
        "Office",
        "University",
        "Airport",
        "Station",
        "Hospital",
        "Court",
        "Police",
        "Service",
        "Times",
        "News",
        "Motors",
        "Award",
        "Open",
        "Prize",
        "Games",
        "Square",
        "Bridge",
        "Hall",
        "Centre",
        "Center",
        "Museum",
        "School",
        "College",
        "Group",
        "Bank",
    ]
)
_NAME_WORD = re.compile(r"^[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)*$|^Mc[A-Z][a-z]+$|^[A-Z][a-z]*[A-Z][a-z]+$")


def _person_head(tokens: list[Token]) -> bool:
    head = tokens[-1].lower
    return head in _PERSON_NOUNS or (head.endswith(("man", "woman")) and len(head) > 5) or head == "old"


def _names_in(tokens: list[Token]) -> list[str]:
    """Runs of two or three name-like words ("Charlie Adam", "Rory McIlroy") in the tokens."""
    runs, current = [], []
    for t in tokens + [Token("", 0, 0, -1)]:
        if _NAME_WORD.match(t.text) and t.lower not in DETERMINERS and t.text not in _NEW_SENTENCE:
            current.append(t)
            continue
        if 2 <= len(current) <= 3:
            runs.append(" ".join(x.text for x in current))
        current = []
    return runs


@dataclass
class Entities:
    """What a reference has named so far: full names (for "Adam" -> "Charlie Adam") and the last
    person named as a subject (for "he", "she", "the Welshman")."""

    names: list[str]
    person: str | None = None


def _role_facts(tokens: list[Token], sentence: str, known: Entities) -> list[str]:
    """ "X is Y" facts of a role written before a name inside the sentence ("Stoke City ace Charlie
    Adam" -> "Charlie Adam is Stoke City ace", "single mother Gina Michelle" -> "Gina Michelle is
    single mother")."""
    from ..text import STOPWORDS

    facts = []
    for i in range(1, len(tokens) - 1):
        t = tokens[i]
        if t.capitalised or t.lower not in _PERSON_NOUNS or not _NAME_WORD.match(tokens[i + 1].text):
            continue
        end = i + 1
        while end < len(tokens) and _NAME_WORD.match(tokens[end].text) and end - i <= 3:
            end += 1
        start = i
        while start > 0 and start > i - 3:
            before = tokens[start - 1]
            if (
                before.capitalised
                and _NAME_WORD.match(before.text)
                and start - 1 > 0
                or (
                    before.text.isalpha()
                    and not before.capitalised
                    and before.lower not in STOPWORDS
                    and not is_verb(tokens, start - 1)
                )
            ):
                start -= 1
            else:
                break
        name = " ".join(x.text for x in tokens[i + 1 : end])
        name = next((n for n in reversed(known.names) if n.endswith(" " + name)), name)
        facts.append(_finish([name, "is", text_of(tokens[start : i + 1], sentence)]))
    return facts


def resolve_references(sentence: str, known: Entities) -> tuple[str, list[str]]:
    """The sentence with its subject named (a pronoun, a role description or a surname replaced by
    the full name met before in the reference) and the "X is Y" facts this reveals ("German boss
    has enjoyed success" -> "Jurgen Klopp has enjoyed success", "Jurgen Klopp is German boss")."""
    tokens = tokenize(sentence)
    facts: list[str] = []
    replace: dict[int, tuple[int, str]] = {}  # start token -> (end token, text)
    verb = first_verb(tokens)
    subject = _strip(tokens[:verb]) if verb else []
    while subject and subject[-1].lower in _ADVERBS:
        subject = subject[:-1]
    if subject and known.person:
        first = subject[0]
        if len(subject) == 1 and first.lower in {"he", "she"}:
            replace[0] = (1, known.person)
        elif (
            len(subject) <= 6
            and _person_head(subject)
            and first.lower not in _INDEFINITE | FRONT_SUBORDINATORS | PREPOSITIONS
            and (not first.number or subject[-1].lower == "old")
            and not any(t.text == "," or t.lower in {"and", "of", "'s"} for t in subject)
        ):
            description = text_of(subject, sentence)
            if first.lower not in DETERMINERS:
                description = description[0].lower() + description[1:] if first.lower in _PERSON_NOUNS else description
            facts.append(_finish([known.person, "is", description]))
            replace[subject[0].index] = (subject[-1].index + 1, known.person)
    if (
        subject
        and subject[0].lower in _PERSON_NOUNS
        and len(subject) >= 2
        and all(_NAME_WORD.match(t.text) for t in subject[1:])
    ):  # "Midfielder Adam", "Candidate Lynne Abraham"
        name = " ".join(t.text for t in subject[1:])
        name = next((n for n in reversed(known.names) if n.endswith(" " + name)), name)
        if len(name.split()) >= 2:
            facts.append(_finish([name, "is", "a", subject[0].lower]))
            replace[subject[0].index] = (subject[-1].index + 1, name)
    if (
        known.person
        and len(tokens) > 2
        and (tokens[0].lower in VERBS or verb_form(tokens[0].lower) in {"VBD", "VBN"})
        and (tokens[0].lower not in AUXILIARIES or tokens[0].lower in {"was", "is", "has", "had", "were"})
        and not tokens[1].capitalised
        and not is_verb(tokens, 1)
        and not any(tokens[0].text in n.split() for n in known.names)
        and not sentence.rstrip().endswith("?")
    ):  # a headline without its subject ("Came up with idea ...", "Referred to ..."): the person it is about
        replace[0] = (1, known.person + " " + tokens[0].lower)
    if len(tokens) > 3 and tokens[2].text == ":" and all(_NAME_WORD.match(t.text) for t in tokens[:2]):
        replace[0] = (3, "")  # "Tim Stanley : Buhari won ...": the speaker's label goes
    for t in tokens:  # a surname alone gets its first name back
        if t.index in replace or any(a <= t.index < b for a, (b, _) in replace.items()):
            continue
        if not _NAME_WORD.match(t.text):
            continue
        before = tokens[t.index - 1].text if t.index else ""
        after = tokens[t.index + 1].text if t.index + 1 < len(tokens) else ""
        titled = before in _TITLES
        if (_NAME_WORD.match(before) and not titled) or _NAME_WORD.match(after) or t.text in _NOT_SURNAMES:
            continue
        full = next(
            (n for n in reversed(known.names) if n.endswith(" " + t.text) and n.split()[0] not in _TITLES), None
        )
        if full:
            replace[t.index - titled] = (t.index + 1, full)
    facts.extend(_role_facts(tokens, sentence, known))
    out, pos = [], 0
    for start in sorted(replace):
        end, text = replace[start]
        out.append(sentence[pos : tokens[start].start])
        out.append(text)
        pos = tokens[end - 1].end
    out.append(sentence[pos:])
    resolved = "".join(out)
    # what this sentence names: its full names, and its subject when that is a name
    new_tokens = tokenize(resolved)
    for name in _names_in(new_tokens):
        if name not in known.names:
            known.names.append(name)
    v = first_verb(new_tokens)
    head = _strip(new_tokens[:v]) if v else []
    if head and all(_NAME_WORD.match(t.text) for t in head) and len(head) <= 3:
        known.person = " ".join(t.text for t in head)
    elif head and head[0].lower not in _SUBJECT_PRONOUNS:
        lead = _names_in(head)
        if lead and not any(t.lower in {"and", "&"} for t in head):
            known.person = lead[0]
    return resolved, facts


def draft_reference(sentences: list[str]) -> list[list[str]]:
    """Draft ACUs of a whole reference, sentence by sentence: each sentence drafted after its
    mentions are resolved against the names met before (`resolve_references`)."""
    known = Entities(names=[])
    out = []
    for sentence in sentences:
        if is_boilerplate(sentence):
            out.append([])
            continue
        resolved, facts = resolve_references(sentence, known)
        drafts = draft_sentence(resolved)
        _add(drafts, facts)
        out.append(drafts)
    return out
