"""What the systems page shows from a stored scores run: the leaderboard on each system's own
documents or on the documents judged for every system, with small-sample and degenerate-interval
flags, the pairwise matrix with each pair's n, and the majority / Dawid-Skene comparison.
Reads run outputs only (no queries, no writes); the rows are rendered by templates/scoring/_*_row.html."""

import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
from django.template.defaultfilters import floatformat

from scoring.results.charts import significance_cells
from scoring.runs.services import SMALL_SAMPLE
from scoring.stats.multiple_testing import FAMILY_LEVEL, family_resamples, pairwise_holm

# The parts of a scores run's outputs the systems page shows (the others are not read).
SYSTEMS_PARTS = (
    "systems",
    "pairwise",
    "length_normalization",
    "common",
    "counts",
    "aggregation",
    "aggregations",
    "length_scatter",
)
# The parts read with the run on every request (the page's frame); the others only when the
# page's fragments of the run are not cached (`scoring.results.dashboard.systems_page`).
SYSTEMS_HEAD = ("systems", "counts")


CI_LEVEL = 0.95  # the level of every interval of a scores run (bootstrap.system_cis_partial's default)
FALSE_ALARMS = 2 * 0.05  # share of pairs without a real difference showing a p < 0.05 cell, either direction


def with_holm(pairwise: dict | None) -> dict | None:
    """A stored run's paired tests with their Holm-adjusted p-values over the family of system
    pairs (`multiple_testing.pairwise_holm`): ``p_holm`` beside ``p`` (same shape, null where
    ``p`` is) and ``holm_pairs``, the pairs adjusted over (those with a test). Computed on
    reading, so runs stored before it have them too; ``p`` and the other keys are unchanged."""
    if not pairwise or not pairwise.get("p"):
        return pairwise
    p = np.array([[np.nan if v is None else v for v in row] for row in pairwise["p"]], dtype=float)
    adjusted, family = pairwise_holm(p)
    p_holm = [[None if math.isnan(v) else v for v in row] for row in adjusted.tolist()]
    return {**pairwise, "p_holm": p_holm, "holm_pairs": family}


def pairwise_resamples(pairwise: dict | None, run_resamples):
    """The resamples behind a paired block's p-values: its own (`scoring.runs.services`, since the
    tests draw enough for the Holm family), else the run's (runs stored before)."""
    return (pairwise or {}).get("resamples") or run_resamples


def holm_method(family: int, resamples) -> dict:
    """What ``p_holm`` is: the correction, the p-values it adjusts, the family and its size, the
    level the systems page marks, and the bound an adjusted p of 0 stands for (no resample on the
    other side: each two-sided p below 2/resamples, so each adjusted one below that times the family)."""
    return {
        "key": "p_holm",
        "method": "Holm (1979) step-down",
        "controls": "family-wise error rate",
        "family": "system pairs with a paired test",
        "pairs": family,
        "adjusts": "each pair's two-sided p, min(1, 2 min(p[A][B], p[B][A]))",
        "p_holm": (
            "p_holm[A][B] = the pair's adjusted p for 'A better than B' in the direction the data favour "
            "(the smaller one-sided p), 1 in the other; monotone, capped at 1"
        ),
        "level": FAMILY_LEVEL,
        "zero_reads_below": min(1.0, 2 * family / resamples) if family and resamples else None,
        # The fewest resamples whose zero bound is below the level: fewer cannot show a pair significant.
        # What a scores run computed now draws for this family (runs stored before drew the run's
        # resamples, which may leave no pair able to show significant).
        "resamples_to_resolve": family_resamples(family, 0) if family else None,
    }


def methods(parameters: dict, systems: int, holm_pairs: int | None = None, pair_resamples: int | None = None) -> dict:
    """What a scores run's figures are, stated once for the systems page and the scores JSON: the
    interval's level, method and what it resamples; the paired test's sides, the comparisons it
    makes (``p`` uncorrected for them) and the Holm correction of ``p_holm`` over ``holm_pairs``
    pairs (all of them when not given) on ``pair_resamples`` (the paired block's `resamples`; runs
    stored before it drew the run's) (RoSE's test, scoring.md, "Statistics")."""
    resamples = parameters.get("n_resamples")
    pair_resamples = pair_resamples or resamples
    pairs = systems * (systems - 1) // 2
    return {
        "system_score": "mean over the documents the system was judged on of its summary scores",
        "ci": {
            "level": CI_LEVEL,
            "method": "percentile bootstrap",
            "resampled": "documents",
            "resamples": resamples,
            "seed": parameters.get("seed"),
        },
        "pairwise": {
            "test": "paired bootstrap",
            "score": "ACU score (un-normalized)",
            "resampled": "documents both systems share",
            "resamples": pair_resamples,
            "p": "p[A][B] = share of resamples whose mean of A - B is not above 0",
            "sides": (
                "one-sided per cell (A better than B); the cell of the system with the higher mean, "
                "chosen after seeing the data, is a two-sided test at twice its level"
            ),
            "pairs": pairs,
            "multiple_comparisons": "none",
            "expected_false_pairs_at_0_05": round(FALSE_ALARMS * pairs, 1),
            "holm": holm_method(pairs if holm_pairs is None else holm_pairs, pair_resamples),
        },
    }


def fixed(value, digits: int) -> str:
    """`value` with exactly `digits` decimals, rounded half up on its shortest decimal form, as the
    template filter floatformat (without its localization machinery, 40 times cheaper); "" for None."""
    if value is None:
        return ""
    return str(Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP))


def fixed_text(value, digits: int) -> str:
    """The `fixed` template filter: `fixed` for a non-negative finite float, floatformat for
    anything else (negative, None, text)."""
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return fixed(value, digits)
    return floatformat(value, digits)


def _degenerate(ci) -> bool:
    """An interval of zero width ([0.600, 0.600]): every resample gave the same mean."""
    return bool(ci) and ci[0] == ci[1]


def _rows(systems: dict, documents=None) -> list[tuple[str, dict]]:
    rows = []
    for name, s in sorted(systems.items(), key=lambda kv: -kv[1]["acu"]):
        n = s.get("documents", documents)
        rows.append(
            (
                name,
                {
                    **s,
                    "documents": n,
                    "small": n is not None and n < SMALL_SAMPLE,
                    "acu_ci_degenerate": _degenerate(s.get("acu_ci")),
                    "normalized_acu_ci_degenerate": _degenerate(s.get("normalized_acu_ci")),
                },
            )
        )
    return rows


def _shown(outputs: dict, use_common: bool) -> tuple[dict, dict | None]:
    """The systems and the paired tests shown: each on its own documents, or all on the
    documents judged for every system (whose n is that count)."""
    if not use_common:
        return outputs.get("systems", {}), with_holm(outputs.get("pairwise"))
    common = outputs["common"]
    lengths = {name: {"length": s.get("length")} for name, s in outputs.get("systems", {}).items()}
    shown = {
        name: {**lengths.get(name, {}), **s, "documents": common["documents"]} for name, s in common["systems"].items()
    }
    pairwise = common.get("pairwise")
    if pairwise:
        m = len(pairwise["systems"])
        pairwise = {**pairwise, "n": [[common["documents"]] * m for _ in range(m)]}
    return shown, with_holm(pairwise)


def _smallest_pair(pairwise: dict | None) -> int | None:
    """The fewest documents a pair of systems shares (None without paired tests)."""
    if not pairwise or not pairwise.get("n"):
        return None
    off = [v for i, row in enumerate(pairwise["n"]) for j, v in enumerate(row) if i != j]
    return min(off) if off else None


def _aggregation_rows(comparison: dict | None) -> list:
    if not comparison:
        return []
    return [
        (name, {"majority": a["majority"], "dawid_skene": a["dawid-skene"], "difference": a["difference"]})
        for name, a in sorted(comparison["systems"].items(), key=lambda kv: -(kv[1]["majority"] or 0))
    ]


def systems_view(outputs: dict, documents: str = "own", marked: str = "holm", resamples: int | None = None) -> dict:
    """Context for the leaderboard and the significance matrix. ``documents`` is "own" (each
    system on its judged documents, pairs on the documents they share) or "common" (every
    system on the documents judged for all of them, when those differ); ``marked`` the p-values
    the matrix colours: "holm" (Holm-adjusted over the pairs) or "raw" (uncorrected); ``resamples``
    those of the run (an adjusted p of 0 is coloured by the bound they give it)."""
    counts = outputs.get("counts", {})
    common = outputs.get("common")
    use_common = documents == "common" and bool(common)
    shown, pairwise = _shown(outputs, use_common)
    rows = _rows(shown)
    family = pairwise.get("holm_pairs") if pairwise else None
    resamples = pairwise_resamples(pairwise, resamples)
    zero = holm_method(family, resamples)["zero_reads_below"] if family else None
    names, matrix = significance_cells(pairwise, shown, marked, zero)
    for matrix_row in matrix:
        for cell in matrix_row["cells"]:  # marked * on the page: the pair shares few documents
            cell["small"] = cell["n"] is not None and cell["n"] < SMALL_SAMPLE
    smallest_pair = _smallest_pair(pairwise)
    fewest = min((s["documents"] for _, s in rows if s["documents"] is not None), default=None)
    comparison = outputs.get("aggregations")
    return {
        "systems": rows,
        "shown_systems": shown,
        "documents_view": "common" if use_common else "own",
        "documents_differ": bool(counts.get("documents_differ")),
        "common_documents": common["documents"] if common else counts.get("complete_documents"),
        "fewest_documents": fewest,
        "smallest_pair": smallest_pair,
        "small_sample": (fewest is not None and fewest < SMALL_SAMPLE)
        or (smallest_pair is not None and smallest_pair < SMALL_SAMPLE),
        "small_threshold": SMALL_SAMPLE,
        "any_degenerate": any(s["acu_ci_degenerate"] or s["normalized_acu_ci_degenerate"] for _, s in rows),
        "matrix_names": names,
        "matrix": matrix,
        "marked": "holm" if marked == "holm" and pairwise and "p_holm" in pairwise else "raw",
        "holm_pairs": family,
        "pair_resamples": resamples,
        "aggregation": outputs.get("aggregation", "majority"),
        "aggregation_rows": _aggregation_rows(comparison),
        "aggregation_comparison": comparison,
    }
