"""A request caught by a dropped database connection is retried once, whole, when that is safe.

Health checks (`DB_CONN_HEALTH_CHECKS`) catch connections that died between requests; a
connection dropped in the middle of a request raises `OperationalError`/`InterfaceError`
in the view. Then, if no transaction is open and the request is read-only (GET, HEAD,
OPTIONS) or its view is marked `@retry_on_reconnect` (a POST that is idempotent by design: a
task submission, where the same answers again give the same result), the connections are
closed and the view runs once more. A second failure is a 503
with a plain message, never a traceback.

The health check is this module's, through the connection's public calls (`is_usable`,
`close`), run first thing in a request by `HealthCheckMiddleware` and before each Celery task;
Django's own (`CONN_HEALTH_CHECKS`) is off, since it cannot be skipped for one request. A
request that is retried that way, and a read in `reconnecting`, are not checked: a `SELECT 1`
would find out only what their first statement finds out anyway, and the retry puts them on a
fresh connection. That is a round trip less for each request of the crowd path (3 of a work
cycle's 14); every other request is still checked first.

`DB_RETRY` is the same rule for Celery tasks: a task that lost its connection is retried with
backoff (every task that uses it is idempotent). `retry_after_db_error` widens it, for a task
whose every write is keyed (the provider sync), to any database error (a lock wait or statement
aborted, a failover's read-only moment), with one line in the log for each retry. `retried` is that rule for a piece of work
inside a request: a whole transaction run again after a short pause, the pause never inside a
transaction (the handout's sessions retry with it when other handouts hold the last places).
"""

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, connections
from django.http import HttpResponse
from django.urls import Resolver404, resolve

logger = logging.getLogger(__name__)

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
UNAVAILABLE = "The database is briefly unavailable. Nothing was lost; please try again in a moment."

RETRYABLE = (OperationalError, InterfaceError)

# Celery task options: a dropped database connection is retried with backoff.
DB_RETRY = {
    "autoretry_for": RETRYABLE,
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "max_retries": 5,
}

# What a task whose repetition records nothing twice retries on (`retry_after_db_error`).
DB_ERRORS = (DatabaseError, InterfaceError)

T = TypeVar("T")


def retry_after_db_error(task, exc: BaseException, what: str):
    """A bound task's database error: one warning line, then Celery's retry after a pause that
    doubles from DB_RETRY's backoff up to its cap, at most the task's `max_retries` times; after the
    last, one error line and the error itself (the task fails; its next scheduled run starts over).
    Only for a task whose repetition is harmless: `raise retry_after_db_error(self, exc, "...")`."""
    retries = task.request.retries
    reason = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or ['no message'])[0][:200]}"
    if retries >= task.max_retries:
        logger.error("%s: database error (%s); gave up after %d retries", what, reason, retries)
        raise exc
    countdown = min(DB_RETRY["retry_backoff"] * 2**retries, DB_RETRY["retry_backoff_max"])
    logger.warning(
        "%s: database error (%s); retrying in %d s (retry %d of %d)",
        what,
        reason,
        countdown,
        retries + 1,
        task.max_retries,
    )
    return task.retry(exc=exc, countdown=countdown)


def retried(
    work: Callable[[], T], *, on: tuple[type[BaseException], ...] = RETRYABLE, attempts: int = 5, pause: float = 0.05
) -> T:
    """`work()` (a whole transaction), run again after a pause that doubles each time while it
    raises one of `on`, at most `attempts` times; the last error is raised. Called inside a
    transaction it runs once: a retry (and its pause) belongs outside the transaction."""
    for attempt in range(attempts):
        try:
            return work()
        except on:
            if attempt + 1 >= attempts or connection.in_atomic_block:
                raise
            logger.info("retrying %s after a %.2f s pause", getattr(work, "__name__", "work"), pause * 2**attempt)
        time.sleep(pause * 2**attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def retry_on_reconnect(view):
    """Marks a POST view whose repetition is harmless, so a request that lost its database
    connection runs it once more (read by the middleware, as `csrf_exempt` is by CSRF's)."""
    view.retry_on_reconnect = True
    return view


def _retryable(request) -> bool:
    match = getattr(request, "resolver_match", None)
    if match is None or getattr(request, "_db_retried", False):
        return False
    if any(conn.in_atomic_block for conn in connections.all(initialized_only=True)):
        return False  # the view's own transaction: the test client or ATOMIC_REQUESTS owns it
    return _repeatable(request.method, match.func)


def _repeatable(method: str, view) -> bool:
    return method in SAFE_METHODS or getattr(view, "retry_on_reconnect", False)


def check_connections(**_signal) -> None:
    """The health check: each connection kept from an earlier request or task, outside a
    transaction, is closed if it no longer answers (`SELECT 1`), so the next statement opens a
    fresh one. Off with DB_CONN_HEALTH_CHECKS=0. Also Celery's task_prerun receiver (config/celery.py)."""
    if not getattr(settings, "DB_HEALTH_CHECKS", True):
        return
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and not conn.in_atomic_block and not conn.is_usable():
            conn.close()


class HealthCheckMiddleware:
    """First in MIDDLEWARE: checks the kept connections before anything of a request reads,
    unless the request is one the retry middleware runs again on a fresh connection."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method not in SAFE_METHODS and not _repeatable(request.method, _view_of(request.path_info)):
            check_connections()
        return self.get_response(request)


def _view_of(path: str):
    try:
        return resolve(path).func
    except Resolver404:
        return None


def _close_all() -> None:
    for conn in connections.all(initialized_only=True):
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - closing a dead connection may fail too
            conn.connection = None


class RetryOnDroppedConnectionMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        if not _retryable(request):
            return None
        request._db_retried = True
        logger.warning("database connection lost during %s %s: retrying once", request.method, request.path_info)
        _close_all()
        match = request.resolver_match
        try:
            return match.func(request, *match.args, **match.kwargs)
        except (OperationalError, InterfaceError):
            logger.exception("database still unavailable for %s %s", request.method, request.path_info)
            _close_all()
            response = HttpResponse(UNAVAILABLE, status=503, content_type="text/plain; charset=utf-8")
            response["Retry-After"] = "5"
            return response


def reconnecting(read, fallback):
    """For middleware that reads before the view (outside process_exception's reach): one
    retry on a fresh connection, then `fallback` instead of an error page (so no health check
    first)."""
    for _ in range(2):
        try:
            return read()
        except (OperationalError, InterfaceError):
            logger.warning("database connection lost before the view: reconnecting")
            _close_all()
    return fallback
