"""Published figures recomputed independently of the app's code paths (an audit of what a lab
reports): power against the normal closed form and its monotonicity in n, the size of the paired
test under no difference, scores and paired tests of systems judged on different documents
against a dict-by-document loop, and the alphas' undefined edges at the helpers a run calls."""

import json
import math

import numpy as np
import pytest
from scipy import stats
from scipy.stats import norm, pearsonr

from scoring.runs.data import SummaryTable
from scoring.runs.services import system_figures
from scoring.stats.aggregation import normalized_acu_score
from scoring.stats.agreement import acu_level_alpha, summary_level_alpha
from scoring.stats.bootstrap import resample_indices
from scoring.stats.correlation import correlation_ci, correlation_ci_partial
from scoring.stats.power import power_analysis

from ..conftest import SHARED

pytestmark = pytest.mark.portable

SIZES = (20, 50, 100, 200, 400)


def _population(effect, sd=0.25, n=4000, seed=11):
    """Two systems on n documents whose per-document difference (first - second) has mean
    ``effect`` and standard deviation ``sd`` exactly; the second system listed first, so the app
    must orient the pair itself."""
    rng = np.random.default_rng(seed)
    d = rng.normal(0, 1, n)
    d = (d - d.mean()) / d.std() * sd + effect
    base = rng.random(n)
    return np.column_stack([base, base + d]), sd


def closed_form_power(effect, sd, n, alpha=0.05):
    """One-sided test of a mean at level alpha, the bootstrap's standard error being the plug-in
    sd / sqrt(n): P(mean > z_(1-alpha) * sd * sqrt((n - 1) / n) / sqrt(n))."""
    return norm.cdf(effect * math.sqrt(n) / sd - norm.ppf(1 - alpha) * math.sqrt((n - 1) / n))


def test_power_matches_the_closed_form_and_grows_with_n():
    scores, sd = _population(effect=0.04)
    result = power_analysis(scores, sizes=SIZES, n_trials=1000, n_resamples=2000, n_buckets=1, rng=5)
    assert result.pairs.tolist() == [[1, 0]]  # the better system first
    assert result.differences[0] == pytest.approx(0.04, abs=1e-12)
    got = result.power[:, 0]
    expected = np.array([closed_form_power(0.04, sd, n) for n in SIZES])
    # 1,000 trials: a Monte Carlo sd of at most 0.016; 0.05 is three of them.
    assert np.abs(got - expected).max() < 0.05, (got, expected)
    assert (np.diff(got) > 0).all(), got  # the closed form rises by 0.09 or more per step


def test_power_without_a_difference_is_the_tests_size():
    scores, _ = _population(effect=0.0, seed=12)
    result = power_analysis(scores, sizes=(100, 400), n_trials=1000, n_resamples=2000, n_buckets=1, rng=6)
    # Under no difference a one-sided test at 0.05 rejects about 5% of the time, whatever n.
    assert np.abs(result.power[:, 0] - 0.05).max() < 0.025, result.power[:, 0]


def _table_with_uneven_coverage():
    """40 documents (ids spread, positions shuffled), three systems: 'b' listed in the reverse
    document order of 'a', 'c' judged on 25 documents only, in a shuffled order."""
    rng = np.random.default_rng(21)
    doc_ids = 1000 + 7 * np.arange(40)
    positions = dict(zip(doc_ids.tolist(), rng.permutation(40).tolist(), strict=True))
    base = dict(zip(doc_ids.tolist(), rng.random(40).tolist(), strict=True))  # documents differ widely
    rows = []  # (system id, document id, ACU score, words)
    for d in doc_ids.tolist():
        rows.append((1, d, base[d] + rng.normal(0, 0.05), int(rng.integers(20, 80))))
    for d in doc_ids[::-1].tolist():
        rows.append((2, d, base[d] + 0.002 + rng.normal(0, 0.05), int(rng.integers(20, 80))))
    for d in rng.permutation(doc_ids)[:25].tolist():
        rows.append((3, d, base[d] - 0.01 + rng.normal(0, 0.05), int(rng.integers(20, 80))))
    system, document, score, words = (np.array(col) for col in zip(*rows, strict=True))
    table = SummaryTable(
        ids=np.arange(len(rows)) + 1,
        system=system,
        document=document,
        words=words,
        reference_words=np.full(len(rows), 50),
        acu_count=np.full(len(rows), 10),
        system_names={1: "a", 2: "b", 3: "c"},
        document_external={d: f"doc-{d}" for d in doc_ids.tolist()},
        document_position=positions,
    )
    return table, score


def _loop_p(by_doc_a, by_doc_b, n_resamples, seed):
    """Paired bootstrap p of 'a better than b' by a plain loop over the documents both have."""
    shared = sorted(set(by_doc_a) & set(by_doc_b))
    d = np.array([by_doc_a[k] - by_doc_b[k] for k in shared])
    rng = np.random.default_rng(seed)
    below = sum(d[rng.integers(0, len(d), len(d))].mean() <= 0 for _ in range(n_resamples))
    return below / n_resamples, len(shared)


def test_scores_and_paired_tests_pair_systems_by_document():
    table, score = _table_with_uneven_coverage()
    pos = np.arange(len(score))
    normalized = normalized_acu_score(score, table.words, table.reference_words, 2.0)
    figures = system_figures(table, pos, score, normalized, n_resamples=4000, rng=0)
    by_system = {name: {} for name in ("a", "b", "c")}
    by_system_norm = {name: {} for name in ("a", "b", "c")}
    for s, d, v, w in zip(table.system, table.document, score, table.words, strict=True):
        name = table.system_names[int(s)]
        by_system[name][int(d)] = float(v)
        by_system_norm[name][int(d)] = float(v) * math.exp(min(0.0, (1 - w / 50) / 2.0))
    for name, values in by_system.items():
        row = figures["systems"][name]
        assert row["acu"] == pytest.approx(np.mean(list(values.values())), abs=1e-12)
        assert row["normalized_acu"] == pytest.approx(np.mean(list(by_system_norm[name].values())), abs=1e-12)
        assert row["documents"] == len(values)
    pairwise = figures["pairwise"]
    index = {name: i for i, name in enumerate(pairwise["systems"])}
    for a, b in (("a", "b"), ("b", "a"), ("a", "c"), ("b", "c")):
        expected, shared = _loop_p(by_system[a], by_system[b], 20_000, seed=99)
        got = pairwise["p"][index[a]][index[b]]
        assert pairwise["n"][index[a]][index[b]] == shared
        # Independent resamples: Monte Carlo sd below 0.004 at 4,000 / 20,000 resamples.
        assert got == pytest.approx(expected, abs=0.015), (a, b, got, expected)
    # Paired by document the a - b difference is clear (p about 0.04); paired by position it is not (p about 0.4).
    assert pairwise["p"][index["a"]][index["b"]] < 0.1
    assert figures["documents_differ"] and figures["complete_documents"] == 25


@pytest.mark.parametrize("label", [True, False])
def test_alphas_of_all_equal_labels_are_undefined(label):
    """Every worker says the same of every ACU: no variation to agree on, so alpha is undefined
    (NaN, shown as "–" / null), not 1 and not 0 (the krippendorff package refuses such data)."""
    summaries = np.repeat(np.arange(6), 6)  # 6 summaries x 3 ACUs x 2 workers
    acus = np.tile(np.repeat(np.arange(3), 2), 6)
    workers = np.tile([1, 2], 18)
    present = np.full(len(summaries), label)
    assert math.isnan(acu_level_alpha(summaries, acus, workers, present))
    assert math.isnan(summary_level_alpha(summaries, acus, workers, present, np.full(len(summaries), 3)))


def test_alphas_of_one_rater_are_undefined():
    summaries, acus = np.repeat(np.arange(4), 3), np.tile(np.arange(3), 4)
    present = np.array([1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0], dtype=bool)
    workers = np.full(len(summaries), 7)
    assert math.isnan(acu_level_alpha(summaries, acus, workers, present))
    assert math.isnan(summary_level_alpha(summaries, acus, workers, present))


def test_whitespace_lengths_do_not_give_roses_released_normalized_scores():
    """docs/scoring.md's figures: RoSE counted tokenizer tokens, the app counts whitespace words, so
    the app's normalized score never equals RoSE's released one where the length penalty applies,
    and the published Ref-based vs normalized ACU figure (0.764) needs the file's own values."""
    raw = json.loads((SHARED / "data" / "rose-protocols" / "protocol-comparison.json").read_text())
    systems = sorted(raw[0]["annotations"])

    def matrix(key):
        return np.array([[e["annotations"][s][key] for s in systems] for e in raw], dtype=float)

    words = np.array([[len(e["system_outputs"][s].split()) for s in systems] for e in raw], dtype=float)
    reference = np.array([[len(e["reference"].split())] * len(systems) for e in raw], dtype=float)
    acu, released = matrix("acu"), matrix("normalized_acu")
    ours = normalized_acu_score(acu, words, reference, 2.0)
    penalized = released < acu - 1e-12
    assert penalized.sum() == 769
    assert not np.isclose(ours, released, rtol=0, atol=1e-9)[penalized].any()
    assert np.allclose(ours[~penalized & (words <= reference)], released[~penalized & (words <= reference)], atol=1e-15)
    ref_based = matrix("ref_based").mean(axis=0)
    assert round(pearsonr(ref_based, released.mean(axis=0))[0], 3) == 0.764
    assert round(pearsonr(ref_based, ours.mean(axis=0))[0], 3) == 0.780


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_system_level_ci_leaves_out_resamples_whose_correlation_is_undefined(method):
    """Few documents of discrete ACU scores: some resamples give every system the same human mean
    (a correlation undefined there). The interval is the percentiles of the resamples where it is
    defined, as on partial coverage; one undefined resample used to make the whole interval NaN."""
    rng = np.random.default_rng(0)
    X = np.round(rng.random((8, 3)) * 4) / 4
    Y = X + rng.normal(0, 0.2, X.shape)
    scipy_corr = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    samples, undefined = [], 0
    for idx in resample_indices(len(X), 1000, np.random.default_rng(1)):
        for row in idx:
            hx, hy = X[row].mean(axis=0), Y[row].mean(axis=0)
            if np.ptp(np.round(hx, 12)) == 0 or np.ptp(np.round(hy, 12)) == 0:
                undefined += 1
                continue
            samples.append(scipy_corr(hx, hy).statistic)
    assert 0 < undefined < 100
    value, low, high = correlation_ci(X, Y, "system", method, 1000, rng=1)
    assert value == pytest.approx(scipy_corr(X.mean(axis=0), Y.mean(axis=0)).statistic, abs=1e-12)
    assert [low, high] == pytest.approx(np.percentile(samples, [2.5, 97.5]).tolist(), abs=1e-9)
    assert (value, low, high) == pytest.approx(correlation_ci_partial(X, Y, "system", method, 1000, rng=1)[:3])


def test_pearson_of_equal_system_means_is_undefined_as_kendalls_and_spearmans():
    """Three systems with the same mean ACU score (8/9 each, summed in different orders, so the
    float means differ in the last bit): the system-level correlation is undefined under every
    coefficient (scipy on the exact means: constant input). Pearson used to publish 0.707."""
    from fractions import Fraction

    from scoring.stats.correlation import system_level

    thirds = [[1, 2, 5], [2, 5, 1], [5, 1, 2]]
    X = np.array(thirds, dtype=float) / 3
    Y = np.array([[1.1, 2.2, 3.0], [3.1, 1.2, 2.0], [2.1, 3.2, 1.0]])
    exact = [sum(Fraction(v, 3) for v in column) / 3 for column in zip(*thirds, strict=True)]
    assert len(set(exact)) == 1 and np.ptp(X.mean(axis=0)) > 0  # equal, yet not equal as floats
    for method in ("pearson", "spearman", "kendall"):
        assert math.isnan(system_level(X, Y, method)), method


DOCS_SUMMARY_LEVEL = {  # docs/protocols.md, "RoSE's own ratings": summary level, Pearson
    ("prior", "ref_free"): 0.526,
    ("prior", "ref_based"): 0.056,
    ("prior", "normalized_acu"): 0.083,
    ("prior", "length"): 0.439,
    ("ref_free", "ref_based"): 0.070,
    ("ref_free", "normalized_acu"): 0.075,
    ("ref_free", "length"): 0.548,
    ("ref_based", "normalized_acu"): 0.354,
    ("ref_based", "length"): -0.091,
    ("normalized_acu", "length"): 0.002,
}


def test_the_docs_summary_level_protocol_table_is_the_core_and_scipys():
    """The summary-level figures docs/protocols.md prints for RoSE's file: the pure core's
    (``protocols.correlation_matrix``) and a scipy loop over documents (a constant row counting
    as 0, RoSE's ``_cal_pearson``) both round to them."""
    from scoring.stats.protocols import correlation_matrix

    raw = json.loads((SHARED / "data" / "rose-protocols" / "protocol-comparison.json").read_text())
    systems = sorted(raw[0]["annotations"])
    measures = {
        key: np.array([[e["annotations"][s][key] for s in systems] for e in raw], dtype=float)
        for key in ("prior", "ref_free", "ref_based", "normalized_acu")
    }
    measures["length"] = np.array([[len(e["system_outputs"][s].split()) for s in systems] for e in raw], dtype=float)
    core = {(e["a"], e["b"]): e for e in correlation_matrix(measures, "summary", "pearson", n_resamples=50, rng=0)}
    for (a, b), figure in DOCS_SUMMARY_LEVEL.items():
        rows = [
            pearsonr(x, y)[0] if np.ptp(x) and np.ptp(y) else 0.0 for x, y in zip(measures[a], measures[b], strict=True)
        ]
        assert round(float(np.mean(rows)), 3) == figure, (a, b)
        assert core[a, b]["value"] == pytest.approx(np.mean(rows), abs=1e-12) and core[a, b]["documents"] == 100
