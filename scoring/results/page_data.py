"""What the systems and workers pages read of a scores run, serialised once when the run is stored.

A stored run never changes, so the parts of its outputs a page shows are written as JSON text
beside the digest (`ScoringRun.systems_page`, `ScoringRun.workers_page`) and the systems page's
score-against-length scatter (1,500 points a series) as the Chart.js configuration, already
escaped for a <script> element: PostgreSQL returns a text column as stored, where the same parts
of the digest cost a jsonb_each and a jsonb-to-text conversion of its 128 kB on every request,
and the page embeds the chart's text instead of encoding 3,000 points each time. Runs stored
before these columns (empty) are read from the digest as before.
"""

import json

from django.core.serializers.json import DjangoJSONEncoder
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from scoring.results import charts

# The parts of the outputs each page shows (besides "alpha", which has its own column).
SYSTEMS_PARTS = ("systems", "pairwise", "length_normalization", "common", "counts", "aggregation", "aggregations")
WORKERS_PARTS = ("workers",)
# The stored column that answers a read of these parts: the systems page holds "length_scatter"
# as its chart only (in "charts", not among the parts read back).
PAGES = {"systems_page": (*SYSTEMS_PARTS, "length_scatter"), "workers_page": WORKERS_PARTS}
CHARTS = "charts"  # {chart: its Chart.js configuration as `script_json` text, or None}

# As django.utils.html.json_script: the characters that could end or open a tag in a <script>.
_SCRIPT_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


def script_json(value) -> str:
    """`value` as JSON safe inside a <script> element: exactly the text Django's json_script
    filter puts there."""
    return json.dumps(value, cls=DjangoJSONEncoder).translate(_SCRIPT_ESCAPES)


def script_tag(text: str, element_id: str) -> SafeString:
    """The <script type="application/json"> element of JSON text from `script_json` (as the
    json_script filter renders it)."""
    return format_html('<script id="{}" type="application/json">{}</script>', element_id, mark_safe(text))


def systems_page(outputs: dict) -> str:
    """The systems page's parts of a run's outputs and its scatter chart, as JSON text."""
    page = {part: outputs[part] for part in SYSTEMS_PARTS if outputs.get(part) is not None}
    scatter = outputs.get("length_scatter")
    chart = charts.stored_length_scatter(scatter) if scatter else None
    page[CHARTS] = {"length_scatter": script_json(chart) if chart else None}
    return json.dumps(page, separators=(",", ":"))


def workers_page(outputs: dict) -> str:
    """The workers page's parts of a run's outputs, as JSON text."""
    return json.dumps(
        {part: outputs[part] for part in WORKERS_PARTS if outputs.get(part) is not None}, separators=(",", ":")
    )


def page_for(parts: tuple[str, ...]) -> str | None:
    """The stored page column holding every part asked for but "alpha" (None: none holds them)."""
    rest = {p for p in parts if p != "alpha"}
    if not rest:
        return None
    return next((column for column, held in PAGES.items() if rest <= set(held)), None)
