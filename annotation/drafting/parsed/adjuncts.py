"""One draft per adjunct of a parsed clause: the clause's core (subject, verb, objects, particle,
complement) with each of its adjuncts in turn, where the parse shows two or more and nothing else
after the verb ("ESPN suspended the reporter for a week amid investigation" gives "... for a
week" and "... amid investigation"; the core alone is never a draft: guideline 2).

An adjunct is a prepositional phrase, an agent ("by ...") or a time noun phrase ("last week")
attached to the verb. Not split: a clause with a negation (its scope could change), a clause,
infinitive or participle after the verb ("rose 5% as prices fell" stays whole), a comma after
the verb, a quotation, a focus word on the verb ("only", "never": its scope could change), and a
preposition that may be the verb's argument ("to", "into", "from", "for", ...: the phrases after the
verb may be what it needs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .spans import quoted, subtree, text_of

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

CORE = {"dobj", "dative", "prt", "acomp", "attr", "oprd", "advmod", "punct", "cc", "conj"}
ARGUMENT_PREPOSITIONS = {"to", "into", "onto", "as", "of", "than", "like", "from", "with", "about", "for"}
TIME_NOUNS = {
    "week", "weeks", "month", "months", "year", "years", "day", "days", "weekend", "night", "morning",
    "afternoon", "evening", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "season", "hour", "hours", "minute", "minutes",
}  # fmt: skip
BE_FORMS = {"be", "is", "are", "was", "were", "been", "being", "am", "'s", "'re"}
FOCUS = {"only", "just", "even", "never", "also", "still", "almost", "nearly", "barely", "hardly", "not"}


def adjunct(token: Token) -> bool:
    if token.dep_ == "agent":
        return True
    if token.dep_ == "prep":
        return any(t.dep_ in {"pobj", "pcomp"} for t in token.children)
    return token.dep_ == "npadvmod" and token.text.lower() in TIME_NOUNS


def argument(token: Token) -> bool:
    """A prepositional phrase that may complete the verb's meaning: it stays in the core."""
    return token.dep_ == "prep" and token.text.lower() in ARGUMENT_PREPOSITIONS


def copula(verb: Token) -> bool:
    """A form of "be": its prepositional phrase may be the predicate itself ("has been on death row
    in Bali since 2012": "on death row" is no adjunct), so its clause is never split."""
    return verb.text.lower() in BE_FORMS or verb.lemma_ == "be"


def left_alone(doc: Doc, verb: Token, ids: set[int]) -> bool:
    """A negation or focus word on the verb, a quotation, or a comma after the verb."""
    if any(t.dep_ == "neg" or t.text.lower() in FOCUS for t in verb.children):
        return True  # "has only been bettered six times at the Masters": "only" scopes over both
    return quoted(doc, ids) or any(doc[i].text == "," for i in ids if i > verb.i)


def split_adjuncts(doc: Doc, verb: Token, ids: set[int]) -> list[str] | None:
    """The clause `ids` (of the verb `verb`) once per adjunct, or None when it is not split."""
    after = [t for t in verb.rights if t.i in ids]
    adjuncts = [t for t in after if adjunct(t)]
    others = [t for t in after if t not in adjuncts and t.dep_ not in CORE]
    if copula(verb) or len(adjuncts) < 2 or others or any(argument(t) for t in adjuncts) or left_alone(doc, verb, ids):
        return None
    spans = [subtree(t) & ids for t in adjuncts]
    return [text_of(doc, ids - set().union(*(s for s in spans if s is not own))) for own in spans]
