"""Krippendorff's alpha from per-unit value counts (shared/design/scoring.md, "Agreement").

Labels come as flat arrays, one entry per (unit, worker) label: memory grows with the number of
labels, never with workers x units. With ``m_u`` values in unit ``u`` and ``n`` = the number of
pairable values (units with ``m_u >= 2``; the others are dropped, as in Krippendorff 2011):

    alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_u [ P_u / (m_u - 1) ] / E

where ``P_u`` is the sum of the metric over the ordered pairs of values within unit ``u`` and
``E`` is the same sum over all ordered pairs of the ``n`` pairable values:
- nominal: ``P_u = m_u^2 - sum_c n_uc^2`` (``n_uc`` = count of value c in u), ``E = n^2 - sum_c n_c^2``;
- interval: ``P_u = 2 m_u SS_u`` (``SS_u`` = squared deviations from the unit mean),
  ``E = 2 n SS`` (squared deviations of the pairable values from their mean). Deviations from
  means rather than raw sums of squares keep the closed form free of cancellation.
Undefined alphas (no pairable unit, or a single value overall) are NaN; the ``krippendorff``
package raises instead.
"""
import numpy as np

from .aggregation import _codes_1d, group_codes


def _unit_sizes(units):
    """Dense unit codes, values per unit, and the mask of labels in pairable units."""
    codes, _ = _codes_1d(units)
    sizes = np.bincount(codes)
    return codes, sizes, sizes[codes] >= 2


def alpha_nominal(units, values) -> float:
    """Krippendorff's alpha, nominal metric, from one (unit, value) entry per label."""
    codes, sizes, pairable = _unit_sizes(units)
    values = np.asarray(values)
    vcodes, domain = _codes_1d(values[pairable])
    codes = codes[pairable]
    n, k = codes.size, len(domain)
    if n == 0 or k < 2:
        return float("nan")
    n_units = len(sizes)
    if n_units * k <= 4 * n + 1024:
        per_unit = np.bincount(codes * k + vcodes, minlength=n_units * k).reshape(n_units, k).astype(float)
        # Row and column sums as matrix-vector products: reductions over a length-2 axis are slow.
        square_sums = (per_unit * per_unit) @ np.ones(k)
        marginals = np.ones(n_units) @ per_unit
    else:  # many categories: count only the (unit, value) pairs that occur
        pair, counts = np.unique(codes.astype(np.int64) * k + vcodes, return_counts=True)
        square_sums = np.bincount(pair // k, weights=counts.astype(float) ** 2, minlength=n_units)
        marginals = np.bincount(pair % k, weights=counts, minlength=k)
    m = sizes.astype(float)
    within = np.divide(m * m - square_sums, m - 1, out=np.zeros_like(m), where=sizes >= 2)
    expected = float(n) * n - float((marginals.astype(float) ** 2).sum())
    return float(1.0 - (n - 1) * within.sum() / expected)


def alpha_interval(units, values) -> float:
    """Krippendorff's alpha, interval metric, from one (unit, value) entry per label."""
    codes, sizes, pairable = _unit_sizes(units)
    codes = codes[pairable]
    x = np.asarray(values, dtype=float)[pairable]
    n = x.size
    if n == 0:
        return float("nan")
    m = sizes.astype(float)
    unit_mean = np.divide(np.bincount(codes, weights=x, minlength=len(m)), m, out=np.zeros_like(m), where=sizes > 0)
    unit_ss = np.bincount(codes, weights=(x - unit_mean[codes]) ** 2, minlength=len(m))
    total_ss = float(((x - x.mean()) ** 2).sum())
    if total_ss == 0.0:
        return float("nan")
    within = np.divide(m * unit_ss, m - 1, out=np.zeros_like(m), where=sizes >= 2)
    return float(1.0 - (n - 1) * within.sum() / (n * total_ss))


def acu_level_alpha(summary_ids, acu_ids, worker_ids, present) -> float:
    """ACU-level alpha: units are (summary, ACU) pairs, values present/not present, nominal.

    One row per judgment; ``worker_ids`` is accepted for symmetry with ``summary_level_alpha``
    (the coincidence matrix does not need it) and must make (summary, ACU, worker) unique.
    """
    units, _ = group_codes(summary_ids, acu_ids)
    return alpha_nominal(units, np.asarray(present, dtype=bool))


def _worker_scores(summary_ids, acu_ids, worker_ids, present, acu_counts):
    """(summary code, summary keys, worker, score) per (summary, worker) pair."""
    s_codes, (summaries,) = group_codes(summary_ids)
    if acu_counts is None:
        _, (pair_summaries, _) = group_codes(s_codes, acu_ids)
        per_summary = np.bincount(pair_summaries, minlength=len(summaries)).astype(float)
    else:
        per_summary = np.zeros(len(summaries))
        per_summary[s_codes] = np.asarray(acu_counts, dtype=float)
    sw, (sw_summary, sw_worker) = group_codes(s_codes, worker_ids)
    hits = np.bincount(sw, weights=np.asarray(present, dtype=float), minlength=len(sw_summary))
    return sw_summary, summaries, sw_worker, hits / per_summary[sw_summary]


def summary_worker_scores(summary_ids, acu_ids, worker_ids, present, acu_counts=None):
    """Each worker's un-normalized score of each summary: ``(summaries, workers, scores)``.

    The score is (ACUs the worker judged present) / |A|, with ``acu_counts`` (optional, one value
    per judgment row) = |A|, the number of ACUs of the summary's reference; by default the
    number of distinct ACUs judged in that summary by anyone.
    """
    codes, summaries, workers, scores = _worker_scores(summary_ids, acu_ids, worker_ids, present, acu_counts)
    return summaries[codes], workers, scores


def summary_level_alpha(summary_ids, acu_ids, worker_ids, present, acu_counts=None) -> float:
    """Summary-level alpha: units are summaries, values each worker's score, interval metric.

    ``acu_counts`` as in ``summary_worker_scores``.
    """
    codes, _, _, scores = _worker_scores(summary_ids, acu_ids, worker_ids, present, acu_counts)
    return alpha_interval(codes, scores)
