"""Per-worker quality: agreement with the other workers' majority and accuracy on gold items.

Definitions follow shared/design/scoring.md, "Summary scores": a label is compared with the
majority vote of the *other* workers on the same (summary, ACU), where a tie among them counts as
not present (the PyrXSum practice); a label whose pair nobody else judged is not compared.
Everything is vectorized over one row per judgment (summary_id, acu_id, worker_id, present).
"""

from dataclasses import dataclass

import numpy as np

from .aggregation import codes_1d, group_codes, majority_present


@dataclass
class WorkerQuality:
    """Per-worker arrays, aligned with ``workers`` (sorted worker ids)."""

    workers: np.ndarray
    labels: np.ndarray  # judgments given
    compared: np.ndarray  # judgments on pairs that someone else judged too
    agreement: np.ndarray  # share of compared judgments equal to the others' majority (NaN if none)
    gold_items: np.ndarray  # judgments on items with a gold label
    gold_accuracy: np.ndarray  # share of those equal to the gold label (NaN if none)


def align_gold(summary_ids, acu_ids, gold_summary_ids, gold_acu_ids, gold_present):
    """Gold label (1.0/0.0) of each judgment row, NaN where its (summary, ACU) has no gold label."""
    n = len(summary_ids)
    codes, (keys, _) = group_codes(
        np.concatenate([np.asarray(summary_ids), np.asarray(gold_summary_ids)]),
        np.concatenate([np.asarray(acu_ids), np.asarray(gold_acu_ids)]),
    )
    table = np.full(len(keys), np.nan)
    table[codes[n:]] = np.asarray(gold_present, dtype=float)
    return table[codes[:n]]


def _share(hits, total):
    return np.divide(hits, total, out=np.full(len(total), np.nan), where=total > 0)


def worker_quality(summary_ids, acu_ids, worker_ids, present, gold=None) -> WorkerQuality:
    """Leave-one-out majority agreement and gold accuracy of every worker.

    ``gold`` (optional) holds one value per judgment row: 1/0 for a gold item's label, NaN where
    there is none (``align_gold`` builds it from a table of gold items).
    """
    present = np.asarray(present, dtype=bool)
    pairs, _ = group_codes(summary_ids, acu_ids)
    votes = np.bincount(pairs, weights=present)[pairs]
    total = np.bincount(pairs)[pairs]
    # The others' votes: remove this worker's own label from the pair's counts.
    others_total = total - 1
    others_majority = majority_present(votes - present, others_total)
    compared = others_total > 0
    agree = compared & (present == others_majority)

    w, workers = codes_1d(worker_ids)
    k = len(workers)
    n_compared = np.bincount(w, weights=compared, minlength=k)
    if gold is None:
        has_gold = np.zeros(present.size, dtype=bool)
        correct = has_gold
    else:
        gold = np.asarray(gold, dtype=float)
        has_gold = ~np.isnan(gold)
        correct = has_gold & (present == (gold > 0.5))
    n_gold = np.bincount(w, weights=has_gold, minlength=k)
    return WorkerQuality(
        workers=workers,
        labels=np.bincount(w, minlength=k),
        compared=n_compared.astype(np.int64),
        agreement=_share(np.bincount(w, weights=agree, minlength=k), n_compared),
        gold_items=n_gold.astype(np.int64),
        gold_accuracy=_share(np.bincount(w, weights=correct, minlength=k), n_gold),
    )
