"""The judge interface: P(an ACU is present in a summary) for (acu_text, summary_text) pairs."""

from collections.abc import Sequence

import numpy as np


class JudgeUnavailable(Exception):
    """A judge cannot run here (a missing package or model, an unreachable endpoint, bad
    options); the message tells the lead what to install or set."""


class Judge:
    """One way of judging ACU presence without people.

    `name` is the judge's kind (lexical, embedding, nli, llm), `model` what it judges with
    (a model directory, a model name, a rule's version) and `params` the options that change
    its answers; the three are stored with every machine round so it can be reproduced.
    Constructing a judge is cheap: models load on first use.
    """

    name: str = ""
    # The judge code's version, stored with each run (bump it when answers would change).
    version: str = "1"
    # Keys of `scores()`; the first is the probability `judge()` returns.
    score_names: tuple[str, ...] = ("p",)
    # How calibration reads the raw score: "linear" (a share, a cosine) or "logit" (a probability).
    calibration_scale: str = "linear"

    def __init__(self, model: str = "", params: dict | None = None):
        self.model = model
        self.params = dict(params or {})

    def available(self) -> tuple[bool, str]:
        """(True, "") when the judge can run here, else (False, why not and how to fix it)."""
        return True, ""

    def require(self) -> None:
        ok, why = self.available()
        if not ok:
            raise JudgeUnavailable(why)

    def scores(self, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        """All raw scores of each pair, one array per name in `score_names`."""
        raise NotImplementedError

    def judge(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(present) in [0, 1] for each (acu_text, summary_text) pair, in order."""
        if not len(pairs):
            return np.zeros(0, dtype=float)
        self.require()
        values = np.asarray(self.scores(pairs)[self.score_names[0]], dtype=float)
        return np.clip(values, 0.0, 1.0)

    def describe(self) -> dict:
        return {"name": self.name, "model": self.model, "params": self.params}

    def __repr__(self):
        return f"<{type(self).__name__} {self.name} model={self.model!r} params={self.params!r}>"
