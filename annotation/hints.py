"""Atomicity hints for ACU authors: advice shown while typing, never a block.

Plain functions over texts, so the editor (through the save response) and the tests use
the same rules.
"""

import re
from statistics import median

from .text import content_words, words

USUAL_ACU_WORDS = 7  # RoSE's ACUs are short facts; used when a dataset has none yet
_JOINER = re.compile(r"\b(and|but)\b", re.IGNORECASE)


def usual_length(acu_texts: list[str]) -> float:
    lengths = [len(words(t)) for t in acu_texts if t.strip()]
    return float(median(lengths)) if lengths else float(USUAL_ACU_WORDS)


def joins_two_facts(text: str) -> str | None:
    """The joining word when 'and'/'but' links two parts that could each stand alone
    (three or more content words on both sides); 'and' inside a short noun phrase passes."""
    for match in _JOINER.finditer(text):
        left, right = text[: match.start()], text[match.end() :]
        if len(content_words(left)) >= 3 and len(content_words(right)) >= 3:
            return match.group(1).lower()
    return None


def similarity(a: str, b: str) -> float:
    wa, wb = content_words(a) or set(words(a)), content_words(b) or set(words(b))
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def reference_hints(sentences: list[tuple[str, list[str]]], usual_words: float) -> dict:
    """Hints for one reference: `sentences` is [(sentence text, [ACU texts])] in order.

    Returns {"sentences": [[hint, ...] per sentence], "acus": [[[hint, ...] per ACU] per sentence]}.
    """
    flat = [(si, ai, text) for si, (_, acus) in enumerate(sentences) for ai, text in enumerate(acus)]
    sentence_hints = [[] for _ in sentences]
    acu_hints = [[[] for _ in acus] for _, acus in sentences]
    long_limit = max(2 * usual_words, usual_words + 6)
    for si, (sentence, acus) in enumerate(sentences):
        if not acus:
            sentence_hints[si].append("No ACU for this sentence yet.")
        sentence_words = content_words(sentence)
        for ai, text in enumerate(acus):
            hints = acu_hints[si][ai]
            n = len(words(text))
            if n > long_limit:
                hints.append(f"Long: {n} words where ACUs here usually have about {usual_words:.0f}. Can it be split?")
            joiner = joins_two_facts(text)
            if joiner:
                hints.append(f"Joins two facts with “{joiner}”? Split it if both parts stand alone.")
            if sentence_words and not (content_words(text) & sentence_words):
                hints.append("Shares no content word with its sentence: is it under the right sentence?")
    for i, (si, ai, text) in enumerate(flat):
        for _sj, _aj, other in flat[:i]:
            if text.strip().lower() == other.strip().lower() or similarity(text, other) >= 0.8:
                acu_hints[si][ai].append(f"Nearly the same as ACU “{other[:60]}”.")
                break
    return {"sentences": sentence_hints, "acus": acu_hints}
