"""Calibrating a judge's raw score on the dataset's human labels: a logistic fit cross-validated
by document (scoring/stats/calibration.py), out-of-fold for the labelled pairs."""

import numpy as np

from scoring.stats import calibration

CV_FOLDS = calibration.DEFAULT_FOLDS
SOURCE_ORDER = ("round", "expert", "crowd")  # the first present is the calibration target


def target(sources: dict) -> str | None:
    """The label source a run calibrates on (and a judge that trains learns from)."""
    return next((s for s in SOURCE_ORDER if s in sources), None)


def labelled(pairs, labels: dict) -> tuple[np.ndarray, np.ndarray]:
    """(which pairs have a label, their labels in pair order)."""
    keys = pairs.keys()
    has = np.array([k in labels for k in keys], dtype=bool)
    y = np.array([labels[k] for k, h in zip(keys, has, strict=False) if h], dtype=bool)
    return has, y


def calibrate(raw: np.ndarray, scale: str, pairs, sources: dict) -> tuple[np.ndarray, dict]:
    """Calibrated probability per pair (out-of-fold for pairs the target labels, the fit on all
    labels for the others) and the calibration record."""
    x = calibration.feature(raw, scale)
    name = target(sources)
    if name is None:
        # No human labels: the raw score stands in (clipped), and no figure claims accuracy.
        return np.clip(raw, 0.0, 1.0), {"target": None, "note": "no human labels: raw scores, uncalibrated"}
    has, y = labelled(pairs, sources[name])
    cv = calibration.cross_validated(x[has], y.astype(float), pairs.document[has], k=CV_FOLDS)
    probability = calibration.predict(x, *cv["fit"])
    probability[has] = cv["oof"]
    return probability, {
        "target": name,
        "scale": scale,
        "folds": CV_FOLDS,
        "by": "document",
        "labelled_pairs": int(has.sum()),
        "fit": {"slope": cv["fit"][0], "intercept": cv["fit"][1]},
        "fold_fits": [{"slope": a, "intercept": b} for a, b in cv["fold_fits"]],
    }
