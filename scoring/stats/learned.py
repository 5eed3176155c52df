"""The learned judge's model: logistic regression over standardised pair features, fitted with
scikit-learn and cross-validated by document (GroupKFold), stored as plain JSON. Pure numpy and
scikit-learn; no Django imports.

A stored model is a dict (`MODEL_FORMAT`, `MODEL_VERSION`) holding the feature names and their
version, the standardisation (mean, scale), coefficients and intercept on the standardised
features, and what it was trained on; `predict` needs only numpy, so a model trained on one
dataset or round judges another without scikit-learn.
"""

from collections.abc import Callable

import numpy as np
from scipy.special import expit

MODEL_FORMAT = "acu-learned-judge"
MODEL_VERSION = 1
DEFAULT_FOLDS = 5
DEFAULT_C = 1.0


class ModelError(ValueError):
    """A stored model that cannot judge these features (another format, version or feature set)."""


def fit(X, y, C: float = DEFAULT_C) -> dict:
    """The standardisation and L2 logistic regression (scikit-learn, lbfgs) fitted on all rows."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=bool)
    scaler = StandardScaler().fit(X)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    Z = (X - scaler.mean_) / scale
    if y.min() == y.max():  # one class only: a constant probability near it
        p = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
        coef, intercept = np.zeros(X.shape[1]), float(np.log(p / (1 - p)))
    else:
        model = LogisticRegression(C=C, max_iter=1000).fit(Z, y)
        coef, intercept = model.coef_[0], float(model.intercept_[0])
    return {
        "mean": scaler.mean_.tolist(),
        "scale": scale.tolist(),
        "coef": np.asarray(coef, dtype=float).tolist(),
        "intercept": intercept,
        "C": float(C),
    }


def predict(model: dict, X) -> np.ndarray:
    """P(present) per row of X under a fitted (or stored) model."""
    X = np.asarray(X, dtype=float)
    Z = (X - np.asarray(model["mean"])) / np.asarray(model["scale"])
    return expit(Z @ np.asarray(model["coef"]) + float(model["intercept"]))


def cross_validated(
    X,
    y,
    groups,
    *,
    folds: int = DEFAULT_FOLDS,
    C: float = DEFAULT_C,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Out-of-fold probabilities (GroupKFold by `groups`, i.e. documents: a row's probability
    comes from the fit on the other groups) and the fit on all rows.

    Returns {"oof": array, "folds": array (fold per row), "fold_fits": [fit], "fit": fit}; `progress`
    is called with (folds done, folds + 1) after each fit.
    """
    from sklearn.model_selection import GroupKFold

    X, y, groups = np.asarray(X, dtype=float), np.asarray(y, dtype=bool), np.asarray(groups)
    k = max(2, min(folds, len(np.unique(groups))))
    oof = np.empty(len(y), dtype=float)
    fold_of = np.empty(len(y), dtype=int)
    fits = []
    if len(np.unique(groups)) < 2:
        raise ValueError("Cross-validation by document needs labelled pairs of at least two documents.")
    for i, (train, test) in enumerate(GroupKFold(n_splits=k).split(X, y, groups)):
        model = fit(X[train], y[train], C)
        oof[test] = predict(model, X[test])
        fold_of[test] = i
        fits.append(model)
        if progress is not None:
            progress(i + 1, k + 1)
    final = fit(X, y, C)
    if progress is not None:
        progress(k + 1, k + 1)
    return {"oof": oof, "folds": fold_of, "fold_fits": fits, "fit": final}


def calibration(oof, y) -> tuple[float, float]:
    """Platt scaling of out-of-fold probabilities (issue 43): (slope, intercept) of the logistic
    regression of the labels on logit(oof), so that expit(slope * logit(p) + intercept) is the
    probability the labels bear out (a judge trained on few documents is over-confident: slope < 1).
    One class only: (0, its log-odds), a constant."""
    from sklearn.linear_model import LogisticRegression

    p = np.clip(np.asarray(oof, dtype=float), 1e-6, 1 - 1e-6)
    y = np.asarray(y, dtype=bool)
    if y.min() == y.max():
        rate = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
        return 0.0, float(np.log(rate / (1 - rate)))
    model = LogisticRegression(C=1e6, max_iter=1000).fit(np.log(p / (1 - p))[:, None], y)
    return float(model.coef_[0, 0]), float(model.intercept_[0])


def calibrated(probability, scaling: tuple[float, float]) -> np.ndarray:
    """The probabilities under a Platt scaling from `calibration`."""
    p = np.clip(np.asarray(probability, dtype=float), 1e-6, 1 - 1e-6)
    slope, intercept = scaling
    return expit(slope * np.log(p / (1 - p)) + intercept)


def stored_model(fitted: dict, feature_names, feature_version: str, training: dict) -> dict:
    """The JSON form of a fitted model kept with its judge run."""
    return {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "kind": "logistic-regression",
        "features": list(feature_names),
        "feature_version": feature_version,
        **fitted,
        "training": training,
    }


def check(model: dict, feature_names, feature_version: str) -> dict:
    """The stored model if it can judge these features, else ModelError saying why."""
    if not isinstance(model, dict) or model.get("format") != MODEL_FORMAT:
        raise ModelError("That judge run holds no learned model.")
    if model.get("version") != MODEL_VERSION:
        raise ModelError(
            f"The stored model is of format version {model.get('version')}; this code reads {MODEL_VERSION}."
        )
    if model.get("features") != list(feature_names) or model.get("feature_version") != feature_version:
        raise ModelError(
            f"The stored model uses features v{model.get('feature_version')} {model.get('features')}; "
            f"this code computes v{feature_version} {list(feature_names)}: train a new model."
        )
    n = len(feature_names)
    if any(len(model.get(key) or []) != n for key in ("mean", "scale", "coef")):
        raise ModelError("The stored model's coefficients do not match its feature names.")
    return model
