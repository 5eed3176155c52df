"""Tokens and the small helpers every step uses: verbs, quotation depth, the text of a token run."""

import re
from dataclasses import dataclass
from functools import lru_cache

from .inflections import getAllInflections, getAllLemmas
from .lexicon import AUXILIARIES, COORDINATORS, DETERMINERS, NOT_VERBS, PREPOSITIONS, VERBS
from .words import CLOSING, NAME_WORD, PAST, PRONOUNS, QUOTES, TOKEN


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
    return [Token(m.group(), m.start(), m.end(), i) for i, m in enumerate(TOKEN.finditer(sentence))]


def name_inside(tokens: list[Token], i: int) -> bool:
    """tokens[i] is capitalised inside the sentence (not first, not after a quote or a colon) and
    no auxiliary: a name."""
    token = tokens[i]
    return token.capitalised and i > 0 and tokens[i - 1].text not in {'"', "``", ":"} and token.lower not in AUXILIARIES


def is_verb(tokens: list[Token], i: int) -> bool:
    """A verb reading of tokens[i]: from the lexicon (or an -ed form), not after a determiner,
    and not a capitalised word inside the sentence (a name)."""
    token = tokens[i]
    word = token.lower
    if word in NOT_VERBS or token.number:
        return False
    if name_inside(tokens, i):
        return False
    if word == "'s":  # "it 's" is "it is"; "Nasr 's selfie" a possessive
        return i > 0 and tokens[i - 1].lower in {"it", "he", "she", "that", "there", "what", "who", "here", "this"}
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
        return i > 0 and (previous in {"he", "she", "it"} or NAME_WORD.match(tokens[i - 1].text) is not None)
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


def first_verb(tokens: list[Token], start: int = 1) -> int | None:
    """The first verb from `start`; a verb right after a pronoun inside a longer subject
    ("45 children she cares for were ...") opens a reduced relative clause and is passed over,
    and so is a base form right before a past or present verb ("The massive cut required": a noun)."""
    for i in range(start, len(tokens)):
        if is_verb(tokens, i):
            word, nxt = tokens[i].lower, tokens[i + 1].lower if i + 1 < len(tokens) else ""
            if verb_form(word) == "VBZ" and word not in AUXILIARIES and nxt in {"were", "are", "have"}:
                continue  # "Air strikes were launched": a plural noun before its verb
            if (
                word not in AUXILIARIES
                and verb_form(word) is None
                and (nxt in {"was", "were", "is", "are", "has", "have", "had"} or verb_form(nxt) in {"VBD", "VBZ"})
                and is_verb(tokens, i + 1)
            ):
                continue
            if i >= 2 and tokens[i - 1].lower in PRONOUNS and tokens[i].lower not in AUXILIARIES:
                later = next((j for j in range(i + 1, len(tokens)) if is_verb(tokens, j)), None)
                # "45 children she cares for were forced": the subject's own verb is an auxiliary;
                # "Later in the program he hoarded ... Fallon brought out": "he" is the subject
                if later is not None and tokens[later].lower in AUXILIARIES:
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


def strip(tokens: list[Token]) -> list[Token]:
    """Without leading/trailing commas, coordinators and the closing full stop; a closing quote
    mark goes only when its quotation did not open inside the tokens (quotes stay balanced)."""
    tokens = list(tokens)
    while tokens and (tokens[-1].text in CLOSING | {",", ";", ":", "-", "--"} or tokens[-1].lower in COORDINATORS):
        if tokens[-1].text in QUOTES and sum(t.text in QUOTES for t in tokens) % 2 == 0:
            break
        tokens.pop()
    while tokens and (tokens[0].text in {",", ";", ":", "-", "--"} or tokens[0].lower in COORDINATORS):
        tokens.pop(0)
    return tokens


def finite(tokens: list[Token], i: int) -> bool:
    """tokens[i] is a finite verb: an auxiliary (not the "'s" of a possessive) or a past or
    third-person form, not right after "to"."""
    t = tokens[i]
    if t.lower == "'s" or not is_verb(tokens, i) or i > 0 and tokens[i - 1].lower == "to":
        return False
    if t.lower in {"be", "been", "being"}:
        return False  # "before being cut off": no finite verb
    return t.lower in AUXILIARIES or verb_form(t.lower) in {"VBD", "VBZ"} or same_past(t.lower)


@lru_cache(maxsize=10_000)
def same_past(word: str) -> bool:
    """A verb whose past is its base form ("put", "cut", "hit", "set"): after a subject it is finite."""
    return word.isalpha() and word in getAllInflections(word, "VERB").get("VBD", ())


def quotes_balanced(text: str) -> bool:
    """An even number of quote marks standing as tokens ("' hot , deep kiss '"; not the "'s" of a
    possessive nor the apostrophe inside "don't")."""
    return sum(t.text in QUOTES for t in tokenize(text)) % 2 == 0


def noun_phrase_before(tokens: list[Token], end: int) -> list[Token]:
    """The phrase just before position `end`: back to the previous verb or clause mark."""
    start = end
    while (
        start > 0
        and tokens[start - 1].text not in {",", ";"}
        and (tokens[start - 1].lower == "'s" or not is_verb(tokens, start - 1))
    ):
        start -= 1
    return tokens[start:end]


def be(subject: list[Token], past: bool) -> str:
    plural = len(subject) > 0 and (
        any(t.lower == "and" for t in subject)
        or (subject[-1].lower.endswith("s") and (not subject[-1].capitalised or subject[-1].index == 0))
    )
    if past:
        return "were" if plural else "was"
    return "are" if plural else "is"


def is_past(tokens: list[Token]) -> bool:
    v = first_verb(tokens, 0)
    return v is not None and (tokens[v].lower in PAST or tokens[v].lower.endswith("ed"))


def quote_depths(tokens: list[Token]) -> list[int]:
    """1 for a token inside a quotation (between an opening and a closing quote mark), else 0."""
    depth, out = 0, []
    for t in tokens:
        if t.text in QUOTES:
            depth = 1 - depth
            out.append(1)
        else:
            out.append(depth)
    return out


def finish(pieces: list[str]) -> str:
    text = " ".join(" ".join(p for p in pieces if p).split())
    text = re.sub(r"\s+([,;:])$", "", text).strip(" ,;:-")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
