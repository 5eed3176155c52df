"""Every REST API error as JSON: `{"error": "a clear message", "code": "...", ...}`.

Statuses say what happened: 400 for a request the schema refuses (malformed, a field out of
its bounds, an unknown field), with `"fields": {field: [messages]}`; 422 for a schema-valid
request whose contents cannot be processed (a name the dataset lacks, a rule between fields,
a file that is not a dataset: `Unprocessable`, and the services' own refusals, `ServiceError`);
409 (code `conflict`) for a request that conflicts with the state of what it names (publishing
a batch that is not a draft). Anything unexpected is logged and answered with a JSON 500
(re-raised with DEBUG on, for the debug page).
"""

import logging
import re

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from .errors import ServiceError
from .json_body import BodyTooLarge

logger = logging.getLogger("django.request")


class TooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


class ServiceRefused(exceptions.APIException):
    """A service refused a well-formed request (a rule between options, a provider's no): 422 with its message."""

    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_detail = "The request was refused."
    default_code = "refused"


class Unprocessable(exceptions.APIException):
    """A schema-valid request whose contents cannot be processed: a name or id the data lacks,
    options for another provider. 422, with `fields` as a validation error has them."""

    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_detail = "The request cannot be processed."
    default_code = "unprocessable"


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


_MODEL_NOT_FOUND = re.compile(r"No (\w+) matches the given query\.")  # get_object_or_404's message


def _not_found(message: str, url_kwargs: dict) -> str:
    """get_object_or_404's "No JudgeRun matches the given query." as a script's user reads it: "No judge run
    with id 7." (every API address names one id, the object looked up); other messages stay as they are."""
    match = _MODEL_NOT_FOUND.fullmatch(message)
    if match is None:
        return message or "Not found."
    name = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", match.group(1)).lower()
    ids = [value for key, value in url_kwargs.items() if key.endswith("_id")]
    return f"No {name} with id {ids[0]}." if len(ids) == 1 else f"No such {name}."


def _as_api_exception(exc, url_kwargs: dict):
    """Django's and the services' exceptions as the API's (others are returned as they are)."""
    if isinstance(exc, ServiceError):
        return ServiceRefused(str(exc))
    if isinstance(exc, Http404):
        return exceptions.NotFound(_not_found(str(exc), url_kwargs))
    if isinstance(exc, PermissionDenied):
        return exceptions.PermissionDenied(str(exc) or None)
    if isinstance(exc, RequestDataTooBig):
        return TooLarge(str(exc) if isinstance(exc, BodyTooLarge) else None)
    if isinstance(exc, SuspiciousOperation):  # Django answers these with 400, not 500
        return exceptions.ParseError(f"Bad request: {exc}")
    return exc


def _api_error_body(exc: exceptions.APIException) -> dict:
    """The body of an APIException: per field (`fields`) for invalid or unprocessable input."""
    messages = _messages(exc.detail)
    if isinstance(exc, (exceptions.ValidationError, Unprocessable)) and isinstance(exc.detail, (dict, list)):
        unprocessable = isinstance(exc, Unprocessable)
        return error_body(
            ("Not processed. " if unprocessable else "Invalid input. ")
            + " ".join(m if m.endswith(".") else m + "." for m in messages),
            "unprocessable" if unprocessable else "invalid",
            fields=exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail},
        )
    if isinstance(exc, exceptions.ParseError):
        # A body that is not JSON (or not within the reader's bounds) is outside the schema: `invalid`,
        # the one code of a 400 (docs/api.md), not DRF's `parse_error`.
        return error_body(" ".join(messages) or str(exc.default_detail), "invalid")
    codes = _codes(exc)
    return error_body(
        " ".join(messages) or str(exc.default_detail), codes if isinstance(codes, str) else exc.default_code
    )


def json_exception_handler(exc, context):
    exc = _as_api_exception(exc, (context or {}).get("kwargs") or {})
    if isinstance(exc, exceptions.APIException):
        headers = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None):
            headers["Retry-After"] = "%d" % exc.wait  # noqa: UP031 - a %-template from elsewhere
        set_rollback()
        return Response(_api_error_body(exc), status=exc.status_code, headers=headers)

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
    400: "Invalid input: outside the schema (the message and `fields` say where).",
    401: "No or invalid credentials: send `Authorization: Token <key>`.",
    403: "Signed in, but not a lead.",
    404: "Not found (an unknown id, a round of another dataset, a page past the end).",
    409: "Conflicts with the current state of what it names (the message says which).",
    406: "The Accept header asks for a type this endpoint does not produce.",
    413: "The upload is too large.",
    415: "Unsupported request body type.",
    422: "Valid by the schema, but its contents cannot be processed (the message says why).",
    429: "Too many attempts: wait the `Retry-After` seconds (the message says how long).",
}


def error_responses(*codes: int, auth: bool = True, json_key: bool = False, texts: dict | None = None) -> dict:
    """`extend_schema(responses=...)` entries for `codes` (plus 401 and 403 with `auth`), described
    by `texts` where given (what this endpoint's 409 or 422 means), else by the general text.
    `json_key` keys them by (code, "application/json"), for endpoints that also send files."""
    wanted = sorted({*codes, *((401, 403) if auth else ())})
    texts = {**_ERROR_TEXT, **(texts or {})}
    return {
        ((c, "application/json") if json_key else c): OpenApiResponse(
            ErrorSerializer, description=texts.get(c, "Error.")
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
