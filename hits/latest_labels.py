"""One worker, one value per (summary, ACU): the rule every reader of labels pooled over rounds
applies (docs/scoring.md, "One worker, one value per pair"). Written once, here, below both apps
that read it: the gold answers (hits.gold, an expert's votes) and the scores and exports (scoring:
runs.data.load_judgments, results.exports.labels, machine.data). Pure numpy; no Django imports (an
import-linter contract), so the numerical core's callers and the bench may use it alike."""

import numpy as np


def latest_per_worker(summary_ids, acu_ids, worker_ids, order) -> np.ndarray:
    """Which rows count when a worker judged a (summary, ACU) pair more than once: per (summary,
    ACU, worker) the row with the largest ``order`` (the judgment id: the worker's latest), so each
    worker is one vote in the majority and one coder's value in the alphas. A boolean mask; all
    True when every (summary, ACU, worker) has one row (within one round it always has)."""
    summary, acu, worker = (np.asarray(k) for k in (summary_ids, acu_ids, worker_ids))
    n = len(summary)
    if n == 0:
        return np.zeros(0, dtype=bool)
    # Sort by (summary, ACU, worker, order); the last row of each (summary, ACU, worker) is its latest.
    ranked = np.lexsort((np.asarray(order), worker, acu, summary))
    s, a, w = summary[ranked], acu[ranked], worker[ranked]
    last = np.ones(n, dtype=bool)
    last[:-1] = (s[1:] != s[:-1]) | (a[1:] != a[:-1]) | (w[1:] != w[:-1])
    keep = np.zeros(n, dtype=bool)
    keep[ranked[last]] = True
    return keep
