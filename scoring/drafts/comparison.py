"""Two unit sets against the same human units, with bootstrap intervals over documents.

Pure numpy: per document, each set's matched units, unit count and human unit count (from the
one-to-one matching of `quality`) and the Pearson correlation across systems of its all-unit
scores with the human scores (NaN counts as 0, as `summary_level` does). Documents are
resampled with `scoring.stats.bootstrap` (both sets on the same resamples, so the interval of
their difference is paired).
"""

from dataclasses import dataclass

import numpy as np

from scoring.stats.bootstrap import percentile_interval, resample_counts, resample_indices
from scoring.stats.correlation import METHODS

FIGURES = ("precision", "recall", "f1", "summary_pearson")


@dataclass(frozen=True)
class PerDocument:
    """One unit set, one row per document."""

    matched: np.ndarray
    units: np.ndarray
    human: np.ndarray
    pearson: np.ndarray  # corr across systems of the set's scores with the human scores; NaN -> 0


def per_document(matched, units, human, human_scores, unit_scores) -> PerDocument:
    """`human_scores` and `unit_scores`: documents x systems."""
    rows = np.nan_to_num(METHODS["pearson"](np.asarray(human_scores, float), np.asarray(unit_scores, float)), nan=0.0)
    return PerDocument(
        np.asarray(matched, float), np.asarray(units, float), np.asarray(human, float), np.asarray(rows, float)
    )


def figures(weights: np.ndarray, s: PerDocument) -> dict[str, np.ndarray]:
    """Micro precision, recall and F1 and the summary-level Pearson under document weights
    (resamples x documents: how often each document is drawn; a row of ones is the sample)."""
    matched, units, human = weights @ s.matched, weights @ s.units, weights @ s.human
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(units > 0, matched / np.where(units > 0, units, 1), 0.0)
        recall = np.where(human > 0, matched / np.where(human > 0, human, 1), 0.0)
        f1 = np.where(
            precision + recall > 0,
            2 * precision * recall / np.where(precision + recall > 0, precision + recall, 1),
            0.0,
        )
    pearson = weights @ s.pearson / weights.sum(axis=1)
    return {"precision": precision, "recall": recall, "f1": f1, "summary_pearson": pearson}


def compare(a: PerDocument, b: PerDocument, *, n_resamples: int = 10_000, confidence: float = 0.95, rng=0) -> dict:
    """Each set's figures with their intervals, and a − b with its paired interval."""
    n = len(a.matched)
    if n == 0 or len(b.matched) != n:
        raise ValueError("both unit sets need the same documents, at least one")
    ones = np.ones((1, n))
    point_a, point_b = figures(ones, a), figures(ones, b)
    samples_a: dict[str, list] = {k: [] for k in FIGURES}
    samples_b: dict[str, list] = {k: [] for k in FIGURES}
    for indices in resample_indices(n, n_resamples, rng):
        counts = resample_counts(indices, n)
        for store, s in ((samples_a, a), (samples_b, b)):
            for k, v in figures(counts, s).items():
                store[k].append(v)
    out: dict = {"documents": n, "resamples": n_resamples, "confidence": confidence}
    for name, point, samples in (("a", point_a, samples_a), ("b", point_b, samples_b)):
        out[name] = {}
        for k in FIGURES:
            low, high = percentile_interval(np.concatenate(samples[k]), confidence)
            out[name][k] = {"value": float(point[k][0]), "ci": [float(low), float(high)]}
    out["difference"] = {}
    for k in FIGURES:
        diff = np.concatenate(samples_a[k]) - np.concatenate(samples_b[k])
        low, high = percentile_interval(diff, confidence)
        out["difference"][k] = {"value": float(point_a[k][0] - point_b[k][0]), "ci": [float(low), float(high)]}
    return out
