"""Step 6: non-finite adjuncts as finite sentences of their own; where complement clauses start."""

from ...language.inflections import getAllLemmas, getInflection
from ...language.lexicon import (
    AUXILIARIES,
    CARDINALS,
    COORDINATORS,
    DETERMINERS,
    ORDINAL_NUMBER,
    ORDINALS,
    PREPOSITIONS,
    RELATIVES,
)
from ...language.tokens import Token, be, first_verb, is_past, is_verb, quote_depths, strip, text_of, verb_form
from ...language.words import (
    ADJUNCT,
    ADVERBS,
    COUNTS,
    DESCRIBING,
    FACTIVE,
    INDEFINITE,
    LOWER_FIRST,
    NONFINITE_LEAD,
    NOUN_OPENERS,
    PARTICLES,
    PRONOUNS,
    QUOTES,
    REPORTING,
    SUBORDINATORS,
    WH_WORDS,
)
from ...text import STOPWORDS

# Closed classes of the lexicon and the rules' lists: never the noun an adjective describes.
NOT_NOUNS = (
    STOPWORDS
    | DETERMINERS
    | PREPOSITIONS
    | ADJUNCT
    | INDEFINITE
    | RELATIVES
    | COORDINATORS
    | SUBORDINATORS
    | PRONOUNS
    | WH_WORDS
    | PARTICLES
    | ADVERBS
    | COUNTS
    | CARDINALS
    | ORDINALS
    | LOWER_FIRST
    | DESCRIBING
)


def past_tense(word: str, plural: bool) -> str:
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


def nonfinite_at(tokens: list[Token], i: int) -> bool:
    """tokens[i] leads a non-finite adjunct whose event happened: "after winning", "despite being",
    "since joining", "while playing", "when breastfeeding". Never "before"/"without" (the event may
    not have happened: "died before finishing", "left without paying") nor a "to" infinitive (a
    purpose or an order is not a fact: "pressured officials to change the rating")."""
    if i + 1 >= len(tokens) or tokens[i + 1].capitalised:
        return False
    t, nxt = tokens[i].lower, tokens[i + 1].lower
    if t in NONFINITE_LEAD:
        return verb_form(nxt) == "VBG" or nxt in {"being", "having"}
    return False


def complement_at(tokens: list[Token], i: int) -> int | None:
    """Where the complement clause of a factive verb at tokens[i] starts ("revealed she was",
    "found that the hedge was"): the verb states its complement is true, so the complement is a
    fact of the reference. Verbs of saying, claiming or thinking ("claims", "denied", "think")
    do not: their complement stays inside the clause. The complement needs "that" or an
    auxiliary for its verb ("discovered the reptile 's crushed body" has no clause)."""
    if tokens[i].lower not in FACTIVE or not is_verb(tokens, i):
        return None
    that = i + 1 < len(tokens) and tokens[i + 1].lower == "that"
    j = i + 1 + that
    rest = tokens[j:]
    if len(rest) < 3 or not rest[0].text.isalnum() or rest[0].lower in PREPOSITIONS or rest[0].lower == "to":
        return None
    inner = first_verb(rest, 1)
    if inner is None or inner > 8 or any(t.text in {",", "'s"} or t.text in QUOTES for t in rest[: inner + 1]):
        return None
    if not that and rest[inner].lower not in AUXILIARIES:
        return None
    return j


def embedded_start(tokens: list[Token], verb_end: int, quoted: list[int]) -> int | None:
    for i in range(max(verb_end - 1, 0), len(tokens) - 1):
        if quoted[i]:
            continue
        if i >= verb_end and nonfinite_at(tokens, i):
            return i
        if i < verb_end + 2 and complement_at(tokens, i) is not None:
            return i + 1
    return None


def embedded_clauses(tokens: list[Token], sentence: str) -> list[str]:
    """Facts inside one clause as sentences of their own: a non-finite adjunct whose event happened
    ("after winning The Open last year", "despite being jailed for life") with the clause's
    subject and a finite verb: "McIlroy won The Open last year.". (A complement clause stays in
    its clause: alone, even a factive one, "the driver was drunk" of "police revealed that the
    driver was drunk", it would be that clause less some words, a cumulative draft.)"""
    verb = first_verb(tokens)
    if verb is None or verb == 0:
        return []
    subject = strip(tokens[:verb])
    subject_text = text_of(subject, sentence)
    plural = be(subject, False) == "are"
    quoted = quote_depths(tokens)
    out = []
    for i in range(verb, len(tokens) - 1):
        if quoted[i]:
            continue
        if i > verb and nonfinite_at(tokens, i):
            end = next(
                (k for k in range(i + 2, len(tokens)) if tokens[k].text in {",", ";"} or nonfinite_at(tokens, k)),
                len(tokens),
            )
            rest = text_of(strip(tokens[i + 2 : end]), sentence)
            if rest:
                out.append(f"{subject_text} {past_tense(tokens[i + 1].text, plural)} {rest}")
            continue
    return out


def second_verb_group(tokens: list[Token], verb: int) -> bool:
    """An auxiliary or finite verb after the verb group at tokens[verb]: a clause inside the clause."""
    group = verb
    while group < len(tokens) and is_verb(tokens, group):
        group += 1
    return any(
        is_verb(tokens, k) and (tokens[k].lower in AUXILIARIES or verb_form(tokens[k].lower) in {"VBD", "VBZ"})
        for k in range(group, len(tokens))
    )


def may_be_noun(word: str) -> bool:
    """`word` (lower case) may name a thing: not a number, an ordinal ("an impressive fourth",
    "1st"), a word of a closed class (a determiner, pronoun, preposition, adverb of the lists,
    "former"), nor a word lemminflect's lexicon knows only as another part of speech ("new",
    "same", "quickly", "enough"); a word it does not know may be a noun ("selfie")."""
    if not word.isalpha() or word in NOT_NOUNS or ORDINAL_NUMBER.match(word):
        return False
    readings = getAllLemmas(word)
    return not readings or "NOUN" in readings


def single_noun(tokens: list[Token], i: int) -> bool:
    """tokens[i] is a plain lower-case noun, not the first of a compound ("huge hedge fund")."""
    noun = tokens[i]
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if noun.capitalised or is_verb(tokens, i) or not may_be_noun(noun.lower):
        return False
    return not (
        after is not None
        and after.text.isalpha()
        and not after.capitalised
        and after.lower not in PREPOSITIONS | {"and", "but", "or", "that", "which", "who"}
        and not is_verb(tokens, i + 1)
    )


def modifier_facts(tokens: list[Token], sentence: str) -> list[str]:
    """A describing adjective of a noun as a fact of its own, as experts write them ("their huge
    hedge" -> "The hedge was huge.", "a momentary drop in blood pressure" -> "The drop was
    momentary."): only adjectives of a short list that describe whatever they modify (never
    "former", "alleged", "social": "the former minister" is no "minister was former"), before a
    single noun, in a clause with one verb group (not inside what someone claims or says) and
    outside quotations."""
    verb = first_verb(tokens, 0)
    if verb is None:
        return []
    if second_verb_group(tokens, verb):
        return []
    past = tokens[verb].lower in {"was", "were", "had"} or verb_form(tokens[verb].lower) == "VBD"
    quoted = quote_depths(tokens)
    out = []
    for i in range(len(tokens) - 1):
        adjective, noun = tokens[i], tokens[i + 1]
        opened = i == 0 or tokens[i - 1].lower in NOUN_OPENERS  # "Ornate bed , now on display , was made"
        if quoted[i] or adjective.lower not in DESCRIBING or not opened:
            continue
        if not single_noun(tokens, i + 1):
            continue
        plural = noun.lower.endswith("s") and not noun.lower.endswith("ss")
        copula = ("were" if plural else "was") if past else ("are" if plural else "is")
        out.append(f"The {noun.text} {copula} {adjective.lower}")
    return out


# Verbs whose object may not exist ("wanted a car which ..."): no fact about it.
INTENSIONAL = frozenset(
    ["want", "need", "seek", "look", "hope", "plan", "expect", "try", "search", "wish", "ask", "demand", "require"]
)


def lemma(word: str) -> str:
    return (getAllLemmas(word, "VERB").get("VERB") or (word,))[0]


HEDGES = frozenset(["not", "n't", "never", "no", "would", "could", "might", "may", "will", "should", "if", "must"])


def relative_antecedent(tokens: list[Token], i: int) -> int | None:
    """Where the noun phrase a restrictive relative at tokens[i] ("which", "that", "who") speaks
    of starts: one to three lower-case words after "a"/"an" ("a charity ball which raised"), or
    a single noun after a preposition ("in footage that went viral"); else None."""
    k = i - 1
    while k >= 0 and i - k <= 3 and tokens[k].text.isalpha() and not tokens[k].capitalised:
        if tokens[k].lower in {"a", "an"} or tokens[k].lower in PREPOSITIONS:
            break
        if tokens[k].lower in STOPWORDS or is_verb(tokens, k):
            return None
        k -= 1
    if k < 0 or k == i - 1 or not (tokens[k].lower in {"a", "an"} or tokens[k].lower in PREPOSITIONS):
        return None
    noun = tokens[i - 1].lower
    if tokens[k].lower in PREPOSITIONS and (i - k != 2 or noun.endswith("s")):
        return None  # "for people who need it": a bare plural is anyone of a kind, no one in particular
    return k + 1


def passive_at(tokens: list[Token], verb: int) -> bool:
    """ "was" + a past participle at tokens[verb] ("was seen")."""
    return verb + 1 < len(tokens) and verb_form(tokens[verb + 1].lower) in {"VBD", "VBN"}


def relative_facts(tokens: list[Token], sentence: str) -> list[str]:
    """A restrictive relative clause in the past ("attended a charity ball which raised £ 400,000",
    "in footage that went viral") as a fact of its own: "The charity ball raised £ 400,000.". Only
    of a particular thing (after "a"/"an" or a preposition with a single noun), with the verb right
    after the relative word, in a clause that asserts (no "not", modal, "if", verb of saying) and
    outside quotations; the relative clause runs to the next comma."""
    quoted = quote_depths(tokens)
    if any(t.lower in HEDGES or t.lower in REPORTING for t in tokens):
        return []
    verb = first_verb(tokens, 0)
    if verb is None or not is_past(tokens) or lemma(tokens[verb].lower) in INTENSIONAL:
        return []  # "wants a car which was built in Italy": the car may not exist
    if tokens[verb].lower in {"was", "were"} and not passive_at(tokens, verb):
        return []  # "He was a friend who lived nearby": the friend is no one new
    out = []
    for i in range(2, len(tokens) - 2):
        if quoted[i] or tokens[i].lower not in {"which", "that", "who"}:
            continue
        start = relative_antecedent(tokens, i)
        verb = tokens[i + 1]
        if start is None or not (verb.lower in {"was", "were", "had"} or verb_form(verb.lower) == "VBD"):
            continue
        end = next(
            (k for k in range(i + 2, len(tokens)) if tokens[k].text in {",", ";"} or tokens[k].text in QUOTES),
            len(tokens),
        )
        rest = strip(tokens[i + 1 : end])
        if len(rest) >= 2:
            out.append(f"The {text_of(tokens[start:i], sentence)} {text_of(rest, sentence)}")
    return out
