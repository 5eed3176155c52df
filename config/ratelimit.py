"""Rate limits on sign-in, the API token, task submissions and "Start next task".

A small fixed-window limiter on Django's cache (Redis when CACHE_URL is set, so every gunicorn
worker shares the counts), per account and per address:
- sign-in and `/api/token/`: failed attempts are counted; after LOGIN_FAILURES_PER_ACCOUNT
  failures for one username, or LOGIN_FAILURES_PER_ADDRESS from one address, within
  LOGIN_WINDOW_SECONDS, every attempt (the right password too) is refused until the window ends;
- task submissions and "Start next task": every request is counted per account (the task link
  for submissions, which a signed token names, the signed-in user for next task) and per address.
A refused request gets HTTP 429, a message saying when to try again, and `Retry-After`.
When the cache itself is unreachable (Redis down) the limits are not applied (logged), so an
outage of the counters never becomes an error page.
"""

import hashlib
import json
import logging
import time

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.http import JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve

from .db_retry import reconnecting

logger = logging.getLogger(__name__)


def _key(scope: str, who: str, window: int) -> str:
    digest = hashlib.sha256(who.encode("utf-8", "replace")).hexdigest()[:32]
    return f"rl:{scope}:{digest}:{int(time.time() // window)}"


def _fail_open(default):
    """Cache errors (Redis down) do not fail the request: the limit is skipped and logged."""
    from functools import wraps

    def decorator(func):
        @wraps(func)
        def wrapper(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - redis.ConnectionError and friends
                logger.warning("rate-limit counters unavailable (%s): %s not applied", exc.__class__.__name__, args[0])
                return default

        return wrapper

    return decorator


@_fail_open(0)
def count(scope: str, who: str, window: int) -> int:
    """Add one to this window's count and return it."""
    return count_all([(scope, who)], window)[0]


@_fail_open([0, 0])
def count_all(pairs: list[tuple[str, str]], window: int) -> list[int]:
    """Add one to the window's count of every (scope, who) and return the counts: one round
    trip to Redis (INCR and EXPIRE of each key in a pipeline), or Django's cache without one."""
    keys = [_key(scope, who, window) for scope, who in pairs]
    if settings.CACHE_URL:
        pipe = _redis().pipeline(transaction=False)
        for key in keys:
            pipe.incr(key)
            pipe.expire(key, window + 5)
        return [int(n) for n in pipe.execute()[::2]]
    return [_count_in_cache(key, window) for key in keys]


def _count_in_cache(key: str, window: int) -> int:
    if cache.add(key, 1, window + 5):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, window + 5)
        return 1


_clients: dict = {}


def _redis():
    """One client per process for CACHE_URL (the cache's own Redis database)."""
    url = settings.CACHE_URL
    if url not in _clients:
        import redis

        _clients[url] = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    return _clients[url]


@_fail_open(0)
def current(scope: str, who: str, window: int) -> int:
    return cache.get(_key(scope, who, window), 0)


@_fail_open(None)
def reset(scope: str, who: str, window: int) -> None:
    cache.delete(_key(scope, who, window))


def retry_after(window: int) -> int:
    return int(window - time.time() % window) + 1


def client_address(request) -> str:
    # Behind the proxy (BEHIND_PROXY) the proxy's X-Forwarded-For names the client; its last entry is the one it added.
    if settings.SECURE_PROXY_SSL_HEADER and request.META.get("HTTP_X_FORWARDED_FOR"):
        return request.META["HTTP_X_FORWARDED_FOR"].split(",")[-1].strip()
    return request.META.get("REMOTE_ADDR", "")


def _username(request, url_name: str) -> str:
    if url_name == "login":
        return request.POST.get("username", "")[:150].strip().lower()
    try:
        body = json.loads(request.body or b"{}") if request.content_type == "application/json" else request.POST
        return str(body.get("username", ""))[:150].strip().lower()
    except (ValueError, AttributeError):
        return ""


def _minutes(seconds: int) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def _refused(request, url_name: str, message: str, wait: int):
    logger.warning("rate limit: refused %s %s from %s", request.method, url_name, client_address(request))
    if url_name == "login":
        response = render(
            request,
            "registration/login.html",
            {"form": AuthenticationForm(request), "limit_message": message},
            status=429,
        )
    else:
        response = JsonResponse({"ok": False, "error": message, "detail": message}, status=429)
    response["Retry-After"] = str(wait)
    return response


class RateLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not settings.RATE_LIMITS_ENABLED or request.method != "POST":
            return self.get_response(request)
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return self.get_response(request)
        url_name = match.url_name
        if url_name in ("login", "api_token"):
            return self._sign_in(request, url_name)
        if url_name in ("task_submit", "work_next"):
            return self._work(request, url_name, match)
        return self.get_response(request)

    def _sign_in(self, request, url_name):
        window = settings.LOGIN_WINDOW_SECONDS
        account, address = _username(request, url_name), client_address(request)
        if (account and current("login-account", account, window) >= settings.LOGIN_FAILURES_PER_ACCOUNT) or current(
            "login-address", address, window
        ) >= settings.LOGIN_FAILURES_PER_ADDRESS:
            wait = retry_after(window)
            return _refused(
                request,
                url_name,
                f"Too many failed sign-ins for this account or from this address. Try again in {_minutes(wait)}.",
                wait,
            )
        response = self.get_response(request)
        failed = response.status_code == 200 if url_name == "login" else response.status_code in (400, 401, 403)
        if failed:
            if account:
                count("login-account", account, window)
            count("login-address", address, window)
        return response

    def _work(self, request, url_name, match):
        window = 60
        per_account, per_address = settings.RATE_LIMIT_WORK_PER_MINUTE
        account = _work_account(request, match)
        by_account, by_address = count_all(
            [(f"{url_name}-account", account), (f"{url_name}-address", client_address(request))], window
        )
        if by_account > per_account or by_address > per_address:
            wait = retry_after(window)
            what = "submissions" if url_name == "task_submit" else "requests for a new task"
            return _refused(
                request, url_name, f"Too many {what} in a minute. Your work is safe; try again in {wait} seconds.", wait
            )
        return self.get_response(request)


def _work_account(request, match) -> str:
    """Who is counted: a task link (its signed token names one assignment of one worker; the
    session, which a token-authorized submission does not need, is not read), else the
    signed-in user."""
    if match.kwargs.get("token"):
        return f"link:{request.path_info}"
    return reconnecting(lambda: f"user:{request.user.pk}", f"path:{request.path_info}")
