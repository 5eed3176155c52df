"""Word sets of a parsed sentence: their text, a word's subtree, quotation, commas around."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

QUOTES = {'"', "``", "''", "'", "‘", "’", "“", "”"}


def text_of(doc: Doc, ids: set[int]) -> str:
    """The words at `ids` in sentence order, with the sentence's spacing (a space across a gap),
    without punctuation at either end."""
    order = sorted(ids)
    parts = []
    for k, i in enumerate(order):
        gap = k + 1 < len(order) and order[k + 1] != i + 1
        parts.append(doc[i].text + (doc[i].whitespace_ or (" " if gap else "")))
    return "".join(parts).strip().strip(" ,;:-.")


def subtree(token: Token) -> set[int]:
    return {t.i for t in token.subtree}


def quoted(doc: Doc, ids: set[int]) -> bool:
    """A quote mark in the words or around them: a transformation there could break a quotation."""
    depth, inside = 0, False
    for t in doc:
        if t.text in QUOTES and not (t.text == "'" and t.i > 0 and doc[t.i - 1].text.endswith("s") and t.tag_ == "POS"):
            depth = 1 - depth
            inside = inside or t.i in ids
        elif t.i in ids and depth:
            inside = True
    return inside


def set_off(doc: Doc, ids: set[int]) -> set[int] | None:
    """The words with the commas that set them off ("X , who ... , V": both commas; a comma
    before and the sentence's end after), or None when they are not comma-set."""
    first, last = min(ids), max(ids)
    if first == 0 or doc[first - 1].text != ",":
        return None
    after = doc[last + 1] if last + 1 < len(doc) else None
    if after is None or after.text in {".", "!", "?"}:
        return ids | {first - 1}
    if after.text == ",":
        return ids | {first - 1, last + 1}
    return None


def noun_phrase(noun: Token) -> set[int] | None:
    """The noun with the words before it that it governs ("the former minister")."""
    ids = {t.i for t in noun.lefts for t in t.subtree} | {noun.i}
    if max(ids) != noun.i or len(ids) != noun.i - min(ids) + 1:
        return None
    return ids
