"""The lexical judge: the share of an ACU's content words (Porter-stemmed) found in the summary."""

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import snowballstemmer

from annotation.text import STOPWORDS, words

from .base import Judge

VERSION = "1"


@lru_cache(maxsize=1)
def _stemmer():
    # Martin Porter's original algorithm (1980), as shipped by the Snowball project.
    return snowballstemmer.stemmer("porter")


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    return _stemmer().stemWord(word)


def stems(text: str) -> list[str]:
    """Porter stems of the text's content words (lower-cased \\w+ tokens, stop words removed)."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def overlap(acu: str, summary_stems: frozenset[str]) -> float:
    """Share of the ACU's distinct content stems found among the summary's stems (0 for an ACU
    without a content word)."""
    acu_stems = set(stems(acu))
    if not acu_stems:
        return 0.0
    return len(acu_stems & summary_stems) / len(acu_stems)


class LexicalJudge(Judge):
    name = "lexical"
    version = VERSION
    score_names = ("p",)

    def __init__(self, **params):
        if params:
            raise TypeError(f"the lexical judge takes no options, got {', '.join(sorted(params))}")
        super().__init__(model=f"porter-overlap-v{VERSION}", params={})
        self._cache: dict[str, frozenset[str]] = {}  # stems by text, across calls

    def _stems(self, text: str) -> frozenset[str]:
        found = self._cache.get(text)
        if found is None:
            if len(self._cache) > 200_000:
                self._cache.clear()
            found = self._cache[text] = frozenset(stems(text))
        return found

    def scores(self, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        values = np.empty(len(pairs), dtype=float)
        for i, (acu, summary) in enumerate(pairs):
            acu_stems = self._stems(acu)
            values[i] = len(acu_stems & self._stems(summary)) / len(acu_stems) if acu_stems else 0.0
        return {"p": values}
