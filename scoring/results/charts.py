"""Chart.js configurations built from stored runs (plain dicts, rendered by static/js/charts.js)."""

import math

BLUE, ORANGE, GREY = "#2457c5", "#d9822b", "#8a93a3"
BUCKET_COLOURS = ["#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08306b"]


def _padded(values, include, pad: float) -> tuple[float, float] | None:
    """The span of every finite value (points and both ends of every interval) and the `include`
    values, widened by `pad` of it on each side; None when there is no finite value."""
    finite = [float(v) for v in list(values) + list(include) if v is not None and v == v]
    if not finite:
        return None
    lo, hi = min(finite), max(finite)
    span = hi - lo or max(abs(hi), 1.0) * 0.1
    return lo - pad * span, hi + pad * span


def axis_range(
    values, *, include=(), pad: float = 0.08, lower=None, upper=None, step: float = 0.05
) -> tuple[float, float]:
    """A y range that holds every value and the `include` values (`_padded`), rounded out to a
    multiple of `step` (so the end ticks read well) and clipped to `lower`/`upper` when given."""
    padded = _padded(values, include, pad)
    if padded is None:
        return (0.0 if lower is None else lower, 1.0 if upper is None else upper)
    lo, hi = padded
    lo, hi = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
    if lower is not None:
        lo = max(lo, lower)
    if upper is not None:
        hi = min(hi, upper)
    return (round(lo, 4) + 0.0, round(hi, 4) + 0.0)  # + 0.0: no "-0.0" tick


NICE_STEPS = (1, 2, 2.5, 5)


def _decimals(value: float) -> int:
    """The fewest decimals (up to 6) that write ``value`` exactly (0.25 -> 2, 0.1 -> 1, 2 -> 0)."""
    for d in range(7):
        if abs(round(value, d) - value) < 1e-9:
            return d
    return 6


def axis_ticks(values, *, include=(), pad: float = 0.08, lower=None, upper=None, most: int = 8) -> dict:
    """A y axis that holds every value (as `axis_range`) with a readable tick step: the step is the
    smallest 1, 2, 2.5 or 5 x 10^k giving at most ``most`` intervals, min and max are multiples of
    it (so every tick is), and ``decimals`` is the number of digits that writes every tick
    exactly, so no two tick labels read the same ("0.1" twice came from 0.05 and 0.1 shown with
    one decimal). Returns the Chart.js scale keys min, max and ticks.stepSize, plus ``decimals``
    (read by static/js/charts.js to format the ticks)."""
    padded = _padded(values, include, pad)
    if padded is None:  # nothing to show: the bounds, padded as one value would be
        padded = _padded([0.0 if lower is None else lower, 1.0 if upper is None else upper], (), pad)
    lo, hi = padded
    if lower is not None:
        lo = max(lo, lower)
    if upper is not None:
        hi = min(hi, upper)
    magnitude = 10.0 ** math.floor(math.log10(max(hi - lo, 1e-9) / most))
    for nice in (*NICE_STEPS, 10, 20, 25, 50):  # the first step whose rounded-out range has <= most intervals
        step = round(nice * magnitude, 12)
        first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
        if last - first <= most:
            break
    lo, hi = first * step, last * step
    if lower is not None:
        lo = max(lo, lower)
    if upper is not None:
        hi = min(hi, upper)
    lo, hi = round(lo, 10) + 0.0, round(hi, 10) + 0.0  # + 0.0: no "-0.0" tick
    decimals = max(_decimals(step), _decimals(lo), _decimals(hi))
    return {"min": lo, "max": hi, "ticks": {"stepSize": step}, "decimals": decimals}


def tick_labels(axis: dict) -> list[str]:
    """The labels Chart.js draws for an `axis_ticks` axis (min, then every step, then max), as
    static/js/charts.js formats them."""
    lo, hi, step, d = axis["min"], axis["max"], axis["ticks"]["stepSize"], axis["decimals"]
    values, k = [], 0
    while lo + k * step < hi - step * 1e-6:
        values.append(lo + k * step)
        k += 1
    values.append(hi)
    return [f"{v:.{d}f}" for v in values]


def run_labels(times: list[str]) -> list[str]:
    """Each run's time to the minute, to the second where runs share a minute, and numbered where
    they still share a label: no two ticks of the agreement chart read the same."""
    labels = [t[:16].replace("T", " ") for t in times]
    if len(set(labels)) < len(labels):
        labels = [t[:19].replace("T", " ") for t in times]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return out


def alpha_trend(trend: list[dict], rose: dict, zone: str = "") -> dict:
    """Both alphas per stored run (x = run number, labelled with its time, in `zone`, which the
    axis title names), with the RoSE reference values as dashed lines across the whole range."""
    labels = run_labels([t["at"] for t in trend])
    xs = list(range(len(trend)))
    span = [-0.5, len(trend) - 0.5] if trend else [0, 1]

    def series(key):
        return [{"x": x, "y": t[key]} for x, t in zip(xs, trend, strict=False)]

    def reference(value):
        return [{"x": span[0], "y": value}, {"x": span[1], "y": value}]

    # alpha lies in [-1, 1]: the axis shows 0 to 1 and reaches down to any negative alpha.
    values = [t[k] for t in trend for k in ("acu_level", "summary_level")]
    negative = any(v is not None and v < 0 for v in values)
    y_min, y_max = axis_range(
        values,
        include=(0, 1, rose["acu_level"], rose["summary_level"]),
        pad=0.04,
        lower=-1 if negative else 0,
        upper=1,
        step=0.1,
    )

    return {
        "type": "scatter",
        "data": {
            "datasets": [
                {
                    "label": "ACU level α",
                    "data": series("acu_level"),
                    "borderColor": BLUE,
                    "backgroundColor": BLUE,
                    "showLine": True,
                },
                {
                    "label": "Summary level α",
                    "data": series("summary_level"),
                    "borderColor": ORANGE,
                    "backgroundColor": ORANGE,
                    "showLine": True,
                },
                {
                    "label": f"RoSE ACU level {rose['acu_level']}",
                    "data": reference(rose["acu_level"]),
                    "borderColor": BLUE,
                    "showLine": True,
                    "reference": True,
                },
                {
                    "label": f"RoSE summary level {rose['summary_level']}",
                    "data": reference(rose["summary_level"]),
                    "borderColor": ORANGE,
                    "showLine": True,
                    "reference": True,
                },
            ],
        },
        "options": {
            "scales": {
                "x": {
                    "min": span[0],
                    "max": span[1],
                    "title": {"display": True, "text": f"scoring runs (times in {zone})" if zone else "scoring runs"},
                },
                "y": {"min": y_min, "max": y_max, "title": {"display": True, "text": "Krippendorff's α"}},
            },
            "plugins": {"title": {"display": True, "text": "Agreement over time"}, **_undefined_note(trend)},
        },
        "xLabels": labels,
    }


def _undefined_note(trend: list[dict]) -> dict:
    """A subtitle naming the runs whose α is undefined, which have no point: a round where each
    summary has one annotator showed an empty plot and no word why (it travels with the PNG)."""
    undefined = sum(1 for t in trend if t["acu_level"] is None or t["summary_level"] is None)
    if not undefined:
        return {}
    runs = "every scoring run" if undefined == len(trend) else f"{undefined} of {len(trend)} scoring runs"
    # two lines: Chart.js does not wrap a title, and one line overran a phone's chart
    text = [f"α undefined (–) in {runs}, so no point:", "it needs two annotators on a unit"]
    return {"subtitle": {"display": True, "text": text}}


def leaderboard_title(systems: dict) -> list[str]:
    """The leaderboard chart's title, which its PNG download carries alone: what the intervals are
    and the documents behind the scores (one n, or the range when systems were judged on
    different documents)."""
    counts = sorted({s["documents"] for s in systems.values() if s.get("documents") is not None})
    n = "" if not counts else f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    documents = f" (n = {n} per system)" if n else ""
    # Two lines (Chart.js draws a list as lines), so that a phone's narrow chart does not clip it.
    return ["System scores, 95% percentile bootstrap CIs", f"over documents{documents}"]


DODGE = 0.18  # the two scores of a system sit this far (in categories) left and right of its tick


def leaderboard(systems: dict) -> dict:
    """ACU and normalized ACU score per system with 95% CIs as error bars, best first. The two
    scores of a system stand side by side (ACU left, normalized right, `DODGE`), so neither hides
    the other, with a legend naming them."""
    ordered = sorted(systems.items(), key=lambda kv: -kv[1]["acu"])
    names = [n for n, _ in ordered]

    def points(key, ci, shift):
        return [
            {
                "x": i + shift,
                "y": s[key],
                "yMin": (s[ci] or [None, None])[0],
                "yMax": (s[ci] or [None, None])[1],
            }
            for i, (_, s) in enumerate(ordered)
        ]

    # The axis holds every interval (not only the points), so no whisker runs over the title.
    ends = [
        v
        for _, st in ordered
        for key in ("acu", "normalized_acu", "acu_ci", "normalized_acu_ci")
        for v in (st.get(key) if isinstance(st.get(key), (list, tuple)) else [st.get(key)])
    ]
    y_axis = axis_ticks(ends, pad=0.1, lower=0, upper=1)
    many = len(names) > 12
    return {
        "type": "scatter",
        "data": {
            "datasets": [
                {
                    "label": "ACU score",
                    "data": points("acu", "acu_ci", -DODGE),
                    "clip": False,
                    "borderColor": BLUE,
                    "backgroundColor": BLUE,
                    "pointRadius": 4,
                },
                {
                    "label": "Normalized ACU score",
                    "data": points("normalized_acu", "normalized_acu_ci", DODGE),
                    "clip": False,
                    "borderColor": ORANGE,
                    "backgroundColor": ORANGE,
                    "pointRadius": 4,
                    "pointStyle": "rectRot",
                },
            ],
        },
        # Half a category of room at both ends, so the first and last systems sit inside the plot;
        # the names may turn up to upright so they never overlap on a phone.
        "options": {
            "scales": {
                "x": {
                    "type": "linear",
                    "min": -0.5,
                    "max": len(names) - 0.5,
                    "grid": {"display": False},
                    "ticks": {
                        "autoSkip": False,
                        "maxRotation": 90,
                        "minRotation": 45 if many else 0,
                        "font": {"size": 10 if many else 12},
                    },
                },
                "y": {**y_axis, "title": {"display": True, "text": "score (95% CI)"}},
            },
            "layout": {"padding": {"top": 8, "left": 8, "right": 16}},
            "plugins": {
                "title": {"display": True, "text": leaderboard_title(systems)},
                "legend": {"display": True, "position": "top"},
            },
        },
        "xLabels": names,
    }


def power_bucket_label(bucket: dict, score: str = "score") -> str:
    """ "Δ ACU score 0.120–0.213 (3 pairs)"; one difference when the range is a point: "Δ ACU score
    0.213 (1 pair)". Δ is the pairs' difference in mean ``score``: the effect the power is of."""
    low, high = f"{bucket['min_difference']:.3f}", f"{bucket['max_difference']:.3f}"
    span = low if low == high else f"{low}–{high}"
    return f"Δ {score} {span} ({bucket['pairs']} pair{'' if bucket['pairs'] == 1 else 's'})"


def power_curve(outputs: dict, score: str | None = None) -> dict:
    """Power against documents, one line per bucket of pairs, labelled with what the power is of:
    the one-sided paired bootstrap test (the better system of a pair against the other) at the
    run's alpha, for the pairs' difference in mean ``score`` (default: the run's ``score``)."""
    sizes = outputs["sizes"]
    alpha = outputs.get("alpha", 0.05)  # runs stored before alpha was kept ran at 0.05
    score = score or outputs.get("score", "ACU score")
    datasets = []
    for b in outputs["buckets"]:
        if not b["pairs"]:
            continue
        label = power_bucket_label(b, score)
        colour = BUCKET_COLOURS[b["bucket"] % len(BUCKET_COLOURS)]
        datasets.append(
            {
                "label": label,
                "data": [{"x": n, "y": p} for n, p in zip(sizes, b["power"], strict=False)],
                "borderColor": colour,
                "backgroundColor": colour,
                "showLine": True,
            }
        )
    datasets.append(
        {
            "label": "80% power",
            "data": [{"x": sizes[0], "y": 0.8}, {"x": sizes[-1], "y": 0.8}],
            "borderColor": GREY,
            "showLine": True,
            "reference": True,
        }
    )
    return {
        "type": "scatter",
        "data": {"datasets": datasets},
        "options": {
            "scales": {
                # Ticks at the sample sizes only, thinned in the browser to those whose labels fit
                # side by side (static/js/charts.js): 200 and 300 or 500 and 700 overlap on a phone.
                "x": {
                    "type": "logarithmic",
                    "min": sizes[0],
                    "max": sizes[-1],
                    "tickValues": list(sizes),
                    "ticks": {"autoSkip": False, "minRotation": 0, "maxRotation": 0},
                    "title": {"display": True, "text": "documents"},
                },
                "y": {
                    "min": 0,
                    "max": 1,
                    "title": {"display": True, "text": f"power: share of trials with p < {alpha:g}"},
                },
            },
            "plugins": {
                "title": {
                    "display": True,
                    # two lines: one would run past a phone's canvas
                    "text": [
                        f"Power of the one-sided paired bootstrap test (α = {alpha:g})",
                        f"by difference in mean {score}",
                    ],
                }
            },
        },
    }


def stored_length_scatter(part: dict) -> dict | None:
    """The scatter of a run's stored "length_scatter" part (None when it holds no summary)."""
    if not part.get("words"):
        return None
    return sampled_length_scatter(part["words"], part["acu"], part["normalized_acu"])


def sampled_length_scatter(words: list, acu: list, normalized: list) -> dict:
    """The scatter of already sampled (and rounded, `scoring.runs.services.scatter_sample`) summaries. Points are
    [x, y] pairs, which Chart.js reads as {x, y}: half the bytes of the page's largest part."""
    acu_points, norm = list(zip(words, acu, strict=False)), list(zip(words, normalized, strict=False))
    return {
        "type": "scatter",
        "data": {
            "datasets": [
                {
                    "label": "ACU score",
                    "data": acu_points,
                    "clip": False,
                    "borderColor": BLUE,
                    "backgroundColor": "rgba(36,87,197,0.35)",
                    "pointRadius": 2,
                },
                {
                    "label": "Normalized ACU score",
                    "data": norm,
                    "clip": False,
                    "borderColor": ORANGE,
                    "backgroundColor": "rgba(217,130,43,0.35)",
                    "pointRadius": 2,
                },
            ]
        },
        "options": {
            "scales": {
                "x": {"title": {"display": True, "text": "summary length (words)"}},
                "y": {"min": 0, "max": 1, "title": {"display": True, "text": "score"}},
            },
            "plugins": {"title": {"display": True, "text": "Score against length"}},
        },
    }


def _level(value) -> str | None:
    return None if value is None else ("strong" if value < 0.01 else "yes" if value < 0.05 else "no")


def significance_cells(
    pairwise: dict | None, systems: dict, marked: str = "holm", holm_zero: float | None = None
) -> tuple[list[str], list[dict]]:
    """The coloured p-value matrix, best system first: the cell (a, b) is the share of
    resamples in which a's mean is not above b's (a tie counts against a), so a small value
    says a is better than b; ``p_holm`` its Holm-adjusted p over the family of pairs (when the
    pairwise tests carry it, `leaderboard.with_holm`); ``n`` is the number of documents the pair
    shares. ``marked`` ("holm" or "raw") is the p the colour (``level``) reads; an adjusted p of 0
    (no resample on the other side) is coloured by the bound it stands for, ``holm_zero``
    (`leaderboard.holm_method`'s ``zero_reads_below``), which too few resamples leave above 0.05.
    A pair without a shared document has no p."""
    if not pairwise:
        return [], []
    index = {n: i for i, n in enumerate(pairwise["systems"])}
    names = sorted(pairwise["systems"], key=lambda n: -systems[n]["acu"])
    p = pairwise["p"]
    holm = pairwise.get("p_holm")
    shared = pairwise.get("n")
    rows = []
    for a in names:
        cells = []
        for b in names:
            i, j = index[a], index[b]
            value = p[i][j] if i != j else None
            adjusted = holm[i][j] if holm and i != j else None
            n = shared[i][j] if shared and i != j else None
            if marked == "holm" and holm:
                level = _level(holm_zero if adjusted == 0 and holm_zero else adjusted)
            else:
                level = _level(value)
            cells.append({"p": value, "p_holm": adjusted, "level": level, "against": b, "n": n})
        rows.append({"system": a, "cells": cells})
    return names, rows
