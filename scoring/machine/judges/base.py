"""The judge interface: P(an ACU is present in a summary) for (acu_text, summary_text) pairs.

Every judge is used the same way by a judge run (scoring.machine.runs): `fit(work)` learns from
the run's labelled pairs (nothing for a judge that does not train), `predict(work)` scores every
pair. A judge that trains (the learned judge) calibrates itself (its out-of-fold probabilities);
the raw scores of the others are calibrated by the run on the same labels."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

CHUNK_PAIRS = 256  # pairs judged between two progress updates
PREDICT_END = 0.95  # the share of a run's progress at the end of its judging (the rest: figures)


class JudgeUnavailable(Exception):
    """A judge cannot run here (a missing package or model, an unreachable endpoint, bad
    options); the message tells the lead what to install or set."""


def chunk_end(summary: np.ndarray, start: int) -> int:
    """The end of the chunk of about CHUNK_PAIRS rows from `start`, never inside a summary: a
    judge asking per summary (the llm judge) sees each summary's ACUs together, in one request."""
    stop = min(len(summary), start + CHUNK_PAIRS)
    while stop < len(summary) and summary[stop] == summary[stop - 1]:
        stop += 1
    return stop


@dataclass
class Work:
    """One judge run's work as its judge sees it: the dataset's (summary, ACU) pairs
    (scoring.machine.data.Pairs), its human labels by source ({(summary, acu): bool} per
    round/expert/crowd, the calibration target first), its texts (summaries and references),
    `progress(share, pairs_done=None)` that stores the run's progress (0-1), and where a judge
    that pays per answer keeps them (`answers`: scoring.machine.answers.RunAnswers; the llm judge)."""

    pairs: Any
    labels: dict
    texts: list[str]
    progress: Callable[..., None]
    run_id: int
    dataset_id: int
    dataset_name: str
    label_round: int | None
    started: float  # time.perf_counter() when the run started (its time budget counts from there)
    answers: Any = None


@dataclass
class Prediction:
    """What a judge's `predict` gives: every raw score by name (`score_names`), and for a judge
    that calibrates itself its probability and calibration record (else the run calibrates the
    first raw score), with figures of its own for the run's page (a reused model's training)."""

    scores: dict[str, np.ndarray]
    probability: np.ndarray | None = None
    calibration: dict | None = None
    figures: dict = field(default_factory=dict)


class Judge:
    """One way of judging ACU presence without people.

    `name` is the judge's kind (lexical, embedding, nli, llm, learned), `model` what it judges
    with (a model directory, a model name, a rule's version) and `params` the options that change
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
    # A judge that learns from labelled pairs: triage prefers its runs (scoring.machine.selectors).
    trains: bool = False
    # A judge whose answers a run stores as they arrive (Work.answers), so that an interrupted run
    # is resumed rather than started again (the llm judge: every answer is paid for).
    resumable: bool = False

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

    def fit(self, work: Work) -> None:
        """Learn from the run's labelled pairs; a judge that does not train keeps nothing."""

    def predict(self, work: Work) -> Prediction:
        """Every raw score of every pair, chunk by chunk, with the run's progress after each."""
        pairs, n = work.pairs, len(work.pairs)
        out = {name: np.empty(n, dtype=float) for name in self.score_names}
        start = 0
        while start < n:
            rows = range(start, chunk_end(pairs.summary, start))
            scores = self.scores(pairs.texts(rows))
            for name in self.score_names:
                out[name][start : rows.stop] = np.asarray(scores[name], dtype=float)
            work.progress(PREDICT_END * rows.stop / n, rows.stop)
            start = rows.stop
        return Prediction(out)

    def model_to_store(self, figures: dict) -> dict:
        """What the run keeps of the judge's model (JudgeRun.fitted) once its figures are known:
        nothing for a judge that does not train."""
        return {}

    def describe(self) -> dict:
        return {"name": self.name, "model": self.model, "params": self.params}

    def __repr__(self):
        return f"<{type(self).__name__} {self.name} model={self.model!r} params={self.params!r}>"
