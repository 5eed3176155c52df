"""By when a worker submits, as the task page says it (`deadline_clock`)."""

from datetime import timedelta

from django import template
from django.utils import formats, timezone

register = template.Library()

# A deadline further away than this is dated: "10:49 UTC" alone would read as today's.
DATED_AFTER = timedelta(days=1)


@register.filter(expects_localtime=True)
def deadline_clock(when) -> str:
    """The clock time in the site's zone ("10:49 UTC"), with the day when the deadline is more
    than a day away ("9 Dec 10:49 UTC")."""
    if not when:
        return ""
    return formats.date_format(when, "j M H:i T" if when - timezone.now() > DATED_AFTER else "H:i T")
