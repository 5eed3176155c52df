"""A parsed sentence into the simple sentences it states, where the parse leaves no doubt.

`simple_sentences(doc)` returns the texts of the sentence's clauses and facts, or None when the
parse is unusual or splits nothing (the caller keeps the sentence whole for the rules). Three
transformations, each only where the structure is unambiguous, never inside a quotation:

- a comma-set relative clause whose relative pronoun is its subject ("The minister , who was
  sacked in 2019 , praised the judge") leaves the sentence and becomes a sentence of its own
  about the noun it modifies ("The minister was sacked in 2019");
- a comma-set apposition of a name ("Ronnie Carroll , a singer , died") leaves the sentence and
  becomes an "X is Y" fact ("Ronnie Carroll is a singer");
- verbs conjoined in the main predicate ("was arrested and charged with murder") give one
  sentence each, the second with the subject (and the auxiliary, when both verbs have the form it
  governs) of the first; not when a word before the first verb (a fronted adjunct, a negation) or
  after the last conjunct may modify both, nor when the first verb has nothing after it and the
  second an object (a shared object: "bought and sold shares").

Adverbial clauses, infinitives and complements ("rose 5% as prices fell", "pressured officials
to change the rating") stay with their verb.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .adjuncts import split_adjuncts
from .coordination import split_objects
from .spans import noun_phrase, quoted, set_off, subtree, text_of

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

SUBJECTS = {"nsubj", "nsubjpass"}
AUXILIARIES = {"aux", "auxpass"}
RELATIVE_PRONOUNS = {"who", "which", "that"}
NON_FINITE = {"VBN", "VB", "VBG"}
FINITE = {"VBD", "VBZ", "VBP"}
JOINING = {"and", "but"}  # "could stay or leave" states neither
OPENING = {"nsubj", "nsubjpass", "aux", "auxpass"}  # the only words allowed before a split verb


def relative_fact(doc: Doc, clause: Token) -> tuple[set[int], str] | None:
    """A comma-set relative clause with its relative pronoun as subject: the words it takes out
    of the sentence and its sentence about the noun it modifies."""
    noun = clause.head
    pronoun = next((t for t in clause.children if t.dep_ in SUBJECTS), None)
    words = subtree(clause)
    if noun.pos_ not in {"NOUN", "PROPN"} or pronoun is None or pronoun.text.lower() not in RELATIVE_PRONOUNS:
        return None
    if pronoun.i != min(words) or noun.i != pronoun.i - 2 or quoted(doc, words):
        return None
    removed, phrase = set_off(doc, words), noun_phrase(noun)
    if removed is None or phrase is None or quoted(doc, phrase):
        return None
    return removed, text_of(doc, phrase | (words - {pronoun.i}))


def apposition_fact(doc: Doc, apposition: Token) -> tuple[set[int], str] | None:
    """A comma-set apposition of a name ("Ronnie Carroll , a singer ,") with its own determiner
    or possessive: the words it takes out of the sentence and the "X is Y" fact."""
    name = apposition.head
    words = subtree(apposition)
    if name.pos_ != "PROPN" or apposition.pos_ != "NOUN" or name.i != min(words) - 2:
        return None
    if not any(t.dep_ in {"det", "poss"} and t.i == min(words) for t in apposition.children) or quoted(doc, words):
        return None
    removed, phrase = set_off(doc, words), noun_phrase(name)
    if removed is None or phrase is None or quoted(doc, phrase):
        return None
    verb = "are" if name.tag_ == "NNPS" else "is"
    return removed, f"{text_of(doc, phrase)} {verb} {text_of(doc, words)}"


def deps(tokens, names: set[str]) -> list[Token]:
    return [t for t in tokens if t.dep_ in names]


def joined(verb: Token, conjunct: Token) -> bool:
    """The conjunct is a verb joined to the main verb by the "and" or "but" right before it (never
    "or": "could stay or leave" states neither), with nothing
    but adverbs, subject and auxiliaries of its own before it ("suspected it had value and experts
    have ...": "and" joins "value" and "experts" in the parse, not the verbs)."""
    lead = [t for t in conjunct.lefts if t.dep_ not in {"cc", "punct", "advmod"} | SUBJECTS | AUXILIARIES]
    cc = [t for t in verb.rights if t.dep_ == "cc" and t.i == conjunct.left_edge.i - 1 and t.text.lower() in JOINING]
    return not lead and bool(cc) and conjunct.pos_ in {"VERB", "AUX"}


def shared_words(verb: Token, conjunct: Token, kept: set[int]) -> set[int] | None:
    """What a conjunct without a subject takes from the main verb: the subject, and the
    auxiliaries when the conjunct has the form they govern ("was arrested and charged")."""
    subject = subtree(deps(verb.children, SUBJECTS)[0]) & kept
    auxiliaries = {t.i for t in deps(verb.lefts, AUXILIARIES)}
    if deps(conjunct.children, AUXILIARIES):
        return None  # an auxiliary of its own and no subject: the parse has likely missed one
    if conjunct.tag_ in FINITE and not auxiliaries:
        return subject
    if auxiliaries and conjunct.tag_ in NON_FINITE and conjunct.tag_ == verb.tag_:
        return subject | auxiliaries
    return None


def conjunct_ids(verb: Token, conjunct: Token, kept: set[int]) -> set[int] | None:
    """The words of the sentence a verb conjoined to the main verb states, or None."""
    if not joined(verb, conjunct):
        return None
    if deps(conjunct.children, SUBJECTS):
        return subtree(conjunct) & kept
    shared = shared_words(verb, conjunct, kept)
    return None if shared is None else shared | (subtree(conjunct) & kept)


def plain_main_clause(doc: Doc, verb: Token, kept: set[int], conjuncts: list[Token]) -> bool:
    """One subject and only auxiliaries before the verb (no fronted adjunct, no negation), nothing
    of the verb's after its last conjunct, no quotation, and no object both verbs may share
    ("bought and sold shares")."""
    before = [t for t in verb.lefts if t.i in kept]
    if len(deps(before, SUBJECTS)) != 1 or min(kept) != verb.left_edge.i:
        return False
    if any(t.dep_ not in OPENING for t in before) or quoted(doc, kept):
        return False
    end = max(t.right_edge.i for t in conjuncts)
    if any(t.i > end and t.dep_ != "punct" for t in verb.rights):
        return False
    own = [t for t in verb.rights if t.dep_ not in {"conj", "cc", "punct"} and t.i < conjuncts[0].left_edge.i]
    return bool(own) or bool(deps(verb.lefts, {"auxpass"})) or not deps(conjuncts[0].children, {"dobj"})


def split_conjoined(doc: Doc, verb: Token, kept: set[int]) -> list[tuple[Token, set[int]]] | None:
    """The main clause (the words `kept`) as one clause per conjoined verb (with its verb), or None."""
    conjuncts = deps(verb.rights, {"conj"})
    if not conjuncts or not plain_main_clause(doc, verb, kept, conjuncts):
        return None
    clauses = [(c, conjunct_ids(verb, c, kept)) for c in conjuncts]
    if any(ids is None for _, ids in clauses):
        return None
    end = max(t.right_edge.i for t in conjuncts)
    between = {t.i for t in deps(verb.rights, {"cc", "punct"}) if t.i < end}
    first = kept - set().union(*(subtree(c) for c in conjuncts)) - between
    return [(verb, first)] + [(c, ids) for c, ids in clauses if ids is not None]


def taken_out(doc: Doc, token: Token) -> tuple[set[int], str] | None:
    if token.dep_ == "relcl":
        return relative_fact(doc, token)
    if token.dep_ == "appos":
        return apposition_fact(doc, token)
    return None


def simple_sentences(doc: Doc) -> list[str] | None:
    """The sentences a parsed sentence states, or None when it is kept whole (see the module)."""
    roots = [t for t in doc if t.dep_ == "ROOT"]
    if len(roots) != 1 or roots[0].pos_ not in {"VERB", "AUX"}:
        return None
    kept = {t.i for t in doc}
    facts = []
    for token in doc:
        found = taken_out(doc, token)
        if found and found[0] <= kept:
            kept -= found[0]
            facts.append(found[1])
    clauses = split_conjoined(doc, roots[0], kept) or [(roots[0], kept)]
    sentences = []
    for verb, ids in clauses:
        for words in split_objects(doc, verb, ids) or [ids]:
            sentences += split_adjuncts(doc, verb, words) or [text_of(doc, words)]
    if not facts and len(sentences) == 1:
        return None
    return sentences + facts
