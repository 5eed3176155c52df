"""Krippendorff's alpha through the `krippendorff` package, from per-unit value counts
(shared/design/scoring.md, "Agreement").

Labels come as flat arrays, one entry per (unit, worker) label, and become the package's
`value_counts` input (units x values counts, Krippendorff's coincidence data): memory grows
with the units and the distinct values, never with workers x units, so hundreds of MTurk
workers each judging a few units cost nothing extra. Units with a single value are not
pairable and are dropped (Krippendorff 2011). Undefined alphas (no pairable unit, a single
value overall) are NaN, never an exception.
"""

import krippendorff
import numpy as np

from .aggregation import _codes_1d, group_codes


def value_counts(units, values) -> tuple[np.ndarray, np.ndarray]:
    """The units x values count matrix of the pairable units (those with two or more values),
    and the sorted value domain: the `value_counts` input of the krippendorff package. Its size
    grows with units x distinct values, never with the number of workers."""
    codes, _ = _codes_1d(units)
    sizes = np.bincount(codes)
    pairable = sizes[codes] >= 2
    values = np.asarray(values)[pairable]
    unit_codes, _ = _codes_1d(codes[pairable])
    value_codes, domain = _codes_1d(values)
    n_units = int(unit_codes.max()) + 1 if unit_codes.size else 0
    counts = np.zeros((n_units, len(domain)), dtype=float)
    np.add.at(counts, (unit_codes, value_codes), 1.0)
    return counts, domain


def _alpha(units, values, level: str) -> float:
    counts, domain = value_counts(units, values)
    if counts.shape[0] == 0 or len(domain) < 2:
        return float("nan")  # no pairable unit, or a single value overall: undefined
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            result = krippendorff.alpha(
                value_counts=counts, value_domain=np.asarray(domain, dtype=float), level_of_measurement=level
            )
    except (ValueError, ZeroDivisionError):
        return float("nan")
    return float(result)


def alpha_nominal(units, values) -> float:
    """Krippendorff's alpha, nominal metric, from one (unit, value) entry per label."""
    return _alpha(units, np.asarray(values).astype(float), "nominal")


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
