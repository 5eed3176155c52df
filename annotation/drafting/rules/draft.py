"""A sentence and a whole reference into drafts: the steps of the package in order."""

from collections.abc import Callable

from ...language.tokens import finish, quotes_balanced, strip, text_of, tokenize
from ...language.words import QUOTES
from ...text import content_words
from .clauses import split_clauses, split_run_on, without_furniture
from .embedded import embedded_clauses, modifier_facts, relative_facts
from .lists import place_facts
from .predicates import split_subject
from .references import Entities, kin_facts, resolve_references


def draft_sentence(sentence: str, _depth: int = 0) -> list[str]:
    """Draft ACUs of one reference sentence, in sentence order, without duplicates; nothing
    for boilerplate the guidelines leave out, and no page-furniture label ("READ : ...")."""
    sentence = without_furniture(sentence)
    if not sentence:
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
        if clause.words is None and _depth == 0:
            add(drafts, [finish([fact]) for fact in modifier_facts(clause.tokens, sentence)])
            add(drafts, [finish([fact]) for fact in relative_facts(clause.tokens, sentence)])
    if not drafts:
        whole = finish([text_of(strip(tokenize(sentence)), sentence)])
        drafts = [whole] if whole else []
    return tidy(drafts, sentence) if _depth == 0 else drafts


def tidy(drafts: list[str], sentence: str) -> list[str]:
    """The drafts a writer may accept as they are: quotes balanced (a draft that cut a quotation
    goes; a quote mark the sentence itself leaves open is dropped), and no draft that another
    draft repeats with a modifier ("X carded an eagle" beside "X carded an eagle on the 18th
    hole": the longer one stays, guideline 2)."""
    balanced = quotes_balanced(sentence)
    kept = []
    for text in drafts:
        if not quotes_balanced(text):
            if balanced:
                continue
            tokens = tokenize(text)
            stray = [i for i, t in enumerate(tokens) if t.text in QUOTES and not possessive(tokens, i)]
            if stray:
                text = finish([text_of(tokens[: stray[-1]] + tokens[stray[-1] + 1 :], text)])
        kept.append(text)
    words = [d.lower().rstrip(".!?").split() for d in kept]
    out = []
    for i, text in enumerate(kept):
        if not any(j != i and inserted(words[i], words[j]) for j in range(len(kept))):
            out.append(text)
    return out


def possessive(tokens, i: int) -> bool:
    """tokens[i] is the apostrophe of a plural possessive ("Red Wings ' Drew Miller", "artists '
    entrance"), not a quote mark."""
    return (
        tokens[i].text == "'"
        and 0 < i < len(tokens) - 1
        and tokens[i - 1].lower.endswith("s")
        and tokens[i - 1].text.isalpha()
        and tokens[i + 1].text.isalpha()
    )


def inserted(short: list[str], long: list[str]) -> bool:
    """`long` is `short` with words inserted at one place (before, inside or after it)."""
    if len(short) >= len(long):
        return False
    head = 0
    while head < len(short) and short[head] == long[head]:
        head += 1
    tail = len(short) - head
    return short[head:] == long[len(long) - tail :]


def add(drafts: list[str], new: list[str]) -> None:

    seen = {d.lower() for d in drafts}
    for text in new:
        if len(content_words(text)) >= 2 and text.lower() not in seen:  # a fact needs two content words
            drafts.append(text)
            seen.add(text.lower())


def draft_reference(sentences: list[str], draft: Callable[[str], list[str]] = draft_sentence) -> list[list[str]]:
    """Draft ACUs of a whole reference, sentence by sentence: each sentence drafted (by `draft`,
    `draft_sentence` unless another drafter reuses these steps) after its mentions are resolved
    against the names met before (`resolve_references`)."""
    known = Entities(names=[])
    out = []
    for sentence in sentences:
        sentence = without_furniture(sentence)
        if not sentence:
            out.append([])
            continue
        resolved, facts = resolve_references(sentence, known)
        drafts = draft(resolved)
        add(drafts, facts)
        add(drafts, [finish([fact]) for fact in place_facts(tokenize(resolved), resolved)])
        add(drafts, kin_facts(tokenize(resolved), resolved))
        out.append(tidy(drafts, resolved))
    return out
