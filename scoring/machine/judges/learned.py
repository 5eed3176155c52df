"""The learned judge: logistic regression over cheap pair features (scoring/machine/features.py,
the lexical judge's score among them), trained on the dataset's own labelled pairs and
cross-validated by document (scoring/stats/learned.py), or a model trained before, reused.

With `cross_encoder=True` (the torch extras, config/extras.py) one more feature joins them: the
out-of-fold logit of the packaged all-MiniLM-L6-v2 fine-tuned as a packed cross-encoder on the
same labels, by the same document grouping (scoring/machine/packed.py); its weights are stored
under JUDGE_MODELS_DIR with the run (learned_models.py).

A judge like the others (base.Judge): `fit` trains it in a judge run (or takes the model of run
`model_from`), `predict` gives every pair's probability. Trained here, the model is its own
calibration (a logistic fit cross-validated by document, as the other judges' calibration, on all
features instead of one score): labelled pairs get their out-of-fold probability, the others the
fit on all labels. A reused model's probabilities are calibrated on this dataset's labels like any
judge's raw scores. Training needs scikit-learn (requirements.txt); judging with a stored model
needs numpy only.
"""

import importlib.util
import logging
import time
from collections.abc import Iterable, Sequence

import numpy as np

from scoring.machine import packed  # its defaults; torch is imported only to train
from scoring.machine.calibration import labelled, target
from scoring.machine.features import FEATURE_NAMES, FEATURE_VERSION, Featurizer
from scoring.stats import calibration, learned

from .base import CHUNK_PAIRS, Judge, JudgeUnavailable, Prediction, Work
from .learned_models import (
    CROSS_ENCODER_BASE,
    CROSS_ENCODER_MODEL,
    cross_encoder_missing,
    feature_names,
    store_cross_encoder,
    stored_cross_encoder_logits,
    stored_model,
)

logger = logging.getLogger(__name__)

FEATURE_CHUNK = CHUNK_PAIRS * 16  # pairs featurized between two progress updates
# The cross-encoder's training stops early when, projected from its speed so far, it would end
# beyond BUDGET_SLACK x its time budget: a lead learns it in minutes, not when the budget is spent.
PROJECT_AFTER_SHARE = 0.05
PROJECT_AFTER_SECONDS = 30.0
BUDGET_SLACK = 1.2


def default_time_budget() -> float:
    """Seconds a training may take by default: 120 s below the judge task's time limit."""
    from django.conf import settings

    return float(settings.JUDGE_TASK_TIME_LIMIT - 120)


def projected_seconds(elapsed: float, share: float) -> float | None:
    """Seconds a job still needs if it goes on at the speed of its first `share` done in `elapsed`
    seconds; None until it has done enough (PROJECT_AFTER_SHARE of the work, PROJECT_AFTER_SECONDS)
    for its start-up not to skew the projection."""
    if share < PROJECT_AFTER_SHARE or elapsed < PROJECT_AFTER_SECONDS:
        return None
    return elapsed * (1.0 - share) / share


class Budget:
    """The learned judge's progress through a run, checked against its time budget: features to
    10% with the cross-encoder (whose training or scoring then goes to 90%), else to 60%; the
    folds of the logistic regression to 95%."""

    def __init__(self, work: Work, time_budget: float, stacked: bool):
        self.work, self.time_budget, self.stacked = work, time_budget, stacked
        self.features_end = 0.1 if stacked else 0.6
        self.ce_started = time.perf_counter()

    def check(self, stage: str) -> None:
        if time.perf_counter() - self.work.started > self.time_budget:
            raise JudgeUnavailable(
                f"The learned judge ran out of its time budget ({self.time_budget:g} s) while {stage}; "
                "give it a larger time_budget (judge_dataset --time-budget) or judge fewer pairs."
            )

    def features(self, done: int, total: int) -> None:
        self.work.progress(self.features_end * done / total, done)
        self.check("computing features")

    def cross_encoder_starts(self) -> None:
        self.ce_started = time.perf_counter()  # the cross-encoder's speed is measured from here

    def cross_encoder(self, share: float, stage: str) -> None:
        self.work.progress(self.features_end + (0.9 - self.features_end) * share)
        self.check(stage)
        now = time.perf_counter()
        needed = projected_seconds(now - self.ce_started, share)
        if needed is None or now - self.work.started + needed <= self.time_budget * BUDGET_SLACK:
            return
        left = self.time_budget - now + self.work.started
        raise JudgeUnavailable(
            f"The learned judge stopped early: at the speed of its first {share:.0%} "
            f"({now - self.ce_started:.0f} s), its cross-encoder needs about {needed / 60:.0f} more minutes, beyond "
            f"its time budget ({self.time_budget / 60:.0f} min, {left / 60:.0f} left). Train it on 2 folds "
            "(judge_dataset --ce-folds 2: about a third of the CPU), give it a larger budget (judge_dataset "
            "--time-budget; a run started from a page is bounded by JUDGE_TASK_TIME_LIMIT), or give the worker "
            "more CPU threads."
        )

    def folds(self, done: int, total: int) -> None:
        share = done / total
        self.work.progress(0.9 + 0.05 * share if self.stacked else 0.6 + 0.35 * share)
        self.check(f"fitting fold {done} of {total}")


def gold_share(has: np.ndarray, y: np.ndarray, document: np.ndarray, share: float) -> tuple[np.ndarray, np.ndarray]:
    """The labelled pairs of a share of the labelled documents only (at least two; drawn with a
    fixed seed): what a lab has from a gold round of that share. (has, y) restricted to them."""
    documents = np.unique(document[has])
    count = min(len(documents), max(2, round(share * len(documents))))
    chosen = np.random.default_rng(0).choice(documents, count, replace=False)
    keep = np.isin(document[has], chosen)
    restricted = has.copy()
    restricted[np.flatnonzero(has)[~keep]] = False
    return restricted, y[keep]


class LearnedJudge(Judge):
    name = "learned"
    version = f"features-v{FEATURE_VERSION}.model-v{learned.MODEL_VERSION}"
    score_names = ("p",)
    calibration_scale = "logit"
    trains = True

    def __init__(
        self,
        model_from: int | None = None,
        folds: int = learned.DEFAULT_FOLDS,
        C: float = learned.DEFAULT_C,
        time_budget: float | None = None,
        cross_encoder: bool = False,
        ce_folds: int = packed.DEFAULT_FOLDS,
        ce_epochs: int = packed.DEFAULT_EPOCHS,
        train_share: float = 1.0,
    ):
        model_from = int(model_from) if model_from not in (None, "") else None
        time_budget = default_time_budget() if time_budget is None else time_budget
        if int(folds) < 2 or float(C) <= 0 or float(time_budget) <= 0:
            raise TypeError("folds must be at least 2, C and time_budget positive")
        if not isinstance(cross_encoder, bool) or int(ce_folds) < 2 or int(ce_epochs) < 1:
            raise TypeError("cross_encoder is true or false, ce_folds at least 2, ce_epochs at least 1")
        if not 0 < float(train_share) <= 1:
            raise TypeError("train_share is the share of the labelled documents to train on: above 0, at most 1")
        if cross_encoder and model_from is not None:
            raise TypeError(
                "cross_encoder trains a new model; model_from reuses a run's (with its cross-encoder, if it has one)"
            )
        name = f"logreg-features-v{FEATURE_VERSION}" + (f"+{CROSS_ENCODER_MODEL}" if cross_encoder else "")
        params = {
            "features": feature_names(cross_encoder),
            "feature_version": FEATURE_VERSION,
            "folds": int(folds),
            "C": float(C),
            "model_from": model_from,
        }
        if float(train_share) < 1:
            params["train_share"] = float(train_share)
        if cross_encoder:
            params["cross_encoder"] = {
                "base": CROSS_ENCODER_BASE,
                "packed": True,
                "folds": int(ce_folds),
                "epochs": int(ce_epochs),
            }
        super().__init__(model=name + (f" from run {model_from}" if model_from else ""), params=params)
        self.model_from = model_from
        self.folds = int(folds)
        self.C = float(C)
        self.time_budget = float(time_budget)
        # Reusing a model: whether it has a cross-encoder is the stored model's (learned_models.stored_model).
        self.cross_encoder = cross_encoder
        self.ce_folds = int(ce_folds)
        self.ce_epochs = int(ce_epochs)
        self.train_share = float(train_share)
        if cross_encoder:
            self.version = f"{type(self).version}.packed-ce-v1"
        self.featurizer: Featurizer | None = None
        self.stored: dict | None = None
        self._x: np.ndarray | None = None  # the stacked features of a run's pairs (fit, then predict)
        self._trained: dict | None = None  # what a training in this run leaves for predict and storing

    def available(self) -> tuple[bool, str]:
        if self.model_from is None and importlib.util.find_spec("sklearn") is None:
            return False, "The learned judge trains with scikit-learn: .venv/bin/pip install -r requirements.txt"
        if self.cross_encoder and (why := cross_encoder_missing()):
            return False, why
        if self.model_from is not None:
            try:
                stored_model(self.model_from)
            except JudgeUnavailable as exc:
                return False, str(exc)
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
                "A stacked model judges in its judge run (fit, then predict), with its cross-encoder."
            )
        return {"p": learned.predict(self.stored, self.features(pairs))}

    # A judge run: fit, then predict.

    def fit(self, work: Work) -> None:
        """Train on the run's labelled pairs, or take the model of run `model_from`; either way
        the stacked features of every pair are kept for `predict`."""
        reused = stored_model(self.model_from) if self.model_from is not None else None
        stacked = "cross_encoder" in reused if reused is not None else self.cross_encoder
        budget = Budget(work, self.time_budget, stacked)
        self.prepare(work.texts)
        n = len(work.pairs)
        x = np.empty((n, len(FEATURE_NAMES)), dtype=float)
        for start in range(0, n, FEATURE_CHUNK):
            stop = min(n, start + FEATURE_CHUNK)
            x[start:stop] = self.features(work.pairs.texts(range(start, stop)))
            budget.features(stop, n)
        budget.cross_encoder_starts()
        self._x = self._train(x, work, budget) if reused is None else self._reuse(reused, x, work, budget)

    def _reuse(self, reused: dict, x: np.ndarray, work: Work, budget: Budget) -> np.ndarray:
        try:
            stored = self.use(reused)
        except learned.ModelError as exc:
            raise JudgeUnavailable(str(exc)) from None
        if not budget.stacked:
            return x
        texts = work.pairs.texts(range(len(work.pairs)))
        logits = stored_cross_encoder_logits(stored["cross_encoder"], texts, budget.cross_encoder)
        # The run says what judged: the stored stack, not the features alone.
        self.model = f"logreg-features-v{FEATURE_VERSION}+{CROSS_ENCODER_MODEL} from run {self.model_from}"
        self.params["features"] = feature_names(True)
        return np.column_stack([x, logits])

    def _train(self, x: np.ndarray, work: Work, budget: Budget) -> np.ndarray:
        name = target(work.labels)
        if name is None:
            raise JudgeUnavailable(
                f"The learned judge trains on human labels and {work.dataset_name} has none: import expert labels "
                "or label summaries as gold on the dataset page, run a crowd round, or reuse a trained model "
                "(--model-from RUN)."
            )
        has, y = labelled(work.pairs, work.labels[name])
        if self.train_share < 1:
            has, y = gold_share(has, y, work.pairs.document, self.train_share)
        ce = self._train_cross_encoder(work, has, y, budget) if budget.stacked else None
        if ce is not None:
            x = np.column_stack([x, ce["logit"]])
        try:
            cv = learned.cross_validated(
                x[has], y, work.pairs.document[has], folds=self.folds, C=self.C, progress=budget.folds
            )
        except ValueError as exc:
            raise JudgeUnavailable(f"The learned judge cannot train here: {exc}") from None
        self._trained = {"target": name, "has": has, "y": y, "cv": cv, "ce": ce, "work": work}
        return x

    def _train_cross_encoder(self, work: Work, has: np.ndarray, y: np.ndarray, budget: Budget) -> dict:
        labels_all = np.zeros(len(work.pairs), dtype=bool)
        labels_all[has] = y
        try:
            return packed.cross_validated(
                work.pairs.texts(range(len(work.pairs))),
                labels_all,
                work.pairs.document,
                has,
                folds=self.ce_folds,
                epochs=self.ce_epochs,
                progress=budget.cross_encoder,
            )
        except ValueError as exc:
            raise JudgeUnavailable(f"The learned judge cannot train its cross-encoder here: {exc}") from None

    def predict(self, work: Work) -> Prediction:
        """Every pair's probability: out-of-fold for the pairs it trained on (its own
        calibration), the fit on all labels for the others; a reused model's, to be calibrated."""
        if self._x is None:
            raise JudgeUnavailable("The learned judge predicts after its fit in the same run.")
        if self._trained is None:
            assert self.stored is not None
            return Prediction(
                {"p": learned.predict(self.stored, self._x)}, figures={"trained_on": self.stored.get("training")}
            )
        t = self._trained
        probability = learned.predict(t["cv"]["fit"], self._x)
        probability[t["has"]] = t["cv"]["oof"]
        record = {
            "target": t["target"],
            "scale": "learned",
            "folds": len(t["cv"]["fold_fits"]),
            "by": "document",
            "labelled_pairs": int(t["has"].sum()),
            "trained_documents": sorted(np.unique(t["work"].pairs.document[t["has"]]).tolist())
            if self.train_share < 1
            else None,
            "fit": "the learned model itself: out-of-fold probabilities of its logistic regression (JudgeRun.fitted)",
        }
        return Prediction({"p": probability}, probability=probability, calibration=record)

    def model_to_store(self, figures: dict) -> dict:
        """The fitted model (JudgeRun.fitted): a reused one with the run it came from; one trained
        here with its training set, out-of-fold figures and cross-encoder (written under
        JUDGE_MODELS_DIR/run-ID)."""
        if self._trained is None:
            return {**(self.stored or {}), "reused_from": self.model_from}
        t = self._trained
        work, has, y, cv = t["work"], t["has"], t["y"], t["cv"]
        training = {
            "dataset": work.dataset_name,
            "dataset_id": work.dataset_id,
            "run": work.run_id,
            "labels": t["target"],
            "label_round": work.label_round,
            "pairs": int(has.sum()),
            "positives": int(y.sum()),
            "documents": len(np.unique(work.pairs.document[has])),
            "folds": len(cv["fold_fits"]),
            "by": "document (GroupKFold)",
            "oof": calibration.classification(y, cv["oof"]),
            "fold_coefs": [f["coef"] for f in cv["fold_fits"]],
            "figures": {
                "classification": figures["classification"].get(t["target"]),
                "correlations": figures["correlations"],
            },
        }
        fitted = learned.stored_model(cv["fit"], feature_names(t["ce"] is not None), FEATURE_VERSION, training)
        if t["ce"] is not None:
            fitted["cross_encoder"] = store_cross_encoder(work.run_id, t["ce"], y, has)
        logger.info(
            "Judge run %s: learned judge trained on %d %s pairs of %d documents, out-of-fold AUC %.4f",
            work.run_id,
            training["pairs"],
            t["target"],
            training["documents"],
            training["oof"]["auc"],
        )
        return fitted
