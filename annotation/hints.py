"""Atomicity hints for ACU authors: advice shown while typing, never a block.

Plain functions over texts, so the editor (through the save response) and the tests use
the same rules. Every check on one text is linear in its length (the text is tokenised once);
the near-duplicate check compares each ACU's word set, computed once, with the earlier ones.
"""

import re
from bisect import bisect_left
from statistics import median

from .language.tokens import is_verb, tokenize
from .text import STOPWORDS, content_words, words

USUAL_ACU_WORDS = 7  # RoSE's ACUs are short facts; used when a dataset has none yet
_JOINER = re.compile(r"\b(and|but)\b", re.IGNORECASE)
_WORD = re.compile(r"\w+", re.UNICODE)  # as annotation.text.words, with positions


def usual_length(acu_texts: list[str]) -> float:
    lengths = [len(words(t)) for t in acu_texts if t.strip()]
    return float(median(lengths)) if lengths else float(USUAL_ACU_WORDS)


def joins_two_facts(text: str) -> str | None:
    """The joining word when 'and'/'but' links two parts that could each stand alone: three or
    more content words and a verb on both sides (the drafter's verb reading, `is_verb`). 'and'
    inside a noun phrase passes, short or long ("425 young women and girls have been sleeping
    outdoors": no verb before it), as guideline 3 has it."""
    if not _JOINER.search(text):
        return None
    verbs = _verb_sides(text)
    tokens = [(m.start(), m.group().lower()) for m in _WORD.finditer(text)]
    starts = [start for start, _ in tokens]
    # before[i] / after[i]: distinct content words among tokens[:i] / tokens[i:], one pass each.
    before, seen = [0], set()
    for _, word in tokens:
        if word not in STOPWORDS:
            seen.add(word)
        before.append(len(seen))
    after, seen = [0], set()
    for _, word in reversed(tokens):
        if word not in STOPWORDS:
            seen.add(word)
        after.append(len(seen))
    after.reverse()
    for match in _JOINER.finditer(text):
        i = bisect_left(starts, match.start())  # the joiner's own token ("and"/"but": a stopword)
        if before[i] >= 3 and after[i] >= 3 and verbs(match.start()):
            return match.group(1).lower()
    return None


def _verb_sides(text: str):
    """A test of a joiner at a character offset of `text`: whether a verb comes before it and
    another after it, from one tokenisation of the text."""
    tokens = tokenize(text)
    verb_at = [t.start for k, t in enumerate(tokens) if is_verb(tokens, k)]
    return lambda offset: bool(verb_at) and verb_at[0] < offset < verb_at[-1]


def _word_set(text: str) -> set[str]:
    return content_words(text) or set(words(text))


def _overlap(wa: set[str], wb: set[str]) -> float:
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def similarity(a: str, b: str) -> float:
    return _overlap(_word_set(a), _word_set(b))


def reference_hints(sentences: list[tuple[str, list[str]]], usual_words: float, drafts=None) -> dict:
    """Hints for one reference: `sentences` is [(sentence text, [ACU texts])] in order; `drafts`,
    if given, is [[pending draft texts] per sentence], checked as if written after the sentence's
    ACUs and named "draft" in the hints (a draft is not an ACU until accepted).

    Returns {"sentences": [[hint, ...] per sentence], "acus": [[[hint, ...] per ACU] per sentence]}
    and, with `drafts`, "drafts": [[[hint, ...] per draft] per sentence]. The ACUs' own hints do
    not depend on the drafts.
    """
    pending = drafts if drafts is not None else [[] for _ in sentences]
    # (sentence, kind, index, text): every ACU, then every draft of the reference.
    flat = [(si, "acu", ai, text) for si, (_, acus) in enumerate(sentences) for ai, text in enumerate(acus)]
    flat += [(si, "draft", di, text) for si, texts in enumerate(pending) for di, text in enumerate(texts)]
    out: dict[str, list] = {
        "acu": [[[] for _ in acus] for _, acus in sentences],
        "draft": [[[] for _ in texts] for texts in pending],
    }
    sentence_words = [content_words(sentence) for sentence, _ in sentences]
    for si, kind, index, text in flat:
        out[kind][si][index].extend(_text_hints(text, kind, sentence_words[si], usual_words))
    for (si, kind, index, _text), hint in zip(flat, _near_duplicates(flat), strict=True):
        if hint:
            out[kind][si][index].append(hint)
    result = {"sentences": _missing_acus(sentences, pending), "acus": out["acu"]}
    if drafts is not None:
        result["drafts"] = out["draft"]
    return result


def _missing_acus(sentences: list[tuple[str, list[str]]], pending: list[list[str]]) -> list[list[str]]:
    """Per sentence: a hint when it has no ACU yet (and what to do with its drafts, if any)."""
    return [
        []
        if acus
        else [
            "No ACU for this sentence yet: accept, edit or dismiss its drafts."
            if pending[si]
            else "No ACU for this sentence yet."
        ]
        for si, (_sentence, acus) in enumerate(sentences)
    ]


def _text_hints(text: str, kind: str, sentence_words: set[str], usual_words: float) -> list[str]:
    """The hints of one ACU or draft on its own: long, two facts joined, no word of its sentence."""
    hints = []
    n = len(words(text))
    if n > max(2 * usual_words, usual_words + 6):
        what = f"this draft has {n} words" if kind == "draft" else f"{n} words"
        hints.append(f"Long: {what} where ACUs here usually have about {usual_words:.0f}. Can it be split?")
    joiner = joins_two_facts(text)
    if joiner:
        hints.append(f"Joins two facts with “{joiner}”? Split it if both parts stand alone.")
    if sentence_words and not (content_words(text) & sentence_words):
        hints.append("Shares no content word with its sentence: is it under the right sentence?")
    return hints


def _near_duplicates(flat: list[tuple[int, str, int, str]]) -> list[str | None]:
    """Per text of `flat`: a hint naming the first earlier ACU or draft that is the same text (any
    case) or nearly the same (80% of their content words shared), else None."""
    keys = [text.strip().lower() for *_, text in flat]
    sets = [_word_set(text) for *_, text in flat]
    found: list[str | None] = []
    for i in range(len(flat)):
        other = next((j for j in range(i) if keys[i] == keys[j] or _overlap(sets[i], sets[j]) >= 0.8), None)
        if other is None:
            found.append(None)
            continue
        _, other_kind, _, other_text = flat[other]
        name = "draft" if other_kind == "draft" else "ACU"
        if keys[i] == keys[other]:  # the same words: "nearly" would make the author look for a difference
            found.append(f"The same text as {name} “{other_text[:60]}”: keep one.")
        else:
            quote = other_text[:60]
            end = "" if quote.endswith((".", "!", "?")) else "."  # no second full stop after the quote's own
            found.append(f"Nearly the same as {name} “{quote}”{end}")
    return found
