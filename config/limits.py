"""Request bodies are refused by their declared size before a byte of them is read.

Only a view marked `@large_upload` (the dataset import, page and API; every one is a lead's) may
receive up to IMPORT_UPLOAD_MAX_BYTES, and only from a lead: signed in, or with a lead's API token
(a made-up `Authorization` header opens nothing): every other request, and any anonymous one,
may send REQUEST_MAX_BYTES. Django reads no further than Content-Length, so a body is never
read beyond the limit; DATA_UPLOAD_MAX_MEMORY_SIZE bounds what form fields may hold.
"""

import logging

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.urls import Resolver404, resolve
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from .db_retry import reconnecting
from .replies import wants_page
from .roles import LEAD, has_role

logger = logging.getLogger(__name__)

# The development server (run.sh) refuses hop-by-hop headers from the application (a 500); it
# reads the rest of the body itself and closes the connection when it must.
WSGIREF = "WSGIServer/"


def large_upload(view=None, *, command: str = "import_dataset", max_bytes: int | None = None):
    """Marks a view that may receive up to IMPORT_UPLOAD_MAX_BYTES (read by the middleware, as
    `csrf_exempt` is by CSRF's; on a class-based view: `method_decorator(large_upload, "dispatch")`).
    `command` is the management command a refusal names for larger files
    (`@large_upload(command="import_ratings")`); `max_bytes`, the view's own smaller bound (above
    REQUEST_MAX_BYTES: a metric file read into memory), which the middleware and the upload form
    apply in its place when it is the smaller."""

    def mark(marked):
        marked.large_upload = True
        marked.larger_files_command = command
        marked.upload_max_bytes = max_bytes
        return marked

    return mark if view is None else mark(view)


def file_bound(max_bytes: int, *, holds: str = ""):
    """Marks a view that reads each uploaded file into memory and takes one of at most `max_bytes`:
    the view's own bound on a file, below what its request may carry with the form's other fields
    (a panel's participant-ids file: at most 10,000 ids, beside the stored list in the form's
    text box). The view refuses a larger file in `file_refusal`'s words; its upload form carries
    the same bound ({% upload_limit %}: data-max-file-bytes, data-file-holds) and
    static/js/upload_limit.js refuses such a file on choosing it, before a byte is sent.
    `holds` says what the bound is made for ("10,000 ids")."""

    def mark(view):
        view.upload_max_file_bytes = max_bytes
        view.upload_file_holds = holds
        return view

    return mark


def file_limit(view) -> tuple[int | None, str]:
    """A view's own bound on each uploaded file (`file_bound`; None: only the request's), and what it holds."""
    return getattr(view, "upload_max_file_bytes", None), getattr(view, "upload_file_holds", "")


def file_refusal(size: int, max_bytes: int, holds: str = "") -> str:
    """The server's words for a file over a view's own bound (static/js/upload_limit.js says the
    same before sending, adding "Nothing was sent.")."""
    bound = filesizeformat(max_bytes) + (f" ({holds})" if holds else "")
    return f"The file is {filesizeformat(size)}; the limit here is {bound}. Choose a smaller file."


def declared_length(request) -> int | None:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return None


def _sender(request):
    """The user a large request comes from: its API token's (when the token is valid) or the session's."""
    if request.headers.get("Authorization"):
        try:
            found = TokenAuthentication().authenticate(request)
        except AuthenticationFailed:
            return None
        if found is not None:
            return found[0]
    return request.user


def _from_lead(request) -> bool:
    def holds_lead() -> bool:
        user = _sender(request)
        return user is not None and has_role(user, LEAD)

    return reconnecting(holds_lead, False)


def view_limit(view, *, from_lead: bool) -> tuple[int, str]:
    """The most bytes a request to `view` may send, and the command that imports larger files
    ("": none): the middleware's rule, and the limit upload forms check in the browser
    (annotation.templatetags.uploads, static/js/upload_limit.js)."""
    if getattr(view, "large_upload", False) and from_lead:
        own = getattr(view, "upload_max_bytes", None) or settings.IMPORT_UPLOAD_MAX_BYTES
        return min(own, settings.IMPORT_UPLOAD_MAX_BYTES), getattr(view, "larger_files_command", "import_dataset")
    return settings.REQUEST_MAX_BYTES, ""


def _limit_for(request) -> tuple[int, str]:
    """The most bytes this request may send, and the command that imports larger files ("": none)."""
    try:
        view = resolve(request.path_info).func
    except Resolver404:
        view = None
    return view_limit(view, from_lead=getattr(view, "large_upload", False) and _from_lead(request))


def _refusal(request, message: str):
    if wants_page(request):
        return render(request, "413.html", {"message": message}, status=413)
    return JsonResponse({"ok": False, "error": message, "detail": message, "code": "too_large"}, status=413)


class RequestSizeLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        length = declared_length(request)
        if length is None:
            message = "The request's Content-Length is not a number."
            return JsonResponse({"ok": False, "error": message, "detail": message, "code": "invalid"}, status=400)
        # Most requests are small: only a large one needs the URL and the user (session) looked up.
        if length > min(settings.REQUEST_MAX_BYTES, settings.IMPORT_UPLOAD_MAX_BYTES):
            limit, command = _limit_for(request)
            if length > limit:
                logger.warning(
                    "refused a %s-byte %s to %s (limit %s)", length, request.method, request.path_info, limit
                )
                message = (
                    f"The request is {filesizeformat(length)}; the limit here is {filesizeformat(limit)}. "
                    "Nothing was received or stored."
                )
                if command:
                    message += f" Use the {command} command for larger files."
                response = _refusal(request, message)
                if not request.META.get("SERVER_SOFTWARE", "").startswith(WSGIREF):
                    response["Connection"] = "close"  # gunicorn: do not read the body to keep the connection
                return response
        return self.get_response(request)
