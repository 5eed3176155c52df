"""Features of (ACU, summary) pairs for the learned judge. Pure Python and numpy: no Django
(an import-linter contract), so tests and benchmarks call it on plain strings.

Tokens are lower-cased \\w+ words (`annotation.text.words`); stems are Porter stems
(the lexical judge's `stem`); content stems leave the stop words out (the lexical judge's
`stems`). Per pair, in `FEATURE_NAMES` order:

- `lexical`: the lexical judge's score (share of the ACU's distinct content stems in the summary);
- `idf_recall`: the same share weighted by IDF, `sum idf(found) / sum idf(all)`;
- `idf_missing`, `log_idf_missing`, `max_idf_missing`: the sum, log(1 + the sum) and the largest
  IDF of the content stems not found;
- `prefix_recall`: `idf_recall` with a stem found when a summary stem shares its first five letters
  (catches what the stemmer leaves apart: "investigation" / "investigators");
- `window_recall`: `idf_recall` within the best window of the summary, `max(4, 2 x ACU tokens)`
  consecutive tokens starting at a found content stem (the ACU's words close together);
- `recall`: share of the ACU's distinct tokens (stop words too, unstemmed) among the summary's;
- `bigram_recall`: share of the ACU's distinct stem bigrams (stop words kept) among the summary's
  (an ACU of one token: its stem's presence);
- `lcs_ratio`: longest common subsequence of the two stem sequences / the ACU's stem count;
- `has_number`, `number_recall`: whether the ACU has numbers (tokens with a digit) and the share
  of them in the summary's tokens (1 when it has none: nothing is missing);
- `has_name`, `name_recall`: the same for names, capitalised tokens of the ACU (as written) that
  are no stop word, looked up case-insensitively (summaries of some systems are lower-cased);
- `acu_length`, `summary_length`: log(1 + tokens).

IDF over a dataset's texts (its summaries and references): `log((1 + N) / (1 + df)) + 1`, df the
number of texts holding the stem (scikit-learn's smooth IDF); a stem in no text gets df 0.
"""

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from annotation.text import STOPWORDS, words
from scoring.machine.judges.lexical import stem

FEATURE_VERSION = "1"
FEATURE_NAMES = (
    "lexical",
    "idf_recall",
    "idf_missing",
    "log_idf_missing",
    "max_idf_missing",
    "prefix_recall",
    "window_recall",
    "recall",
    "bigram_recall",
    "lcs_ratio",
    "has_number",
    "number_recall",
    "has_name",
    "name_recall",
    "acu_length",
    "summary_length",
)
PREFIX = 5  # letters of a stem that `prefix_recall` compares
_TOKEN = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Text:
    """What the features read of one text, computed once per text."""

    tokens: tuple[str, ...]  # lower-cased words
    token_set: frozenset[str]
    stems: tuple[str, ...]  # stem of every token
    content: frozenset[str]  # distinct content stems
    bigrams: frozenset[tuple[str, str]]
    numbers: frozenset[str]
    names: frozenset[str]  # lower-cased
    prefixes: frozenset[str]  # first PREFIX letters of the content stems


def analyse(text: str) -> Text:
    tokens = tuple(words(text))
    stemmed = tuple(stem(t) for t in tokens)
    content = frozenset(stem(t) for t in tokens if t not in STOPWORDS)
    names = frozenset(
        t.lower() for t in _TOKEN.findall(text) if t[:1].isupper() and t.lower() not in STOPWORDS and not t.isdigit()
    )
    return Text(
        tokens=tokens,
        token_set=frozenset(tokens),
        stems=stemmed,
        content=content,
        bigrams=frozenset(pairwise(stemmed)),
        numbers=frozenset(t for t in tokens if any(c.isdigit() for c in t)),
        names=names,
        prefixes=frozenset(s[:PREFIX] for s in content),
    )


def idf_table(texts: Iterable[str]) -> tuple[dict[str, float], int]:
    """({content stem: idf}, number of texts) over the given texts (each text counted once)."""
    df: dict[str, int] = {}
    n = 0
    for text in texts:
        n += 1
        for s in analyse(text).content:
            df[s] = df.get(s, 0) + 1
    return {s: math.log((1 + n) / (1 + k)) + 1 for s, k in df.items()}, n


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences, bit-parallel over `a`
    (Hyyrö 2004): one pass over `b` with a few integer operations per token."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


def _share(wanted: frozenset, found: frozenset, empty: float) -> float:
    return len(wanted & found) / len(wanted) if wanted else empty


class Featurizer:
    """Feature rows of (acu_text, summary_text) pairs against one IDF table; texts are analysed
    once and kept (an ACU meets every system's summary of its document)."""

    def __init__(self, idf: dict[str, float], n_texts: int):
        self.idf = idf
        self.unseen_idf = math.log(1 + n_texts) + 1  # df = 0
        self._texts: dict[str, Text] = {}

    @classmethod
    def over(cls, texts: Iterable[str]) -> "Featurizer":
        return cls(*idf_table(texts))

    def text(self, value: str) -> Text:
        found = self._texts.get(value)
        if found is None:
            if len(self._texts) > 200_000:
                self._texts.clear()
            found = self._texts[value] = analyse(value)
        return found

    @staticmethod
    def window(acu: Text, summary: Text, weights: dict[str, float]) -> float:
        """The largest IDF weight of the ACU's content stems within one window of the summary."""
        size = max(4, 2 * len(acu.tokens))
        best = 0.0
        for i, s in enumerate(summary.stems):
            if s in acu.content:
                best = max(best, sum(weights[x] for x in acu.content.intersection(summary.stems[i : i + size])))
        return best

    def row(self, acu_text: str, summary_text: str) -> list[float]:
        acu, summary = self.text(acu_text), self.text(summary_text)
        weights = {s: self.idf.get(s, self.unseen_idf) for s in acu.content}
        missing = [weights[s] for s in acu.content - summary.content]
        total = sum(weights.values())
        prefixed = sum(w for s, w in weights.items() if s[:PREFIX] in summary.prefixes)
        if acu.bigrams:
            bigram = len(acu.bigrams & summary.bigrams) / len(acu.bigrams)
        else:
            bigram = float(bool(acu.stems) and acu.stems[0] in summary.stems)
        return [
            _share(acu.content, summary.content, 0.0),
            (total - sum(missing)) / total if total else 0.0,
            sum(missing),
            math.log1p(sum(missing)),
            max(missing, default=0.0),
            prefixed / total if total else 0.0,
            self.window(acu, summary, weights) / total if total else 0.0,
            _share(acu.token_set, summary.token_set, 0.0),
            bigram,
            lcs_length(acu.stems, summary.stems) / len(acu.stems) if acu.stems else 0.0,
            float(bool(acu.numbers)),
            _share(acu.numbers, summary.token_set, 1.0),
            float(bool(acu.names)),
            _share(acu.names, summary.token_set, 1.0),
            math.log1p(len(acu.tokens)),
            math.log1p(len(summary.tokens)),
        ]

    def matrix(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """(pairs x FEATURE_NAMES) float matrix."""
        out = np.empty((len(pairs), len(FEATURE_NAMES)), dtype=float)
        for i, (acu_text, summary_text) in enumerate(pairs):
            out[i] = self.row(acu_text, summary_text)
        return out
