"""`fixed`: a number with exactly N decimals, as `floatformat:N` reads it, at a fraction of its cost
(the systems page formats a hundred numbers per request)."""

from django import template

from scoring.results.leaderboard import fixed_text

register = template.Library()


@register.filter
def fixed(value, digits):
    """`floatformat:digits` for a non-negative finite float (the scores, intervals, lengths of
    the pages); anything else (negative, None, text) goes to floatformat itself."""
    return fixed_text(value, int(digits))
