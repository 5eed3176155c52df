"""`{% upload_limit "url-name" arg ... %}`: the attributes of an upload form that say what the
server takes from it (`data-max-bytes`, `data-larger-command`; and a view's own bound on each
file, `data-max-file-bytes`, `data-file-holds`), so static/js/upload_limit.js refuses a file over
the limit before sending it. The limit is the request size middleware's for that view and a lead
(config.limits.view_limit), the file bound the view's own (config.limits.file_bound): the form
and the server cannot disagree."""

from django import template
from django.urls import resolve, reverse
from django.utils.html import format_html

from config.limits import file_limit, view_limit

register = template.Library()


@register.simple_tag
def upload_limit(url_name: str, *args) -> str:
    view = resolve(reverse(url_name, args=args)).func
    limit, command = view_limit(view, from_lead=True)
    attributes = format_html('data-max-bytes="{}" data-larger-command="{}"', limit, command)
    per_file, holds = file_limit(view)
    if per_file is not None:
        attributes += format_html(' data-max-file-bytes="{}" data-file-holds="{}"', per_file, holds)
    return attributes
