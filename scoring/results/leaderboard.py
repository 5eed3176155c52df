"""What the systems page shows from a stored scores run: the leaderboard on each system's own
documents or on the documents judged for every system, with small-sample and degenerate-interval
flags, the pairwise matrix with each pair's n, and the majority / Dawid-Skene comparison.
Reads run outputs only (no queries, no writes)."""

import math
from decimal import ROUND_HALF_UP, Decimal

from django.template.defaultfilters import floatformat
from django.utils import numberformat
from django.utils.formats import get_format, localize
from django.utils.html import conditional_escape, escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from scoring.results.charts import significance_cells
from scoring.runs.services import SMALL_SAMPLE


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


def _texts():
    """`{{ value }}` of a template as a function: localized, then escaped. Numbers are formatted as
    formats.number_format formats them, with the active language's separators read once per table
    (get_format three times per number was most of a row's time)."""
    lang = get_language()
    separators = [
        get_format(f, lang, use_l10n=True) for f in ("DECIMAL_SEPARATOR", "NUMBER_GROUPING", "THOUSAND_SEPARATOR")
    ]
    decimal, grouping, thousand = separators

    def text(value) -> str:
        if isinstance(value, (float, int, Decimal)) and not isinstance(value, bool):
            return conditional_escape(str(numberformat.format(value, decimal, None, grouping, thousand, use_l10n=True)))
        return conditional_escape(str(localize(value)))

    return text


def _interval(ci, degenerate: bool) -> str:
    if not ci:
        return "–"
    flag = ' <span class="flag" title="zero-width interval">degenerate</span>' if degenerate else ""
    return f"[{fixed_text(ci[0], 3)}, {fixed_text(ci[1], 3)}]{flag}"


def leaderboard_rows_html(systems: list[tuple[str, dict, list]], small_threshold: int) -> SafeString:
    """The leaderboard's rows, (name, figures, machine scores) each, built in Python as the
    template read them (its loop spent a third of the page's time on their 70 values)."""
    _text, out = _texts(), []
    for i, (name, s, machine) in enumerate(systems, start=1):
        small = (
            f' <span class="flag" title="fewer than {_text(small_threshold)} documents">small n</span>'
            if s["small"]
            else ""
        )
        machine_cells = "".join(
            f'<td class="num machine" data-value="{"" if m is None else _text(m)}">'
            f"{'–' if m is None else fixed_text(m, 4)}</td>"
            for m in machine
        )
        out.append(
            f'\n  <tr><td data-value="{i}">{i}</td><td>{_text(name)}</td>'
            f'<td class="num" data-value="{_text(s["acu"])}">{fixed_text(s["acu"], 4)}</td>\n'
            f'    <td class="num">{_interval(s.get("acu_ci"), s["acu_ci_degenerate"])}</td>\n'
            f'    <td class="num" data-value="{_text(s["normalized_acu"])}">{fixed_text(s["normalized_acu"], 4)}</td>\n'
            f'    <td class="num">{_interval(s.get("normalized_acu_ci"), s["normalized_acu_ci_degenerate"])}</td>\n'
            f'    <td class="num" data-value="{_text(s.get("length"))}">{fixed_text(s.get("length"), 1)}</td>'
            f'<td class="num{" small-n" if s["small"] else ""}" data-value="{_text(s["documents"])}">'
            f"{_text(s['documents'])}{small}</td>{machine_cells}</tr>\n  "
        )
    return mark_safe("".join(out))  # every value above is escaped or a number


def aggregation_rows_html(rows: list[tuple[str, dict]]) -> SafeString:
    """The majority / Dawid-Skene table's rows (name, {majority, dawid_skene, difference})."""
    cells, _text = ("majority", "dawid_skene", "difference"), _texts()
    return mark_safe(
        "".join(
            f"<tr><td>{_text(name)}</td>"
            + "".join(f'<td class="num" data-value="{_text(a[k])}">{fixed_text(a[k], 4)}</td>' for k in cells)
            + "</tr>"
            for name, a in rows
        )
    )


def matrix_cells_html(row: dict) -> SafeString:
    """The <td> cells of one row of the significance matrix, built in Python: a matrix of m
    systems has m² cells (625 for 25), each with a coloured class, its p, its n and a tooltip."""
    system = escape(row["system"])
    cells = []
    for c in row["cells"]:
        n = c["n"]
        shared = "" if n is None else f' data-n="{n}"'
        title = f"{system} better than {escape(c['against'])}: p = {fixed(c['p'], 4)}"
        if n is not None:
            title += f", n = {n} shared documents"
        text = "" if c["p"] is None else fixed(c["p"], 3) + ("*" if n is not None and n < SMALL_SAMPLE else "")
        cells.append(f'<td class="sig {c["level"] or "self"}"{shared} title="{title}">{text}</td>')
    return mark_safe("".join(cells))  # every value above is escaped or a number


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


def systems_view(outputs: dict, documents: str = "own") -> dict:
    """Context for the leaderboard and the significance matrix. ``documents`` is "own" (each
    system on its judged documents, pairs on the documents they share) or "common" (every
    system on the documents judged for all of them, when those differ)."""
    systems = outputs.get("systems", {})
    counts = outputs.get("counts", {})
    common = outputs.get("common")
    use_common = documents == "common" and bool(common)
    if use_common:
        lengths = {name: {"length": s.get("length")} for name, s in systems.items()}
        shown = {
            name: {**lengths.get(name, {}), **s, "documents": common["documents"]}
            for name, s in common["systems"].items()
        }
        pairwise = common.get("pairwise")
        if pairwise:
            m = len(pairwise["systems"])
            pairwise = {**pairwise, "n": [[common["documents"]] * m for _ in range(m)]}
    else:
        shown, pairwise = systems, outputs.get("pairwise")
    rows = _rows(shown)
    names, matrix = significance_cells(pairwise, shown)
    for matrix_row in matrix:
        matrix_row["cells_html"] = matrix_cells_html(matrix_row)
    smallest_pair = None
    if pairwise and pairwise.get("n"):
        off = [v for i, row in enumerate(pairwise["n"]) for j, v in enumerate(row) if i != j]
        smallest_pair = min(off) if off else None
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
        "aggregation": outputs.get("aggregation", "majority"),
        "aggregation_rows": [
            (name, {"majority": a["majority"], "dawid_skene": a["dawid-skene"], "difference": a["difference"]})
            for name, a in sorted(comparison["systems"].items(), key=lambda kv: -(kv[1]["majority"] or 0))
        ]
        if comparison
        else [],
        "aggregation_comparison": comparison,
    }
