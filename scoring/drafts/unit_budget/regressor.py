"""The budget regressor: gradient boosting over sentence features, out-of-fold by document (pure)."""

import numpy as np

N_FOLDS = 5


class RegressorUnavailable(Exception):
    """scikit-learn is not installed (it is in requirements.txt; an environment made before it was)."""


def _model(seed: int):
    try:
        from sklearn.ensemble import GradientBoostingRegressor
    except ImportError:
        raise RegressorUnavailable(
            "The budget regressor needs scikit-learn, which is not installed: .venv/bin/pip install -r requirements.txt"
        ) from None

    return GradientBoostingRegressor(
        n_estimators=150, max_depth=3, learning_rate=0.05, subsample=0.8, min_samples_leaf=5, random_state=seed
    )


def fit(X: np.ndarray, y: np.ndarray, seed: int = 0):
    """A regressor trained on all rows (for a dataset without human ACUs)."""
    return _model(seed).fit(np.asarray(X, dtype=float), np.asarray(y, dtype=float))


def out_of_fold(X: np.ndarray, y: np.ndarray, groups: np.ndarray, seed: int = 0, folds: int = N_FOLDS) -> np.ndarray:
    """Predictions for every row from a model that never saw its group (document): GroupKFold."""
    X, y, groups = np.asarray(X, dtype=float), np.asarray(y, dtype=float), np.asarray(groups)
    folds = min(folds, len(np.unique(groups)))
    _model(seed)  # a clear message when scikit-learn is missing
    from sklearn.model_selection import GroupKFold

    predictions = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=folds).split(X, y, groups):
        predictions[test] = _model(seed).fit(X[train], y[train]).predict(X[test])
    return predictions


def choose_human(scores: np.ndarray, share: float) -> np.ndarray:
    """Boolean mask of the round(share * n) sentences with the highest predicted error
    (ties broken by position, so the choice is reproducible)."""
    scores = np.asarray(scores, dtype=float)
    k = round(share * len(scores))
    order = np.lexsort((np.arange(len(scores)), -scores))
    mask = np.zeros(len(scores), dtype=bool)
    mask[order[:k]] = True
    return mask
