"""The protocol comparison of RoSE §5 (Liu et al., ACL 2023), on plain arrays.

Every measure is an n documents x m systems matrix with NaN where a summary has no value: the
mean rating under each protocol (Prior, Ref-free, Ref-based), the normalized ACU score standing
for the ACU protocol (Eq. 2), the summary length in words, any metric. Correlations, their
bootstrap intervals, system intervals and power are those of the ACU dashboards
(``correlation``, ``bootstrap``, ``power``, ``agreement``), computed here on the documents both
compared measures hold; nothing is re-implemented.

What is new here:
- ``alphas``: Krippendorff's alpha of one protocol's individual ratings, interval (the
  dashboards' ``agreement.alpha_interval``) and ordinal (the ``krippendorff`` package, from
  per-summary value counts: 1-5 ratings have at most five values, so its O(N V^2) is small);
- ``mix``: what a protocol follows: the least-squares weights of the standardized length and
  normalized ACU score in its summary-level ratings, with bootstrap intervals over documents;
- ``case_study``: RoSE's annotator case study (Appendix D): per annotator with enough
  examples, the summary-level correlation of their own Ref-free scores with their own Prior
  scores against that of their Ref-free scores with the other annotators' mean Ref-free score.
"""

from dataclasses import dataclass

import krippendorff
import numpy as np

from .agreement import alpha_interval
from .bootstrap import percentile_interval, resample_counts, resample_indices, system_cis
from .correlation import REL_TIE, correlation_ci, row_correlations_partial
from .power import MIN_DOCUMENTS, bucket_rows, power_analysis


def complete_rows(*matrices) -> np.ndarray:
    """Documents where every given matrix has a value for every system."""
    keep = np.ones(np.asarray(matrices[0]).shape[0], dtype=bool)
    for matrix in matrices:
        keep &= ~np.isnan(np.asarray(matrix, dtype=float)).any(axis=1)
    return keep


def rated_columns(*matrices) -> np.ndarray:
    """Systems with a value in every given matrix somewhere: a system a protocol does not rate
    (RoSE's LLM file rates the reference under Prior and Ref-free only) leaves that protocol's
    comparisons instead of emptying them."""
    keep = np.ones(np.asarray(matrices[0]).shape[1], dtype=bool)
    for matrix in matrices:
        keep &= ~np.isnan(np.asarray(matrix, dtype=float)).all(axis=0)
    return keep


def _restricted(*matrices):
    """(matrices on their rated systems, kept system mask, complete documents mask)."""
    columns = rated_columns(*matrices)
    kept = [np.asarray(m, dtype=float)[:, columns] for m in matrices]
    return kept, columns, complete_rows(*kept)


def correlation_entry(X, Y, granularity: str, method: str, n_resamples: int, rng) -> dict:
    """``{value, low, high, documents}``: ``correlation.correlation_ci`` on the complete documents."""
    (X, Y), _, keep = _restricted(X, Y)
    if keep.sum() < 2 or X.shape[1] < 2:
        return {"value": None, "low": None, "high": None, "documents": int(keep.sum())}
    value, low, high = correlation_ci(X[keep], Y[keep], granularity, method, n_resamples, rng=rng)
    clean = [None if np.isnan(v) else float(v) for v in (value, low, high)]
    return {"value": clean[0], "low": clean[1], "high": clean[2], "documents": int(keep.sum())}


def correlation_matrix(measures: dict, granularity: str, method="pearson", n_resamples=1000, rng=None) -> list[dict]:
    """Every pair of measures (in the given order): ``{a, b, value, low, high, documents}``."""
    rng = np.random.default_rng(rng)
    names = list(measures)
    return [
        {"a": a, "b": b, **correlation_entry(measures[a], measures[b], granularity, method, n_resamples, rng)}
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ]


def with_measure(measures: dict, other, granularity: str, method="pearson", n_resamples=1000, rng=None) -> dict:
    """Each measure's correlation with ``other`` (length, a metric)."""
    rng = np.random.default_rng(rng)
    return {name: correlation_entry(m, other, granularity, method, n_resamples, rng) for name, m in measures.items()}


def tie_ranks(means) -> tuple[np.ndarray, np.ndarray]:
    """(order best first, the rank at each position): means within ``correlation.REL_TIE`` of each
    other are tied (equal means of 1-5 ratings differ by the rounding of their sums) and share the
    rank of the first of them (1, 2, 2, 4), listed in their given order (the systems' names)."""
    means = np.asarray(means, dtype=float)
    tolerance = REL_TIE * max(float(np.abs(means).max(initial=0.0)), 1.0)
    ranks = np.empty(len(means), dtype=int)  # per system
    previous = -1
    for position, j in enumerate(np.argsort(-means, kind="stable")):
        tied = previous >= 0 and means[previous] - means[j] <= tolerance
        ranks[j] = ranks[previous] if tied else position + 1
        previous = j
    order = np.lexsort((np.arange(len(means)), ranks))
    return order, ranks[order]


def ranking(scores, systems, n_resamples=1000, confidence=0.95, rng=None) -> list[dict]:
    """Systems best first by their mean over the complete documents, with ``bootstrap.system_cis``
    and that number of documents; tied means share a rank (``tie_ranks``, ``tied`` True)."""
    (scores,), columns, keep = _restricted(scores)
    systems = [name for name, kept in zip(systems, columns, strict=True) if kept]
    if not keep.any():
        return []
    means, low, high = system_cis(scores[keep], n_resamples, confidence, rng)
    order, ranks = tie_ranks(means)
    return [
        {
            "rank": int(ranks[r]),
            "tied": int((ranks == ranks[r]).sum()) > 1,
            "system": systems[j],
            "mean": float(means[j]),
            "low": float(low[j]),
            "high": float(high[j]),
            "documents": int(keep.sum()),
        }
        for r, j in enumerate(order)
    ]


def power(scores, sizes=(10, 50, 100, 200), n_trials=200, n_resamples=1000, alpha=0.05, n_buckets=5, rng=None) -> dict:
    """``power.power_analysis`` on the complete documents: power per sample size for each bucket
    of system-pair differences (RoSE Fig. 7, in the dashboards' form), and over all pairs. Fewer
    than ``power.MIN_DOCUMENTS`` complete documents (the dashboards' rule), or fewer than two systems
    rated (no pair to tell apart), give no power; ``systems`` says how many were rated."""
    (scores,), _, keep = _restricted(scores)
    documents = int(keep.sum())
    empty = {
        "sizes": list(sizes),
        "buckets": [],
        "mean": [],
        "documents": documents,
        "systems": int(scores.shape[1]),
        "min_documents": MIN_DOCUMENTS,
    }
    if documents < MIN_DOCUMENTS or scores.shape[1] < 2:
        return empty
    result = power_analysis(scores[keep], sizes, n_trials, n_resamples, alpha, n_buckets, rng)
    return empty | {
        "sizes": [int(n) for n in result.sizes],
        "buckets": bucket_rows(result),
        "mean": result.power.mean(axis=1).tolist(),
    }


def alphas(units, values) -> dict:
    """Krippendorff's alpha of one protocol's ratings, one (unit, value) entry per rating (a
    unit is a summary): interval (``agreement.alpha_interval``) and ordinal (the ``krippendorff``
    package from value counts). NaN (None) when undefined."""
    units, values = np.asarray(units), np.asarray(values, dtype=float)
    if not len(values):
        return {"interval": None, "ordinal": None, "ratings": 0}
    interval = alpha_interval(units, values)
    unit_keys, unit_codes = np.unique(units, return_inverse=True)
    domain, value_codes = np.unique(values, return_inverse=True)
    counts = np.zeros((len(unit_keys), len(domain)))
    np.add.at(counts, (unit_codes.ravel(), value_codes.ravel()), 1)
    pairable = counts.sum(axis=1) >= 2
    ordinal = float("nan")
    if pairable.sum() >= 1 and len(domain) >= 2:
        ordinal = krippendorff.alpha(value_counts=counts[pairable], value_domain=domain, level_of_measurement="ordinal")
    return {
        "interval": None if np.isnan(interval) else float(interval),
        "ordinal": None if np.isnan(ordinal) else float(ordinal),
        "ratings": int(len(values)),
    }


def _standardize(x):
    x = np.asarray(x, dtype=float)
    sd = x.std()
    return (x - x.mean()) / (sd if sd > 0 else 1.0)


def _weights(counts, y, design):
    """Weighted least squares (document resample counts as weights) per resample: (c x k)."""
    out = np.empty((len(counts), design.shape[1]))
    for i, w in enumerate(counts):
        sw = np.sqrt(w)
        out[i] = np.linalg.lstsq(design * sw[:, None], y * sw, rcond=None)[0]
    return out


def mix(scores, length, acu, n_resamples=1000, confidence=0.95, rng=None) -> dict:
    """What a protocol follows: ``score = c + w_length z(length) + w_acu z(acu)`` fitted by least
    squares over the summaries of the complete documents (z: standardized over them), with
    percentile bootstrap intervals over documents (a resample weighs each document's summaries
    by how often it was drawn)."""
    (scores, length, acu), _, keep = _restricted(scores, length, acu)
    n, m = int(keep.sum()), scores.shape[1]
    if n < 3:
        return {"length": None, "acu": None, "documents": n}
    y = scores[keep].ravel()
    design = np.column_stack([np.ones(n * m), _standardize(length[keep].ravel()), _standardize(acu[keep].ravel())])
    fitted = _weights(np.ones((1, n * m)), y, design)[0]
    samples = np.concatenate(
        [
            _weights(np.repeat(resample_counts(idx, n), m, axis=1), y, design)
            for idx in resample_indices(n, n_resamples, rng)
        ]
    )
    low, high = percentile_interval(samples, confidence)
    return {
        name: {"value": float(fitted[k]), "low": float(low[k]), "high": float(high[k])}
        for k, name in ((1, "length"), (2, "acu"))
    } | {"documents": n}


@dataclass
class Ratings:
    """One protocol's individual ratings, one entry each: document and system indices, rater."""

    documents: np.ndarray
    systems: np.ndarray
    raters: np.ndarray
    scores: np.ndarray

    def matrix(self, shape, keep) -> np.ndarray:
        """(n x m) mean of the ratings selected by ``keep``, NaN where there is none."""
        total, count = np.zeros(shape), np.zeros(shape)
        np.add.at(total, (self.documents[keep], self.systems[keep]), self.scores[keep])
        np.add.at(count, (self.documents[keep], self.systems[keep]), 1)
        with np.errstate(invalid="ignore"):
            return total / count


def case_study(prior: Ratings, ref_free: Ratings, shape, min_examples: int = 10, method: str = "pearson") -> dict:
    """RoSE's annotator case study. For each rater with Ref-free and Prior scores of at least two
    systems on at least ``min_examples`` documents: ``own_prior`` = summary-level correlation (mean
    over their documents of the correlation across systems, ``correlation.row_correlations_partial``)
    of their Ref-free scores with their own Prior scores; ``others`` = that of their Ref-free scores
    with the mean Ref-free score the other raters gave the same summaries. Raters whose own Ref-free
    agrees more with their own Prior than with the others judge by preference, not the document."""
    rows = []
    for rater in np.unique(ref_free.raters):
        own_free = ref_free.matrix(shape, ref_free.raters == rater)
        own_prior = prior.matrix(shape, prior.raters == rater)
        others = ref_free.matrix(shape, ref_free.raters != rater)
        both = np.where(np.isnan(own_prior) | np.isnan(others), np.nan, own_free)
        per_doc_prior = row_correlations_partial(both, np.nan_to_num(own_prior), method)
        per_doc_others = row_correlations_partial(both, np.nan_to_num(others), method)
        docs = ~np.isnan(per_doc_prior) & ~np.isnan(per_doc_others)
        if docs.sum() < min_examples:
            continue
        rows.append(
            {
                "rater": str(rater),
                "examples": int(docs.sum()),
                "own_prior": float(per_doc_prior[docs].mean()),
                "others": float(per_doc_others[docs].mean()),
            }
        )
    mean = {key: float(np.mean([r[key] for r in rows])) if rows else None for key in ("own_prior", "others")}
    return {"raters": rows, "mean": mean, "min_examples": min_examples}
