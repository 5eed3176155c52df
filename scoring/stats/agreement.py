"""Krippendorff's alpha from per-unit value counts (shared/design/scoring.md, "Agreement").

Labels come as flat arrays, one entry per (unit, worker) label. Alpha is 1 - D_o / D_e, from
Krippendorff's coincidence matrix o (o[c, k] = sum over units of n_uc (n_uk - [c = k]) /
(m_u - 1), with n_uc the unit's labels of value c and m_u its labels) and the distances
d(c, k) of the metric: D_o = sum o d / n, D_e = sum n_c n_k d / (n (n - 1)). For the two
metrics used here the sums over (c, k) reduce to per-unit sums, so no units x values (or
values x values) matrix is ever built and the cost is linear in the labels:
- nominal (d = [c != k]): sum o d = sum_u (m_u^2 - sum_c n_uc^2) / (m_u - 1), and
  sum n_c n_k d = n^2 - sum_c n_c^2;
- interval (d = (c - k)^2): sum o d = sum_u 2 m_u SS_u / (m_u - 1), and
  sum n_c n_k d = 2 n SS, with SS_u the squared deviations from the unit's mean and SS those
  from the mean of all pairable labels.
The `krippendorff` package builds a units x values x values array (O(N V^2): at 2,500
summaries and 300 distinct summary scores 1.8 GB and most of a recompute's time; at RoSE
scale more memory than the machine has; its issue #38), so it is the reference the tests and
`bench/scoring_bench.py` compare with, not the path the app computes on. Units with a single
label are not pairable and are dropped (Krippendorff 2011). Undefined alphas (no pairable
unit, a single value overall) are NaN, never an exception.
"""

import numpy as np

from .aggregation import codes_1d, group_codes


def _pairable(units, values):
    """(unit codes, values, labels per unit) of the units with two or more labels."""
    codes, _ = codes_1d(units)
    sizes = np.bincount(codes)
    keep = sizes[codes] >= 2
    unit_codes, _ = codes_1d(codes[keep])
    return unit_codes, np.asarray(values)[keep], np.bincount(unit_codes).astype(float)


def _alpha(units, values, level: str) -> float:
    unit_codes, values, m = _pairable(units, values)
    value_codes, domain = codes_1d(values)
    if m.size == 0 or len(domain) < 2:
        return float("nan")  # no pairable unit, or a single value overall: undefined
    n = float(m.sum())
    if level == "nominal":
        per_pair, (pair_units, _) = group_codes(unit_codes, value_codes)
        n_uc = np.bincount(per_pair).astype(float)
        same_u = np.bincount(pair_units, weights=n_uc * n_uc, minlength=m.size)
        observed = float(np.sum((m * m - same_u) / (m - 1)))
        n_c = np.bincount(value_codes).astype(float)
        expected = n * n - float(np.sum(n_c * n_c))
    else:
        x = np.asarray(values, dtype=float)
        unit_mean = np.bincount(unit_codes, weights=x) / m
        ss_u = np.bincount(unit_codes, weights=(x - unit_mean[unit_codes]) ** 2, minlength=m.size)
        observed = float(np.sum(2 * m * ss_u / (m - 1)))
        expected = 2 * n * float(np.sum((x - x.mean()) ** 2))
    # 1 - D_o / D_e with D_o = observed / n and D_e = expected / (n (n - 1)).
    return 1.0 - (n - 1) * observed / expected


def pairable_units(units) -> int:
    """How many units have two or more labels: the units an alpha is computed on (its n)."""
    codes, _ = codes_1d(units)
    return int(np.count_nonzero(np.bincount(codes) >= 2)) if codes.size else 0


def alpha_nominal(units, values) -> float:
    """Krippendorff's alpha, nominal metric, from one (unit, value) entry per label (values
    compared as given: booleans and integers are grouped without sorting)."""
    return _alpha(units, np.asarray(values), "nominal")


def alpha_interval(units, values) -> float:
    """Krippendorff's alpha, interval metric, from one (unit, value) entry per label."""
    return _alpha(units, np.asarray(values, dtype=float), "interval")


def acu_level_alpha(summary_ids, acu_ids, worker_ids, present) -> float:
    """ACU-level alpha: units are (summary, ACU) pairs, values present/not present, nominal.

    One row per judgment; ``worker_ids`` is accepted for symmetry with ``summary_level_alpha``
    (the coincidence matrix does not need it) and must make (summary, ACU, worker) unique.
    """
    units, _ = group_codes(summary_ids, acu_ids)
    return alpha_nominal(units, np.asarray(present, dtype=bool))


def _worker_scores(summary_ids, acu_ids, worker_ids, present, acu_counts):
    """(summary code, summary keys, worker, score) per (summary, worker) pair of a worker who
    judged every ACU judged in that summary.

    A worker who judged only some of them (a `pairs` round's follow-up HIT asks only the open
    ACUs) has no score of the summary: present / |A| over a few ACUs would read as a low score
    and as disagreement with the workers who judged them all.
    """
    s_codes, (summaries,) = group_codes(summary_ids)
    _, (pair_summaries, _) = group_codes(s_codes, acu_ids)
    judged = np.bincount(pair_summaries, minlength=len(summaries))  # distinct ACUs judged per summary
    if acu_counts is None:
        per_summary = judged.astype(float)
    else:
        per_summary = np.zeros(len(summaries))
        per_summary[s_codes] = np.asarray(acu_counts, dtype=float)
    sw, (sw_summary, sw_worker) = group_codes(s_codes, worker_ids)
    hits = np.bincount(sw, weights=np.asarray(present, dtype=float), minlength=len(sw_summary))
    whole = np.bincount(sw, minlength=len(sw_summary)) == judged[sw_summary]  # one row per (summary, ACU, worker)
    return sw_summary[whole], summaries, sw_worker[whole], (hits / per_summary[sw_summary])[whole]


def summary_worker_scores(summary_ids, acu_ids, worker_ids, present, acu_counts=None):
    """Each worker's un-normalized score of each summary: ``(summaries, workers, scores)``.

    The score is (ACUs the worker judged present) / |A|, with ``acu_counts`` (optional, one value
    per judgment row) = |A|, the number of ACUs of the summary's reference; by default the
    number of distinct ACUs judged in that summary by anyone. Only workers who judged every ACU
    judged in the summary have a score of it.
    """
    codes, summaries, workers, scores = _worker_scores(summary_ids, acu_ids, worker_ids, present, acu_counts)
    return summaries[codes], workers, scores


def summary_level_alpha(summary_ids, acu_ids, worker_ids, present, acu_counts=None) -> float:
    """Summary-level alpha: units are summaries, values each worker's score, interval metric.

    ``acu_counts`` as in ``summary_worker_scores``; a worker who judged only some of a summary's
    ACUs gives it no value.
    """
    codes, _, _, scores = _worker_scores(summary_ids, acu_ids, worker_ids, present, acu_counts)
    return alpha_interval(codes, scores)


def acu_level_units(summary_ids, acu_ids) -> int:
    """The (summary, ACU) pairs judged at least twice: the n of ``acu_level_alpha``."""
    units, _ = group_codes(summary_ids, acu_ids)
    return pairable_units(units)


def summary_level_units(summary_ids, acu_ids, worker_ids, present, acu_counts=None) -> int:
    """The summaries with at least two workers' scores: the n of ``summary_level_alpha``."""
    codes, _, _, _ = _worker_scores(summary_ids, acu_ids, worker_ids, present, acu_counts)
    return pairable_units(codes)
