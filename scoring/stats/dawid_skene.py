"""Dawid-Skene aggregation of present / not-present labels (Dawid and Skene 1979), by EM.

shared/design/scoring.md ("Refinements"): per worker a 2x2 confusion matrix (sensitivity
P(says present | present), specificity P(says not present | not present)) and one class prior,
fit by expectation-maximization starting from the majority vote (a tie counts as not present,
as in ``aggregation.majority_present``); the label of an item is its posterior P(present)
thresholded at 0.5 (exactly 0.5 is not present, as a majority tie). An item is one
(summary, ACU) pair. The M step adds ``smoothing`` pseudo-counts to every confusion cell (and
the prior) so that a worker seen only on one class keeps finite log-odds. When no item has two
labels (one expert per summary, as imported label files) the labels are returned unchanged. Majority vote stays
the default aggregation (as in RoSE); this is the second one offered beside it.

Anchored to gold (issue 42): with ``gold`` (item keys and their known answers), those items keep
their gold answer as posterior (0 or 1) in every E step, so the workers' confusion matrices are
measured against known answers there and a crowd agreeing with itself cannot move them. With
gold, one label per item is enough (the gold items tell workers apart).
Pure numpy; no Django.
"""

from dataclasses import dataclass

import numpy as np

from .aggregation import codes_1d, group_codes, majority_present


@dataclass
class DawidSkeneResult:
    items: np.ndarray  # the distinct item keys (sorted), aligned with posterior and labels
    posterior: np.ndarray  # P(present) per item
    labels: np.ndarray  # posterior > 0.5
    workers: np.ndarray  # the distinct worker keys (sorted)
    sensitivity: np.ndarray  # per worker P(says present | present)
    specificity: np.ndarray  # per worker P(says not present | not present)
    prior: float  # P(present)
    iterations: int
    converged: bool


def dawid_skene(
    item_ids, worker_ids, present, max_iter: int = 100, tol: float = 1e-4, smoothing: float = 0.01, gold=None
) -> DawidSkeneResult:
    """Fit the two-class Dawid-Skene model to one row per label (item, worker, present).

    ``gold``: ``(gold item keys, their answers)``; those of the judged items are clamped to their
    answer (module docstring). Stops when no posterior moves by ``tol`` or more in one iteration,
    or after ``max_iter`` iterations (``converged`` says which)."""
    items, item_keys = codes_1d(np.asarray(item_ids))
    workers, worker_keys = codes_1d(np.asarray(worker_ids))
    said = np.asarray(present, dtype=bool)
    y = said.astype(float)
    n_items, n_workers = len(item_keys), len(worker_keys)
    votes = np.bincount(items, weights=y, minlength=n_items)
    total = np.bincount(items, minlength=n_items)
    labels_per_worker = np.bincount(workers, minlength=n_workers).astype(float)
    said_1 = np.bincount(workers, weights=y, minlength=n_workers)
    t = majority_present(votes, total).astype(float)  # the starting point: the majority
    clamped, clamp_to = _gold_positions(item_keys, gold)
    t[clamped] = clamp_to
    if n_items == 0 or (total.max() < 2 and not clamped.size):
        # No item has two labels: worker reliability cannot be told from the truth (the model is
        # not identifiable and EM only drifts towards its smoothing), so the labels are kept.
        unknown = np.full(n_workers, np.nan)
        return DawidSkeneResult(
            item_keys, t, t > 0.5, worker_keys, unknown, unknown, float(t.mean()) if n_items else float("nan"), 0, True
        )
    converged, iteration = False, 0
    sensitivity = specificity = np.full(n_workers, 0.5)
    prior = 0.5
    # One code per (worker, answer): the M step's sums are one bincount over it, and the E step
    # looks each label's weight up in one table (half the passes over the labels of the
    # straightforward form, which tests/scoring/test_dawid_skene.py keeps as the reference).
    answer_codes = workers * 2 + said
    weights = np.empty(2 * n_workers)
    for iteration in range(1, max_iter + 1):  # noqa: B007 - the count of iterations is what matters
        # M step: prior and confusion matrices from the current posteriors.
        prior = (t.sum() + smoothing) / (n_items + 2 * smoothing)
        by_answer = np.bincount(answer_codes, weights=t[items], minlength=2 * n_workers)
        said_1_true_1 = by_answer[1::2]
        true_1 = by_answer[0::2] + said_1_true_1
        true_0 = labels_per_worker - true_1
        said_0_true_0 = (labels_per_worker - said_1) - (true_1 - said_1_true_1)
        sensitivity = (said_1_true_1 + smoothing) / (true_1 + 2 * smoothing)
        specificity = (said_0_true_0 + smoothing) / (true_0 + 2 * smoothing)
        # E step: log-odds of present per item, one weight per (worker, answer).
        weights[1::2] = np.log(sensitivity) - np.log1p(-specificity)  # said present
        weights[0::2] = np.log1p(-sensitivity) - np.log(specificity)  # said not present
        log_odds = (
            np.log(prior) - np.log1p(-prior) + np.bincount(items, weights=weights[answer_codes], minlength=n_items)
        )
        new_t = 1.0 / (1.0 + np.exp(-np.clip(log_odds, -700, 700)))
        new_t[clamped] = clamp_to
        change = float(np.abs(new_t - t).max()) if n_items else 0.0
        t = new_t
        if change < tol:
            converged = True
            break
    return DawidSkeneResult(
        item_keys, t, t > 0.5, worker_keys, sensitivity, specificity, float(prior), iteration, converged
    )


def _gold_positions(item_keys, gold):
    """(positions in item_keys, answers as 0/1) of the judged gold items."""
    if gold is None:
        return np.zeros(0, dtype=np.intp), np.zeros(0)
    keys, answers = (np.asarray(x) for x in gold)
    if not keys.size or not item_keys.size:
        return np.zeros(0, dtype=np.intp), np.zeros(0)
    at = np.clip(np.searchsorted(item_keys, keys), 0, item_keys.size - 1)
    judged = item_keys[at] == keys
    return at[judged], answers[judged].astype(float)


def pair_labels(summary_ids, acu_ids, worker_ids, present, **options):
    """Dawid-Skene label of every judged (summary, ACU) pair from one row per judgment:
    ``(summaries, acus, label, result)``, pairs in the order of ``aggregation.acu_labels``."""

    codes, (summaries, acus) = group_codes(summary_ids, acu_ids)
    result = dawid_skene(codes, worker_ids, present, **options)
    labels = np.zeros(len(summaries), dtype=bool)
    labels[result.items] = result.labels
    return summaries, acus, labels, result


def acu_scores_by_summary(summary_ids, acu_ids, worker_ids, present, acu_counts):
    """Un-normalized ACU score of every judged summary under Dawid-Skene labels:
    ``(summaries, scores)``, as ``aggregation.acu_scores_by_summary`` does for the majority."""
    summaries, _, labels, _ = pair_labels(summary_ids, acu_ids, worker_ids, present)
    per_pair, keys = codes_1d(summaries)
    present_acus = np.bincount(per_pair, weights=labels.astype(float), minlength=len(keys))
    s_codes, _ = codes_1d(summary_ids)
    denominators = np.zeros(len(keys))
    denominators[s_codes] = np.asarray(acu_counts, dtype=float)
    return keys, present_acus / denominators
