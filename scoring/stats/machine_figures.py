"""Figures of a machine round from flat per-pair arrays: summary and system scores, their
correlations with the human scores, and the triage grid. Pure numpy; no Django imports.

Rows are (summary, ACU) pairs with their document and system codes. A summary's score is the
mean over its ACUs (of probabilities: the expected ACU score; of labels: the ACU score), a
system's the mean over its documents (scoring.md).
"""

import numpy as np

from . import calibration, correlation
from .bootstrap import percentile_interval

TRIAGE_GRID = (0.5, 0.6, 0.7, 0.8, 0.85, 0.875, 0.9, 0.925, 0.95, 0.99)
METHODS = ("pearson", "spearman", "kendall")


def group_means(keys, values) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique keys, mean of values per key)."""
    uniques, codes = np.unique(np.asarray(keys), return_inverse=True)
    sums = np.bincount(codes, weights=np.asarray(values, dtype=float), minlength=len(uniques))
    counts = np.bincount(codes, minlength=len(uniques))
    return uniques, sums / counts


def summary_table(summary, document, system, values) -> dict:
    """Per summary: its document, system and mean value."""
    ids, means = group_means(summary, values)
    first = np.unique(np.asarray(summary), return_index=True)[1]
    return {
        "summary": ids,
        "document": np.asarray(document)[first],
        "system": np.asarray(system)[first],
        "score": means,
    }


def matrix(table: dict, systems=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(documents, systems, documents x systems scores) over the documents every system has."""
    systems = np.unique(table["system"]) if systems is None else np.asarray(systems)
    per_system = [set(table["document"][table["system"] == s].tolist()) for s in systems.tolist()]
    documents = np.array(sorted(set.intersection(*per_system)) if per_system else [], dtype=np.int64)
    index = {
        (d, s): v
        for d, s, v in zip(table["document"].tolist(), table["system"].tolist(), table["score"].tolist(), strict=False)
    }
    values = np.array([[index[(d, s)] for s in systems.tolist()] for d in documents.tolist()], dtype=float)
    return documents, systems, values.reshape(len(documents), len(systems))


def system_means(table: dict) -> dict[int, tuple[float, int]]:
    """{system: (mean over its summaries, number of summaries)}."""
    out = {}
    for s in np.unique(table["system"]).tolist():
        mine = table["system"] == s
        out[int(s)] = (float(np.mean(table["score"][mine])), int(mine.sum()))
    return out


def correlations(human: np.ndarray, machine: np.ndarray, n_resamples: int = 1000, seed: int = 0) -> dict:
    """Summary- and system-level Pearson, Spearman and Kendall with 95% bootstrap CIs over
    documents: {"summary": {method: [value, low, high]}, "system": {...}}."""
    out: dict = {"documents": int(human.shape[0]), "systems": int(human.shape[1]) if human.ndim == 2 else 0}
    if human.shape[0] < 2 or human.shape[1] < 2:
        return out
    rng = np.random.default_rng(seed)
    for level in ("summary", "system"):
        out[level] = {}
        for method in METHODS:
            value, low, high = correlation.correlation_ci(
                human, machine, level, method, n_resamples=n_resamples, rng=rng
            )
            out[level][method] = [value, low, high]
    return out


def triage(probability, human, summary, document, system, grid=TRIAGE_GRID) -> list[dict]:
    """For each confidence c: pairs with p >= c or p <= 1 - c get the machine's label (p >= 0.5),
    the others keep the human label. Rows: share of (crowd) judgments saved, agreement of the
    combined labels with the human ones (all pairs, and the decided ones), the system-level
    Kendall tau between combined and human system scores, and the largest change of a system
    score. Only labelled pairs are given."""
    probability = np.asarray(probability, dtype=float)
    human = np.asarray(human, dtype=bool)
    machine = probability >= 0.5
    human_table = summary_table(summary, document, system, human)
    _, systems, human_matrix = matrix(human_table)
    human_systems = human_matrix.mean(axis=0) if human_matrix.size else np.zeros(len(systems))
    rows = []
    for c in grid:
        decided = (probability >= c) | (probability <= 1 - c)
        combined = np.where(decided, machine, human)
        _, _, combined_matrix = matrix(summary_table(summary, document, system, combined), systems)
        combined_systems = combined_matrix.mean(axis=0) if combined_matrix.size else np.zeros(len(systems))
        tau = float(correlation.kendall(human_systems, combined_systems)) if len(systems) > 1 else float("nan")
        rows.append(
            {
                "c": float(c),
                "decided_share": float(decided.mean()) if len(decided) else 0.0,
                "saved_share": float(decided.mean()) if len(decided) else 0.0,
                "agreement": float(np.mean(combined == human)) if len(human) else float("nan"),
                "decided_accuracy": float(np.mean(machine[decided] == human[decided]))
                if decided.any()
                else float("nan"),
                "system_kendall": tau,
                "max_system_change": float(np.max(np.abs(combined_systems - human_systems))) if len(systems) else 0.0,
            }
        )
    return rows


def classification_intervals(
    y, probability, documents, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> dict:
    """95% percentile bootstrap CIs over documents (documents drawn with replacement, each with all
    its pairs) of the AUC and the accuracy (label: p >= 0.5): {"auc": [low, high], "accuracy": [...]}."""
    y = np.asarray(y, dtype=bool)
    probability = np.asarray(probability, dtype=float)
    uniques, codes = np.unique(np.asarray(documents), return_inverse=True)
    if len(uniques) < 2:
        return {"auc": None, "accuracy": None, "resamples": 0}
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    rows = [order[starts[d] : starts[d + 1]] for d in range(len(uniques))]
    correct = np.bincount(codes, weights=((probability >= 0.5) == y).astype(float), minlength=len(uniques))
    sizes = np.bincount(codes, minlength=len(uniques)).astype(float)
    rng = np.random.default_rng(seed)
    aucs, accuracies = np.empty(n_resamples), np.empty(n_resamples)
    for i in range(n_resamples):
        drawn = rng.integers(0, len(uniques), size=len(uniques))
        accuracies[i] = correct[drawn].sum() / sizes[drawn].sum()
        picked = np.concatenate([rows[d] for d in drawn])
        aucs[i] = calibration.auc(y[picked], probability[picked])
    finite = aucs[~np.isnan(aucs)]  # a resample of one class has no AUC
    auc_interval = None
    if len(finite):
        low, high = percentile_interval(finite, confidence)
        auc_interval = [float(low), float(high)]
    acc_low, acc_high = percentile_interval(accuracies, confidence)
    return {"auc": auc_interval, "accuracy": [float(acc_low), float(acc_high)], "resamples": n_resamples}


def saved_at(rows: list[dict], tau: float = 0.95) -> dict | None:
    """The triage row saving the most crowd judgments while the system-level Kendall tau stays at
    least `tau` at its confidence and at every larger one of the grid (None when no row does)."""
    best = None
    for row in sorted(rows, key=lambda r: -r["c"]):
        value = row.get("system_kendall")
        if value is None or not value >= tau:  # NaN (one system) stops too
            break
        if best is None or row["saved_share"] > best["saved_share"]:
            best = row
    return best
