"""Two objects joined by "and" give one clause each ("They submerged coins and notes in agar":
"... coins in agar", "... notes in agar"), where the parse makes it a plain coordination:

- the first noun is the verb's object, complement or the object of a preposition of the verb
  (not a noun inside another noun's phrase: "men with guns and executioner ...");
- exactly two nouns, joined by "and" alone, nothing of the first's after it, only a prepositional
  phrase of its own after the second, no "both"/"between"/"among", not two names ("for Hampstead and Kilburn" is one
  constituency), no quotation;
- words before the first noun that may modify both ("her looks and social status", "low rates and
  inflation") stay shared: the coordination is left whole unless the second noun has its own
  determiner or possessive, or the first has no modifier at all;
- not after a verb that needs both at once (met, married, mixed, compared, linked ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .spans import quoted, subtree

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

OBJECTS = {"dobj", "attr", "pobj"}
NOUNS = {"NOUN", "PROPN"}
TOGETHER = {"between", "among", "amongst", "both", "either", "neither"}
COLLECTIVE = {
    "met", "meet", "meets", "married", "marry", "marries", "mixed", "mix", "mixes", "combined", "combine",
    "combines", "compared", "compare", "compares", "merged", "merge", "merges", "linked", "link", "links",
    "split", "splits", "shared", "share", "shares", "connected", "connect", "connects", "joined", "join",
    "joins", "separated", "separate", "separates", "divided", "divide", "divides", "swapped", "swap", "swaps",
}  # fmt: skip


def attached_to(noun: Token, verb: Token) -> bool:
    if noun.dep_ == "pobj":
        return noun.head.dep_ in {"prep", "agent"} and noun.head.head == verb
    return noun.head == verb


def own_words(noun: Token, second: Token) -> bool:
    """Nothing of the first noun's after it but "and" and the second noun; after the second, only
    its own prepositional phrase ("a member of the house"), no clause that may be both nouns'
    ("phones and tablets that do n't last a day")."""
    rights = [t for t in noun.rights if t.dep_ not in {"cc", "conj"}]
    return not rights and all(t.dep_ == "prep" for t in second.rights)


def determiners_shared(noun: Token, second: Token) -> bool:
    own = any(t.dep_ in {"det", "poss"} for t in second.lefts)
    return bool(list(noun.lefts)) and not own


def plain_pair(doc: Doc, noun: Token, verb: Token) -> Token | None:
    """The second noun of a plain coordination of two nouns at `noun` (see the module), or None."""
    conjuncts = [t for t in noun.children if t.dep_ == "conj"]
    if len(conjuncts) != 1 or not attached_to(noun, verb):
        return None
    second = conjuncts[0]
    cc = [t for t in noun.children if t.dep_ in {"cc", "preconj"}]
    if [t.text.lower() for t in cc] != ["and"] or cc[0].i != second.left_edge.i - 1:
        return None
    if noun.pos_ not in NOUNS or second.pos_ not in NOUNS or noun.pos_ == second.pos_ == "PROPN":
        return None
    if not own_words(noun, second) or determiners_shared(noun, second) or quoted(doc, subtree(noun)):
        return None
    return second


def split_objects(doc: Doc, verb: Token, ids: set[int]) -> list[set[int]] | None:
    """The clause `ids` once per noun of its first plain coordination of two objects, or None."""
    if verb.text.lower() in COLLECTIVE or any(doc[i].text.lower() in TOGETHER for i in ids):
        return None
    for noun in (doc[i] for i in sorted(ids)):
        if noun.dep_ not in OBJECTS:
            continue
        second = plain_pair(doc, noun, verb)
        if second is not None:
            cc = {t.i for t in noun.children if t.dep_ == "cc"}
            first = subtree(noun) - subtree(second) - cc
            return [ids - subtree(second) - cc, ids - first - cc]
    return None
