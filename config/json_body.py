"""The one JSON reader for request bodies: pages (task submit, autosave, suggest) and the REST API.

Every JSON body is read with the same bounds: at most DATA_UPLOAD_MAX_MEMORY_SIZE bytes (Django's
own limit), nested at most MAX_DEPTH levels, integers of at most MAX_INT_DIGITS digits, UTF-8, and
(for `read_json_body`) a JSON object at the top. Anything else is a `JSONBodyError` (a ValueError)
with a message for the person, which pages answer with a JSON 400 and the API's parser turns into
DRF's ParseError (a JSON 400, code `invalid`, through config.api_errors; a body over the size limit
is the API's 413, `too_large`). A body nested 100,000 deep is refused
without recursion ever reaching Python's limit (config.bounded_json).
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from . import bounded_json

MAX_DEPTH = 32
MAX_INT_DIGITS = 30


class JSONBodyError(ValueError):
    """A request body that is not acceptable JSON; the message says why."""


class BodyTooLarge(RequestDataTooBig):
    """Django's body limit reached by a JSON body, with a message for the person (the API's 413)."""


def _limit() -> int:
    return int(getattr(settings, "DATA_UPLOAD_MAX_MEMORY_SIZE", None) or 2 * 1024 * 1024)


def parse_json_bytes(raw: bytes, *, max_depth: int = MAX_DEPTH):
    """Any JSON value from `raw`, within the bounds; raises JSONBodyError."""
    if len(raw) > _limit():
        raise JSONBodyError(f"The request body is too large (at most {_limit():,} bytes).")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise JSONBodyError("The request body is not UTF-8 text.") from None
    try:
        return bounded_json.loads(text, max_depth=max_depth, max_int_digits=MAX_INT_DIGITS)
    except bounded_json.TooDeep:
        raise JSONBodyError(f"The JSON is nested too deeply (at most {max_depth} levels).") from None
    except bounded_json.NumberTooLong:
        raise JSONBodyError(f"The JSON has a number with too many digits (at most {MAX_INT_DIGITS}).") from None
    except ValueError as exc:
        raise JSONBodyError(f"JSON parse error: the request was not valid JSON ({str(exc)[:120]}).") from None


def read_json_body(request, *, max_depth: int = MAX_DEPTH) -> dict:
    """The request's JSON object (an empty body reads as {}); raises JSONBodyError."""
    try:
        raw = request.body
    except RequestDataTooBig:
        raise JSONBodyError(f"The request body is too large (at most {_limit():,} bytes).") from None
    if not raw:
        return {}
    value = parse_json_bytes(raw, max_depth=max_depth)
    if not isinstance(value, dict):
        raise JSONBodyError("The request must be a JSON object.")
    return value


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with the same bounds (the REST API's default JSON parser)."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = _limit()
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            # Django's body limit, as a form body over it: the API's 413 (`too_large`), not a 400.
            raise BodyTooLarge(f"The request body is too large (at most {limit:,} bytes).")
        try:
            return parse_json_bytes(raw) if raw else {}
        except JSONBodyError as exc:
            raise ParseError(str(exc)) from None
