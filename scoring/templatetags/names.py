"""How ids are written in tables: a system name such as "abs_t5_out_large" may break only after
its underscores (a <wbr> there), never inside a word ("abs_t5_out_larg e")."""

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.filter
def breaks_at_underscores(name) -> SafeString:
    """The escaped name with a line-break opportunity after each "_"."""
    return mark_safe("_<wbr>".join(conditional_escape(part) for part in str(name).split("_")))
