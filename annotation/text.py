"""Plain text helpers: word counts, sentence splitting and unit-to-sentence attachment."""

import re
import unicodedata
from functools import lru_cache

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE_TAG = re.compile(r"<t>(.*?)</t>", re.DOTALL)
_ALNUM = re.compile(r"[^\W_]", re.UNICODE)  # a letter or a digit

# Forms of "be" and "have", the modal verbs and the common prepositions: function words here, and
# the drafter's auxiliaries and prepositions (annotation/language/lexicon.py) start from them.
BE_HAVE = ("is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had")
PREPOSITIONS = (
    "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "onto", "over", "under", "about", "after",
    "before", "during", "since", "until",
)  # fmt: skip
MODALS = ("will", "would", "shall", "should", "can", "could", "may", "might", "must")

# Function words carry no content; attaching a unit to a sentence by them would be noise.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "nor",
        *PREPOSITIONS,
        "as",
        "than",
        "then",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        *BE_HAVE,
        "having",
        "do",
        "does",
        "did",
        *MODALS,
        "it",
        "its",
        "it's",
        "he",
        "she",
        "they",
        "them",
        "their",
        "his",
        "her",
        "him",
        "we",
        "us",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "not",
        "no",
        "so",
        "if",
        "who",
        "whom",
        "whose",
        "which",
        "what",
        "when",
        "where",
        "why",
        "how",
        "also",
        "just",
        "very",
        "s",
        "t",
    ]
)


# An ACU is one short fact (RoSE's are a dozen words): longer text is refused where ACUs are
# saved (editor autosave, services, admin through the model's validator, imports).
MAX_ACU_CHARS = 1000
_LINE_BREAK = re.compile(r"\r\n?|\n")


def clean_acu_text(text: str, name: str = "") -> str:
    """An ACU's text as typed: ends trimmed, line breaks (an ACU is one line) made spaces, and
    every other character kept (no-break spaces, U+202F, U+2028, tabs). Raises ValueError with
    a message for the author on a control character, a lone surrogate or text over MAX_ACU_CHARS;
    `name` says which ACU it is ("ACU 3 of sentence 2", the editor's name of the field)."""
    text = _LINE_BREAK.sub(" ", str(text)).strip()
    if len(text) > MAX_ACU_CHARS:
        raise ValueError(
            f"{name or 'An ACU'} is {len(text):,} characters long; at most {MAX_ACU_CHARS:,} are allowed. "
            "Split it into shorter facts."
        )
    for i, ch in enumerate(text):
        category = unicodedata.category(ch)
        if (category == "Cc" and ch != "\t") or category == "Cs":
            raise ValueError(
                f"{name or 'The ACU'} “{text[:40]}” holds a control character (U+{ord(ch):04X} at character {i + 1}); "
                "remove it and save again."
            )
    return text


MAX_COMMENT_CHARS = 4000  # a reviewer's or lead's comment (the writer reads it whole above the editor)


def clean_comment_text(text: str, empty: str = "A comment cannot be empty.") -> str:
    """A review comment as typed: ends trimmed, Windows line ends made plain ones, tabs and line breaks kept. Raises ValueError
    with a message for the reviewer when it is longer than MAX_COMMENT_CHARS or holds another control
    character or a lone surrogate (PostgreSQL stores no NUL), and with `empty` when nothing is left."""
    text = str(text).replace("\r\n", "\n").strip()
    if not text:
        raise ValueError(empty)
    if len(text) > MAX_COMMENT_CHARS:
        raise ValueError(f"A comment is {len(text):,} characters long; at most {MAX_COMMENT_CHARS:,} are allowed.")
    refuse_control_characters(text, "A comment")
    return text


def refuse_control_characters(text: str, what: str) -> None:
    """A person's free text (a comment, guidelines) keeps tabs and line breaks; any other control character,
    or a lone surrogate, is refused with a message naming `what` (PostgreSQL stores no NUL)."""
    for ch in text:
        if (unicodedata.category(ch) == "Cc" and ch not in "\t\n\r") or unicodedata.category(ch) == "Cs":
            raise ValueError(f"{what} cannot hold control characters (U+{ord(ch):04X}).")


def word_count(text: str) -> int:
    """Words as whitespace-separated tokens: the |s| and |r| of the normalized ACU score,
    counted on the text as given (never on a re-split; scoring.md, "Refinements")."""
    return len(text.split())


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS}


def has_sentence_tags(text: str) -> bool:
    return bool(_SENTENCE_TAG.search(text))


def reference_sentences(text: str) -> list[str]:
    """The sentences of a pyramid-format reference line: its <t> ... </t> sentences when it has
    them, else the sentence splitter's (``split_sentences``)."""
    return split_tagged_sentences(text) if has_sentence_tags(text) else split_sentences(text.strip())


def split_tagged_sentences(text: str) -> list[str]:
    """Sentences of a pyramid-format reference: each wrapped in <t> ... </t>; a tagged piece
    without a letter or digit is merged into its neighbour, as ``split_sentences`` does."""
    pieces = [" ".join(s.split()) for s in _SENTENCE_TAG.findall(text) if s.strip()]
    return merge_fragments(" ".join(pieces), pieces)  # a "<t> . </t>" joins the sentence before it


@lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def merge_fragments(text: str, pieces: list[str]) -> list[str]:
    """``pieces`` (consecutive parts of ``text``) with every piece that has no letter or digit
    (a lone closing quote, a dash) joined to the piece before it, or to the next one when it
    comes first. Joined pieces are cut from ``text`` itself, so its spacing is kept (``'flattering.'``
    stays one word); whitespace is then collapsed."""
    spans: list[list] = []
    pos = 0
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        start = text.find(piece, pos)
        if start < 0:  # not verbatim (should not happen with clean=False): keep the piece alone
            spans.append([None, None, piece])
            continue
        spans.append([start, start + len(piece), piece])
        pos = start + len(piece)
    merged: list[list] = []
    for span in spans:
        fragment = not _ALNUM.search(span[2])
        target = merged[-1] if merged and (fragment or not _ALNUM.search(merged[-1][2])) else None
        if target is None:
            merged.append(list(span))
        elif target[0] is not None and span[0] is not None:
            target[1] = span[1]
            target[2] = text[target[0] : target[1]]
        else:
            target[2] = f"{target[2]} {span[2]}"
    return [" ".join(m[2].split()) for m in merged]


def line_sentences(text: str) -> list[str]:
    """One sentence per line of the text, as our RoSE export writes a reference (a line without a
    letter or digit is merged into its neighbour). Only line breaks end a line: str.splitlines
    also cuts at U+2028, U+0085 (a cp1252 "…" read as Latin-1, common in news text), form feeds
    and other separators inside a sentence."""
    return merge_fragments(text, [line for line in _LINE_BREAK.split(text) if line.strip()])


def split_sentences(text: str) -> list[str]:
    """Sentences of a plain reference: one per line where it has line breaks (RoSE's CNN/DM
    records), otherwise split by pysbd's rule-based sentence boundary detection. pysbd may cut
    off trailing punctuation (``as 'flattering.'`` gives a lone ``'``): a piece without a letter
    or digit is merged into its neighbour (``merge_fragments``), so every sentence has content
    and the words of the sentences are the words of the text."""
    if "\n" in text.strip():
        return line_sentences(text)
    return merge_fragments(text, [s for piece in _pieces(text) for s in _segmenter().segment(piece)])


# pysbd's time grows faster than the text (a 200 KB paragraph took 11 s): longer paragraphs are
# cut at sentence punctuation first (then at spaces, then anywhere) into pieces of at most this
# many characters, each segmented on its own. Shorter paragraphs are segmented exactly as before.
SPLIT_PIECE = 2000
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")


def _cut(text: str, sep: re.Pattern) -> list[str]:
    pieces, current = [], ""
    for part in sep.split(text):
        if current and len(current) + len(part) + 1 > SPLIT_PIECE:
            pieces.append(current)
            current = part
        else:
            current = f"{current} {part}" if current else part
    if current:
        pieces.append(current)
    return pieces


def _pieces(text: str) -> list[str]:
    if len(text) <= SPLIT_PIECE:
        return [text]
    out = []
    for piece in _cut(text, _SENTENCE_END):
        if len(piece) <= SPLIT_PIECE:
            out.append(piece)
            continue
        for smaller in _cut(piece, re.compile(r"\s+")):
            out.extend(smaller[i : i + SPLIT_PIECE] for i in range(0, len(smaller), SPLIT_PIECE))
    return out


def attach_units_to_sentences(units: list[str], sentences: list[str]) -> list[int]:
    """For each unit, the index of the sentence it overlaps most in content words.

    Ties and units without overlap go to the previous unit's sentence when it is among the
    best (units are written in reference order), otherwise to the earliest best sentence.
    """
    sentence_words = [content_words(s) or set(words(s)) for s in sentences]
    attached: list[int] = []
    previous = 0
    for unit in units:
        unit_words = content_words(unit) or set(words(unit))
        overlaps = [len(unit_words & sw) for sw in sentence_words]
        best = max(overlaps)
        candidates = [i for i, o in enumerate(overlaps) if o == best]
        choice = previous if previous in candidates else candidates[0]
        attached.append(choice)
        previous = choice
    return attached
