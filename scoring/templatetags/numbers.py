"""`fixed`: a number with exactly N decimals, as `floatformat:N` reads it, at a fraction of its cost
(the systems page formats a hundred numbers per request)."""

import math

from django import template
from django.template.defaultfilters import floatformat

from scoring.leaderboard import fixed as _fixed

register = template.Library()


@register.filter
def fixed(value, digits):
    """`floatformat:digits` for a non-negative finite float (the scores, intervals, lengths of
    the pages); anything else (negative, None, text) goes to floatformat itself."""
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return _fixed(value, int(digits))
    return floatformat(value, digits)
