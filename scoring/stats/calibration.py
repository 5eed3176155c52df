"""Calibrating a judge's raw scores into probabilities, honestly: a logistic fit with
cross-validation by document, and the classification figures of out-of-fold predictions.

Pure numpy/scipy; no Django imports. The logistic fit is scikit-learn's default
`LogisticRegression(C=1.0)` (L2 penalty on the slope, not the intercept), solved by Newton's
method on one feature; tests check it against scikit-learn.
"""

import numpy as np
from scipy.special import expit
from scipy.stats import rankdata

DEFAULT_FOLDS = 5
EPS = 1e-6


def feature(raw, scale: str = "linear") -> np.ndarray:
    """The fitted feature: the raw score itself (`linear`: shares and cosines), or its logit
    clipped at 1e-4 (`logit`: scores that are already probabilities, such as nli's p2c)."""
    x = np.asarray(raw, dtype=float)
    if scale == "linear":
        return x
    x = np.clip(x, 1e-4, 1 - 1e-4)
    return np.log(x) - np.log1p(-x)


def fit_logistic(x, y, C: float = 1.0, max_iter: int = 100, tol: float = 1e-10) -> tuple[float, float]:
    """(slope, intercept) minimizing the log loss + slope**2 / (2 C) (scikit-learn's objective)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) == 0:
        return 0.0, 0.0
    if y.min() == y.max():  # one class only: a constant probability near it
        p = np.clip(y.mean(), EPS, 1 - EPS)
        return 0.0, float(np.log(p / (1 - p)))
    w = np.zeros(2)  # slope, intercept
    X = np.column_stack([x, np.ones_like(x)])
    ridge = np.array([1.0 / C, 0.0])
    for _ in range(max_iter):
        p = expit(X @ w)
        grad = X.T @ (p - y) + ridge * w
        hess = (X * (p * (1 - p))[:, None]).T @ X + np.diag(ridge)
        step = np.linalg.solve(hess + 1e-12 * np.eye(2), grad)
        w -= step
        if np.abs(step).max() < tol:
            break
    return float(w[0]), float(w[1])


def predict(x, slope: float, intercept: float) -> np.ndarray:
    return expit(slope * np.asarray(x, dtype=float) + intercept)


def document_folds(documents, k: int = DEFAULT_FOLDS, seed: int = 0) -> np.ndarray:
    """Fold number per row: each document's rows share a fold (documents shuffled with `seed`,
    then dealt round-robin), so no document is both trained and tested on."""
    documents = np.asarray(documents)
    uniques = np.unique(documents)
    order = np.random.default_rng(seed).permutation(len(uniques))
    fold_of = np.empty(len(uniques), dtype=int)
    fold_of[order] = np.arange(len(uniques)) % max(1, min(k, len(uniques)))
    return fold_of[np.searchsorted(uniques, documents)]


def cross_validated(x, y, documents, k: int = DEFAULT_FOLDS, seed: int = 0, C: float = 1.0) -> dict:
    """Out-of-fold probabilities for the labelled rows and the fit on all of them.

    Returns {"oof": array, "folds": array, "fold_fits": [(slope, intercept)], "fit": (slope, intercept)}.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    folds = document_folds(documents, k, seed)
    oof = np.empty(len(x), dtype=float)
    fits = []
    for fold in np.unique(folds):
        test = folds == fold
        train = ~test
        slope, intercept = fit_logistic(x[train], y[train], C) if train.any() else fit_logistic(x, y, C)
        oof[test] = predict(x[test], slope, intercept)
        fits.append((slope, intercept))
    return {"oof": oof, "folds": folds, "fold_fits": fits, "fit": fit_logistic(x, y, C)}


def auc(y, score) -> float:
    """Area under the ROC curve (Mann-Whitney with average ranks for ties); NaN with one class."""
    y = np.asarray(y, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(np.asarray(score, dtype=float))
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def cohen_kappa(a, b) -> float:
    """Cohen's kappa of two binary labelings; NaN when chance agreement is total."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if len(a) == 0:
        return float("nan")
    observed = float(np.mean(a == b))
    pa, pb = a.mean(), b.mean()
    expected = float(pa * pb + (1 - pa) * (1 - pb))
    return float("nan") if expected >= 1 else (observed - expected) / (1 - expected)


def classification(y, probability, threshold: float = 0.5) -> dict:
    """Accuracy, balanced accuracy, AUC and kappa of probabilities (label: p >= threshold)."""
    y = np.asarray(y, dtype=bool)
    probability = np.asarray(probability, dtype=float)
    predicted = probability >= threshold
    recalls = [float(np.mean(predicted[y == c] == c)) for c in (True, False) if np.any(y == c)]
    return {
        "n": len(y),
        "positive_share": float(y.mean()) if len(y) else float("nan"),
        "accuracy": float(np.mean(predicted == y)) if len(y) else float("nan"),
        "balanced_accuracy": float(np.mean(recalls)) if recalls else float("nan"),
        "auc": auc(y, probability),
        "kappa": cohen_kappa(predicted, y),
    }
