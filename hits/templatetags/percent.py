"""Scores and pass marks of qualification tests as people read them (`percent_text`)."""

from django import template

from hits.services.qualification import percent_text

register = template.Library()


@register.filter(name="score_percent")
def score_percent(value) -> str:
    """A score, rounded down to a tenth of a percent: "79.5%"."""
    return "" if value is None or value == "" else percent_text(value)


@register.filter(name="pass_percent")
def pass_percent(value) -> str:
    """A pass mark, rounded up to a tenth of a percent: "80%", "82.5%"."""
    return "" if value is None or value == "" else percent_text(value, pass_mark=True)
