"""Issue 12, pure core: metric comparison direction, partial data, ties, splitter, alpha grid,
Dawid-Skene, modified Kendall tau (RoSE's modified_kendall_tau_summary, Deutsch et al. 2022)."""

import math

import numpy as np
import pytest
from scipy import stats

from annotation.text import split_sentences
from scoring.stats.bootstrap import paired_bootstrap, paired_bootstrap_partial, resample_indices, system_cis_partial
from scoring.stats.correlation import modified_kendall, modified_kendall_summary
from scoring.stats.dawid_skene import dawid_skene
from scoring.stats.metric_comparison import compare_metrics
from scoring.stats.normalization import DEFAULT_GRID, choose_alpha, grid_edge


def human_and_metrics(seed=0, n=60, m=8):
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.2, 0.6, m)
    H = np.clip(quality + rng.normal(0, 0.15, (n, m)), 0, 1)
    good = H + rng.normal(0, 0.05, H.shape)  # close to the humans
    bad = rng.random((n, m))  # unrelated
    return H, good, bad


# --- 1. the better metric first ---------------------------------------------------------------


@pytest.mark.parametrize("granularity", ["summary", "system"])
def test_metric_comparison_puts_the_better_metric_first(granularity):
    H, good, bad = human_and_metrics()
    # The worse metric passed first (as "a" < "b" in name order): the answer still names the better.
    result = compare_metrics(
        H, bad, good, granularity=granularity, method="kendall", n_permutations=500, n_resamples=500, rng=1
    )
    assert result.better == 1 and result.delta > 0
    assert result.p_permutation < 0.05 and result.p_bootstrap < 0.05
    swapped = compare_metrics(
        H, good, bad, granularity=granularity, method="kendall", n_permutations=500, n_resamples=500, rng=1
    )
    assert swapped.better == 0 and swapped.delta == pytest.approx(result.delta)


def rose_bootstrap_summ_loop(H, X, Y, method, idx_stream):
    """RoSE's bootstrap_summ on given resamples, X the better metric; ties count against."""
    corr = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    values = lambda M: np.array([np.nan_to_num(corr(H[i], M[i])[0]) for i in range(len(H))])  # noqa: E731 - a one-line key function
    diff = values(X) - values(Y)
    return np.mean([diff[row].mean() <= 1e-12 for row in idx_stream])


def rose_bootstrap_system_loop(H, X, Y, method, idx_stream):
    corr = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    out = []
    for row in idx_stream:
        h, x, y = H[row].mean(axis=0), X[row].mean(axis=0), Y[row].mean(axis=0)
        out.append(np.nan_to_num(corr(h, x)[0]) - np.nan_to_num(corr(h, y)[0]) <= 1e-12)
    return np.mean(out)


@pytest.mark.parametrize("method", ["pearson", "kendall"])
def test_bootstrap_p_values_are_roses_on_the_same_resamples(method):
    H, good, _ = human_and_metrics(seed=3, n=25, m=6)
    noisy = H + np.random.default_rng(9).normal(0, 0.3, H.shape)  # a close contest with good
    for granularity, loop in (("summary", rose_bootstrap_summ_loop), ("system", rose_bootstrap_system_loop)):
        r = compare_metrics(
            H,
            noisy,
            good,
            granularity=granularity,
            method=method,
            n_permutations=10,
            n_resamples=400,
            rng=np.random.default_rng(5),
        )
        # compare_metrics draws the permutation swaps first, then the bootstrap resamples.
        gen = np.random.default_rng(5)
        gen.random((10, len(H)))
        idx = np.concatenate(list(resample_indices(len(H), 400, gen)))
        better, worse = (noisy, good) if r.better == 0 else (good, noisy)
        assert r.p_bootstrap == loop(H, better, worse, method, idx)


def test_permutation_ties_count_against_significance():
    H, good, _ = human_and_metrics(n=10, m=5)
    # Two identical metrics: every permutation reproduces the observed difference (0): p = 1.
    result = compare_metrics(H, good, good.copy(), granularity="system", n_permutations=200, n_resamples=200, rng=0)
    assert result.delta == 0
    assert result.p_permutation == 1.0 and result.p_bootstrap == 1.0


# --- 2. partial data: score, CI and n from the same documents -----------------------------------


def partial_matrix(seed=0, n=100, m=6, missing=50):
    rng = np.random.default_rng(seed)
    scores = np.clip(rng.normal(0.4, 0.2, (n, m)) + np.linspace(0, 0.1, m), 0, 1)
    scores[:missing, 0] = np.nan  # system 0 judged on the last 50 documents only
    scores[:missing, 1] += 0.5  # ... where system 1 happens to do much better than on the rest
    return np.clip(scores, 0, 1)


def test_each_ci_brackets_its_own_score_with_missing_documents():
    scores = partial_matrix()
    means, low, high, n = system_cis_partial(scores, n_resamples=2000, rng=1)
    assert n.tolist() == [50, 100, 100, 100, 100, 100]
    assert means == pytest.approx(np.nanmean(scores, axis=0))
    assert ((low <= means) & (means <= high)).all()


def test_complete_data_keeps_the_shared_resamples():
    from scoring.stats.bootstrap import system_cis

    scores = np.random.default_rng(2).random((30, 4))
    full = system_cis(scores, n_resamples=500, rng=3)
    partial = system_cis_partial(scores, n_resamples=500, rng=3)
    for a, b in zip(full, partial[:3], strict=False):
        assert np.array_equal(a, b)


def test_paired_tests_use_the_documents_both_systems_share():
    scores = partial_matrix()
    p, n = paired_bootstrap_partial(scores, n_resamples=1000, rng=4)
    assert n[0, 1] == 50 and n[1, 2] == 100 and n[1, 0] == 50
    shared = ~np.isnan(scores[:, 0])
    alone = paired_bootstrap(scores[shared][:, :2], n_resamples=1000, rng=np.random.default_rng(4))
    # The pairs with system 0 are tested on exactly its 50 documents, on resamples of their own.
    assert p[0, 1] == alone[0, 1] and p[1, 0] == alone[1, 0]


# --- 4. the splitter never yields a sentence without a letter or digit --------------------------


def test_splitter_merges_a_lone_quote_into_its_sentence():
    text = (
        "Twenty-times champion jump jockey Sir Anthony McCoy has described having a statue put up "
        "in his honour at Cheltenham as 'flattering.'"
    )
    sentences = split_sentences(text)
    assert sentences == [text]
    assert sum(len(s.split()) for s in sentences) == len(text.split()) == 21
    for text in ["Hello there. ' And then. --", "... Start here. It ends.", '"Quoted." " Next one."']:
        parts = split_sentences(text)
        assert all(any(c.isalnum() for c in s) for s in parts)
        assert " ".join(parts).split() == text.split()


# --- 6. the alpha grid says when its best value is at an edge -----------------------------------


def test_grid_edge_is_reported():
    rng = np.random.default_rng(0)
    words = rng.integers(20, 120, 400).astype(float)
    ref = np.full(400, 20.0)
    scores = np.clip(words / 150 + rng.normal(0, 0.02, 400), 0, 1)  # longer summaries score higher
    # On RoSE's grid the best alpha (3) is inside; on a coarser grid it sits at an edge.
    alpha, _ = choose_alpha(scores, words, ref)
    assert alpha == 3.0 and grid_edge(alpha, DEFAULT_GRID) is None
    alpha, _ = choose_alpha(scores, words, ref, grid=(0.5, 1.0, 2.0, 3.0))
    assert alpha == 3.0 and grid_edge(alpha, (0.5, 1.0, 2.0, 3.0)) == "high"
    alpha, _ = choose_alpha(scores, words, ref, grid=(5.0, 10.0, 20.0))
    assert alpha == 5.0 and grid_edge(alpha, (5.0, 10.0, 20.0)) == "low"


# --- Dawid-Skene ----------------------------------------------------------------------------------


def simulated_crowd(seed, items=3000, workers=40, per_item=3, spammer_share=0.3):
    """Items with a true 0/1 label; good workers right 85% of the time, spammers answer
    'present' 90% of the time whatever the truth (a spammer who does not read the summary)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(items) < 0.45
    spammer = np.zeros(workers, dtype=bool)
    spammer[rng.choice(workers, round(spammer_share * workers), replace=False)] = True
    item_ids = np.repeat(np.arange(items), per_item)
    worker_ids = np.concatenate([rng.choice(workers, per_item, replace=False) for _ in range(items)])
    right = rng.random(item_ids.size) < 0.85
    honest = np.where(right, truth[item_ids], ~truth[item_ids])
    lazy = rng.random(item_ids.size) < 0.9
    labels = np.where(spammer[worker_ids], lazy, honest)
    return truth, item_ids, worker_ids, labels, spammer


@pytest.mark.parametrize("seed", range(3))
def test_dawid_skene_agrees_with_experts_at_least_as_often_as_majority(seed):
    truth, items, workers, labels, spammer = simulated_crowd(seed)
    votes = np.bincount(items, weights=labels.astype(float))
    total = np.bincount(items)
    majority = 2 * votes > total
    result = dawid_skene(items, workers, labels)
    majority_agreement = np.mean(majority == truth)
    ds_agreement = np.mean(result.labels == truth)
    assert ds_agreement >= majority_agreement
    assert ds_agreement > majority_agreement + 0.03
    # Spammers are recognized: their confusion matrix says they ignore the truth.
    informativeness = result.sensitivity + result.specificity - 1
    assert informativeness[spammer].max() < informativeness[~spammer].min()


def test_dawid_skene_starts_from_the_majority_and_keeps_unanimous_items():
    items = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    workers = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2])
    labels = np.array([1, 1, 1, 0, 0, 0, 1, 1, 1], dtype=bool)
    result = dawid_skene(items, workers, labels)
    assert result.labels.tolist() == [True, False, True]
    assert ((result.posterior >= 0) & (result.posterior <= 1)).all()
    one = dawid_skene(np.array([5]), np.array([9]), np.array([True]))
    assert one.items.tolist() == [5] and one.labels.tolist() == [True]


# --- modified Kendall tau -------------------------------------------------------------------------


def rose_modified_kendall_tau_summary(humans, cands, pairs):
    """RoSE's correlation.modified_kendall_tau_summary on (documents x systems) arrays."""
    score = 0.0
    for i in range(humans.shape[0]):
        same = different = tie1 = tie2 = 0
        for a, b in pairs:
            if humans[i, a] == humans[i, b]:
                if cands[i, a] != cands[i, b]:
                    tie1 += 1
            elif cands[i, a] == cands[i, b]:
                tie2 += 1
            elif (humans[i, a] - humans[i, b]) * (cands[i, a] - cands[i, b]) > 0:
                same += 1
            else:
                different += 1
        score += (same - different) / (math.sqrt((same + different + tie1) * (same + different + tie2)) + 1e-10)
    return score / humans.shape[0]


def test_summary_level_modified_kendall_is_roses():
    rng = np.random.default_rng(7)
    H = rng.integers(0, 5, (30, 6)) / 4  # many ties, as ACU fractions have
    M = rng.integers(0, 4, (30, 6)) / 3
    pairs = [(0, 1), (0, 2), (1, 3), (2, 5), (4, 5), (3, 4)]
    assert modified_kendall_summary(H, M, pairs) == pytest.approx(
        rose_modified_kendall_tau_summary(H, M, pairs), abs=1e-12
    )
    every = [(a, b) for a in range(6) for b in range(a + 1, 6)]
    assert modified_kendall_summary(H, M) == pytest.approx(rose_modified_kendall_tau_summary(H, M, every), abs=1e-12)


def test_system_level_modified_kendall_handles_ties_as_tau_b():
    human = np.array([0.30, 0.35, 0.35, 0.50, 0.41])
    metric = np.array([0.20, 0.25, 0.10, 0.40, 0.40])
    assert modified_kendall(human, metric) == pytest.approx(stats.kendalltau(human, metric).statistic)
    # On a subset of pairs: concordant C, discordant D, T tied in humans only, U in the metric only.
    pairs = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]  # C: (0,1),(2,3),(0,4)  T: (1,2)  U: (3,4)
    assert modified_kendall(human, metric, pairs) == pytest.approx(3 / math.sqrt(4 * 4))
