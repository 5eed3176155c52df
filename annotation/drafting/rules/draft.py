"""A sentence and a whole reference into drafts: the steps of the package in order."""

from ...text import content_words
from .clauses import is_boilerplate, split_clauses, split_run_on
from .embedded import embedded_clauses
from .predicates import split_subject
from .references import Entities, resolve_references
from .tokens import finish, strip, text_of, tokenize


def draft_sentence(sentence: str, _depth: int = 0) -> list[str]:
    """Draft ACUs of one reference sentence, in sentence order, without duplicates; nothing
    for boilerplate the guidelines leave out."""
    if is_boilerplate(sentence):
        return []
    pieces = split_run_on(sentence) if _depth == 0 else [sentence]
    if len(pieces) > 1:
        drafts: list[str] = []
        for piece in pieces:
            add(drafts, draft_sentence(piece, _depth + 1))
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
        add(drafts, [finish(pieces) for pieces in candidates])
        if clause.words is None and _depth < 2:
            for inner in embedded_clauses(clause.tokens, sentence):
                add(drafts, draft_sentence(inner, _depth + 1))
    if not drafts:
        whole = finish([text_of(strip(tokenize(sentence)), sentence)])
        return [whole] if whole else []
    return drafts


def add(drafts: list[str], new: list[str]) -> None:

    seen = {d.lower() for d in drafts}
    for text in new:
        if len(content_words(text)) >= 2 and text.lower() not in seen:  # a fact needs two content words
            drafts.append(text)
            seen.add(text.lower())


# Heads of a noun phrase that names a person by role ("the Welshman", "German boss", "the 62-year-old").
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
        add(drafts, facts)
        out.append(drafts)
    return out
