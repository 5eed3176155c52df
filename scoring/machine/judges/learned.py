"""The learned judge: logistic regression over cheap pair features (scoring/machine/features.py,
the lexical judge's score among them), trained on the dataset's own labelled pairs and
cross-validated by document (scoring/stats/learned.py), or a model trained before, reused.

Training needs scikit-learn (requirements.txt); judging with a stored model needs numpy only.
The training and its out-of-fold figures run in `scoring.machine.runs`, which stores the fitted
model with the judge run (`JudgeRun.fitted`).
"""

import importlib.util
from collections.abc import Iterable, Sequence

import numpy as np

from scoring.machine.features import FEATURE_NAMES, FEATURE_VERSION, Featurizer
from scoring.stats import learned

from .base import Judge, JudgeUnavailable

DEFAULT_TIME_BUDGET = 1500.0  # seconds; below CELERY_TASK_TIME_LIMIT's default (1800)


class LearnedJudge(Judge):
    name = "learned"
    version = f"features-v{FEATURE_VERSION}.model-v{learned.MODEL_VERSION}"
    score_names = ("p",)
    calibration_scale = "logit"

    def __init__(
        self,
        model_from: int | None = None,
        folds: int = learned.DEFAULT_FOLDS,
        C: float = learned.DEFAULT_C,
        time_budget: float = DEFAULT_TIME_BUDGET,
    ):
        model_from = int(model_from) if model_from not in (None, "") else None
        if int(folds) < 2 or float(C) <= 0 or float(time_budget) <= 0:
            raise TypeError("folds must be at least 2, C and time_budget positive")
        super().__init__(
            model=f"logreg-features-v{FEATURE_VERSION}" + (f" from run {model_from}" if model_from else ""),
            params={
                "features": list(FEATURE_NAMES),
                "feature_version": FEATURE_VERSION,
                "folds": int(folds),
                "C": float(C),
                "model_from": model_from,
            },
        )
        self.model_from = model_from
        self.folds = int(folds)
        self.C = float(C)
        self.time_budget = float(time_budget)
        self.featurizer: Featurizer | None = None
        self.stored: dict | None = None

    def available(self) -> tuple[bool, str]:
        if self.model_from is None and importlib.util.find_spec("sklearn") is None:
            return False, "The learned judge trains with scikit-learn: .venv/bin/pip install -r requirements.txt"
        return True, ""

    def prepare(self, texts: Iterable[str]) -> Featurizer:
        """The IDF table over a dataset's texts (its summaries and references)."""
        self.featurizer = Featurizer.over(texts)
        return self.featurizer

    def use(self, stored: dict) -> dict:
        """Judge with a stored model (ModelError when it does not fit these features)."""
        self.stored = learned.check(stored, FEATURE_NAMES, FEATURE_VERSION)
        return self.stored

    def features(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if self.featurizer is None:
            self.prepare([summary for _, summary in pairs] + [acu for acu, _ in pairs])
        assert self.featurizer is not None
        return self.featurizer.matrix(pairs)

    def scores(self, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        if self.stored is None:
            raise JudgeUnavailable("The learned judge has no model yet: train it on labelled pairs or reuse a run's.")
        return {"p": learned.predict(self.stored, self.features(pairs))}
