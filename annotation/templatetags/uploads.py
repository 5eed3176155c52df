"""`{% upload_limit "url-name" arg ... %}`: the attributes of an upload form that say what the
server takes from it (`data-max-bytes`, `data-larger-command`), so static/js/upload_limit.js
refuses a file over the limit before sending it. The limit is the request size middleware's for
that view and a lead (config.limits.view_limit): the form and the server cannot disagree."""

from django import template
from django.urls import resolve, reverse
from django.utils.html import format_html

from config.limits import view_limit

register = template.Library()


@register.simple_tag
def upload_limit(url_name: str, *args) -> str:
    limit, command = view_limit(resolve(reverse(url_name, args=args)).func, from_lead=True)
    return format_html('data-max-bytes="{}" data-larger-command="{}"', limit, command)
