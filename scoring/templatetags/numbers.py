"""`fixed`: a number with exactly N decimals, as `floatformat:N` reads it, at a fraction of its cost
(the systems page formats a hundred numbers per request)."""

import math

from django import template
from django.utils.html import format_html

from scoring.results.leaderboard import fixed_text

register = template.Library()


@register.filter
def fixed(value, digits):
    """`floatformat:digits` for a non-negative finite float (the scores, intervals, lengths of
    the pages); anything else (negative, None, text) goes to floatformat itself."""
    return fixed_text(value, int(digits))


def _bound(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@register.filter
def interval(values, digits=3):
    """A 95% CI as "[low, high]" from [low, high] or [estimate, low, high]. A missing or NaN bound
    (the bootstrap had too few documents or systems to give one) reads "no CI (n too small)",
    never "[, ]"."""
    bounds = list(values or [])[-2:]
    low, high = (_bound(b) for b in bounds) if len(bounds) == 2 else (None, None)
    if low is None or high is None:
        return format_html(
            '<span class="hint no-ci" title="{}">no CI (n too small)</span>',
            "The bootstrap gave no interval: too few documents or systems vary.",
        )
    return format_html(
        '<span class="hint ci">[{}, {}]</span>', fixed_text(low, int(digits)), fixed_text(high, int(digits))
    )


@register.filter
def percent(share, digits=1):
    """A share in [0, 1] as a percentage with `digits` decimals ("0.4%"), where `widthratio` would
    round a small share to 0%; anything not a finite number reads "-"."""
    number = _bound(share)
    return "-" if number is None else f"{number * 100:.{int(digits)}f}%"


@register.filter
def pvalue(p, draws):
    """A resampling p-value as a lab may quote it: none of ``draws`` resamples or permutations on
    the other side reads "< 1/draws" ("< 0.001" of 1,000), never "0.000", which would claim p = 0;
    below 0.001 with enough digits to show its count ("0.0004" of 10,000); else 3 decimals. A
    missing or NaN p reads "–"."""
    number = _bound(p)
    try:
        total = int(draws)
    except (TypeError, ValueError):
        total = 0
    if number is None:
        return "–"
    if number == 0 and total > 0:
        return f"< {1 / total:g}"
    if 0 < number < 0.001 and total > 0:
        return f"{number:.{max(3, len(str(total)) - 1)}f}"
    return fixed_text(number, 3)


@register.filter
def pvalue_holm(p, below):
    """A Holm-adjusted resampling p-value (`leaderboard.with_holm`): 0 (no resample on the other
    side for the smallest p-values) reads "< ``below``", the bound it stands for
    (`leaderboard.holm_method`'s ``zero_reads_below``), never "0.000"; below 0.001 with as many
    decimals as its first digit needs ("0.00004"); else 3 decimals. A missing or NaN p reads "–"."""
    number = _bound(p)
    bound = _bound(below)
    if number is None:
        return "–"
    if number == 0 and bound:
        return f"< {bound:.2g}"
    if 0 < number < 0.001:
        return f"{number:.{-math.floor(math.log10(number))}f}"
    return fixed_text(number, 3)
