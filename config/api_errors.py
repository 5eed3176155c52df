"""Every REST API error as JSON: `{"error": "a clear message", "code": "...", ...}`.

Validation errors add `"fields": {field: [messages]}`. The services' own refusals (an import
that names the file and line, a refused batch, a provider that said no) become 400 with
their message. Anything unexpected is logged and answered with a JSON 500 (re-raised with
DEBUG on, for the debug page).
"""

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from .errors import ServiceError

logger = logging.getLogger("django.request")


class TooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


class ServiceRefused(exceptions.APIException):
    """A service refused the request (bad options, wrong state): 400 with its message."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "The request was refused."
    default_code = "refused"


def _messages(detail, prefix: str = "") -> list[str]:
    """Flatten DRF's nested error detail into 'field: message' strings."""
    if isinstance(detail, dict):
        out = []
        for key, value in detail.items():
            name = "" if key in ("non_field_errors", "detail") else str(key)
            out += _messages(value, f"{prefix}.{name}" if prefix and name else (name or prefix))
        return out
    if isinstance(detail, list):
        out = []
        for i, value in enumerate(detail):
            # Lists of plain messages keep the field name; lists of objects get the index.
            sub = f"{prefix}[{i}]" if isinstance(value, (dict, list)) else prefix
            out += _messages(value, sub)
        return out
    return [f"{prefix}: {detail}" if prefix else str(detail)]


def _codes(exc: exceptions.APIException):
    try:
        return exc.get_codes()
    except Exception:  # noqa: BLE001 - codes are a courtesy
        return None


def error_body(message: str, code: str, **extra) -> dict:
    return {"error": message, "code": code, **extra}


def json_exception_handler(exc, context):
    if isinstance(exc, ServiceError):
        exc = ServiceRefused(str(exc))
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, RequestDataTooBig):
        exc = TooLarge()
    elif isinstance(exc, SuspiciousOperation):  # Django answers these with 400, not 500
        exc = exceptions.ParseError(f"Bad request: {exc}")

    if isinstance(exc, exceptions.APIException):
        headers = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None):
            headers["Retry-After"] = "%d" % exc.wait  # noqa: UP031 - a %-template from elsewhere
        codes = _codes(exc)
        if isinstance(exc, exceptions.ValidationError):
            messages = _messages(exc.detail)
            data = error_body(
                "Invalid input. " + " ".join(m if m.endswith(".") else m + "." for m in messages),
                "invalid",
                fields=exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail},
            )
        else:
            messages = _messages(exc.detail)
            data = error_body(
                " ".join(messages) or str(exc.default_detail), codes if isinstance(codes, str) else exc.default_code
            )
        set_rollback()
        return Response(data, status=exc.status_code, headers=headers)

    if settings.DEBUG:
        return None  # Django's debug page shows the traceback
    request = context.get("request")
    logger.error(
        "Internal Server Error: %s",
        getattr(request, "path", "?"),
        exc_info=exc,
        extra={"status_code": 500, "request": getattr(request, "_request", request)},
    )
    set_rollback()
    return Response(error_body("Internal server error; the error was logged.", "server_error"), status=500)


@csrf_exempt
def api_not_found(request, *args, **kwargs):
    """Any /api/ address without an endpoint: a JSON 404 instead of the site's HTML page."""
    from django.urls import Resolver404, resolve

    message = f"No API endpoint at {request.path}."
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            message += f" Did you mean {request.path}/ (with the trailing slash)?"
    return JsonResponse(error_body(message + " See /api/docs/.", "not_found"), status=404)


# --- the error shape in the OpenAPI schema -------------------------------------------------


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="A clear message for a person.")
    code = serializers.CharField(help_text="A short machine-readable code, e.g. not_found, invalid, refused.")
    fields = serializers.DictField(
        required=False,
        help_text="Validation errors only: the messages per input field.",
        child=serializers.JSONField(),
    )
    file = serializers.CharField(required=False, allow_null=True, help_text="Import errors: the file at fault.")
    line = serializers.IntegerField(required=False, allow_null=True, help_text="Import errors: the line at fault.")


_ERROR_TEXT = {
    400: "Invalid input, or the service refused (the message says why).",
    401: "No or invalid credentials: send `Authorization: Token <key>`.",
    403: "Signed in, but not a lead.",
    404: "Not found (an unknown id, a round of another dataset, a page past the end).",
    406: "The Accept header asks for a type this endpoint does not produce.",
    413: "The upload is too large.",
    415: "Unsupported request body type.",
    429: "Too many attempts: wait the `Retry-After` seconds (the message says how long).",
}


def error_responses(*codes: int, auth: bool = True, json_key: bool = False) -> dict:
    """`extend_schema(responses=...)` entries for `codes` (plus 401 and 403 with `auth`).
    `json_key` keys them by (code, "application/json"), for endpoints that also send files."""
    wanted = sorted({*codes, *((401, 403) if auth else ())})
    return {
        ((c, "application/json") if json_key else c): OpenApiResponse(
            ErrorSerializer, description=_ERROR_TEXT.get(c, "Error.")
        )
        for c in wanted
    }


class JSONErrorsMixin:
    """For views that render something else (a file, YAML, an HTML page): errors stay JSON
    whatever the Accept header asked for."""

    def _json_for_errors(self, request):
        from rest_framework.renderers import JSONRenderer

        request.accepted_renderer, request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type

    def handle_exception(self, exc):
        self._json_for_errors(self.request)
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        if isinstance(response, Response) and response.status_code >= 400:
            self._json_for_errors(request)
        return super().finalize_response(request, response, *args, **kwargs)
