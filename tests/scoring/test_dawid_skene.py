"""Dawid-Skene's EM (scoring/stats/dawid_skene.py) against the straightforward form of the same
updates: the per-(worker, answer) bincount and weight table change how it is computed, not what."""

import numpy as np
import pytest

from scoring.stats.aggregation import codes_1d, majority_present
from scoring.stats.dawid_skene import dawid_skene


def reference(item_ids, worker_ids, present, max_iter=100, tol=1e-4, smoothing=0.01):
    """The EM of Dawid and Skene (1979) for two classes, written out pass by pass."""
    items, _ = codes_1d(np.asarray(item_ids))
    workers, _ = codes_1d(np.asarray(worker_ids))
    said = np.asarray(present, dtype=bool)
    y = said.astype(float)
    n_items, n_workers = items.max() + 1, workers.max() + 1
    t = majority_present(
        np.bincount(items, weights=y, minlength=n_items), np.bincount(items, minlength=n_items)
    ).astype(float)
    labels_per_worker = np.bincount(workers, minlength=n_workers).astype(float)
    said_1 = np.bincount(workers, weights=y, minlength=n_workers)
    for iteration in range(1, max_iter + 1):
        prior = (t.sum() + smoothing) / (n_items + 2 * smoothing)
        tw = t[items]
        true_1 = np.bincount(workers, weights=tw, minlength=n_workers)
        said_1_true_1 = np.bincount(workers, weights=tw * y, minlength=n_workers)
        said_0_true_0 = (labels_per_worker - said_1) - (true_1 - said_1_true_1)
        sensitivity = (said_1_true_1 + smoothing) / (true_1 + 2 * smoothing)
        specificity = (said_0_true_0 + smoothing) / (labels_per_worker - true_1 + 2 * smoothing)
        contribution = np.where(
            said,
            (np.log(sensitivity) - np.log1p(-specificity))[workers],
            (np.log1p(-sensitivity) - np.log(specificity))[workers],
        )
        log_odds = np.log(prior) - np.log1p(-prior) + np.bincount(items, weights=contribution, minlength=n_items)
        new_t = 1.0 / (1.0 + np.exp(-np.clip(log_odds, -700, 700)))
        change = float(np.abs(new_t - t).max())
        t = new_t
        if change < tol:
            return t, sensitivity, specificity, prior, iteration, True
    return t, sensitivity, specificity, prior, max_iter, False


def crowd(seed, n_items=400, n_workers=12, per_item=3, spammers=3):
    rng = np.random.default_rng(seed)
    truth = rng.random(n_items) < 0.4
    accuracy = np.concatenate([rng.uniform(0.7, 0.95, n_workers - spammers), np.full(spammers, 0.5)])
    items, workers, labels = [], [], []
    for i in range(n_items):
        for w in rng.choice(n_workers, size=per_item, replace=False):
            items.append(i * 7 + 3)
            workers.append(w * 11 + 100)
            labels.append(bool(truth[i]) if rng.random() < accuracy[w] else not truth[i])
    return np.array(items), np.array(workers), np.array(labels)


@pytest.mark.parametrize("seed", range(6))
def test_em_equals_the_straightforward_updates(seed):
    items, workers, labels = crowd(seed)
    fit = dawid_skene(items, workers, labels)
    t, sensitivity, specificity, prior, iterations, converged = reference(items, workers, labels)
    assert fit.iterations == iterations and fit.converged == converged
    np.testing.assert_allclose(fit.posterior, t, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fit.sensitivity, sensitivity, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fit.specificity, specificity, rtol=0, atol=1e-12)
    assert fit.prior == pytest.approx(prior, abs=1e-12)
    assert (fit.labels == (t > 0.5)).all()


def test_em_stopped_early_equals_the_straightforward_updates_too():
    items, workers, labels = crowd(11, spammers=5)
    fit = dawid_skene(items, workers, labels, max_iter=3, tol=0.0)
    t, sensitivity, _, _, iterations, converged = reference(items, workers, labels, max_iter=3, tol=0.0)
    assert (fit.iterations, fit.converged) == (iterations, converged) == (3, False)
    np.testing.assert_allclose(fit.posterior, t, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fit.sensitivity, sensitivity, rtol=0, atol=1e-12)
