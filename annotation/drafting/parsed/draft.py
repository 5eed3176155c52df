"""A sentence and a whole reference into drafts: the parse finds the simple sentences, the rules
draft each (adjuncts, subject lists, reports, names carried within the reference)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

from ...language.lexicon import OTHER_PREPOSITIONS, PREPOSITIONS
from ..rules.clauses import is_boilerplate
from ..rules.draft import add, draft_reference, draft_sentence
from ..rules.references import Entities, resolve_references
from .adjuncts import TIME_NOUNS
from .clauses import simple_sentences


def draft_parsed_sentence(sentence: str, doc: Doc) -> list[str]:
    """The rules' drafts of each simple sentence the parse `doc` of `sentence` shows; the rules'
    drafts of the whole sentence where the parse splits nothing or is unusual."""
    simple = simple_sentences(doc)
    if simple is None:
        return draft_sentence(sentence)
    drafts: list[str] = []
    for text in simple:
        add(drafts, draft_sentence(text + " ."))
    return drafts or draft_sentence(sentence)


def draft_parsed_reference(sentences: list[str], nlp: Language) -> list[list[str]]:
    """Draft a whole reference as the rules do (`rules.draft_reference`: names carried from
    sentence to sentence, the facts they reveal, tidying), each sentence through its parse. The
    sentences as the rules will read them (names resolved) are parsed first, in one batch."""
    known = Entities(names=[])
    resolved = [resolve_references(s, known)[0] for s in sentences if not is_boilerplate(s)]
    resolved = [s for s in resolved if may_split(s)]
    docs = dict(zip(resolved, nlp.pipe(resolved), strict=True))
    return draft_reference(sentences, lambda s: draft_parsed_sentence(s, docs[s]) if s in docs else draft_sentence(s))


def may_split(sentence: str) -> bool:
    """The sentence has what a split needs (a comma, "and"/"but", or two prepositions or time
    nouns): the others are not parsed (the parser's time is most of the drafter's)."""
    words = sentence.lower().split()
    heads = sum(w in PREPOSITIONS or w in OTHER_PREPOSITIONS or w in TIME_NOUNS for w in words)
    return "," in words or "and" in words or "but" in words or heads >= 2
