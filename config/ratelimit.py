"""Per-minute limits on the crowd path's posts, on django-ratelimit's counters; the client's
address as every limit (and the sign-in lockout) sees it.

`@per_minute(...)` sits on the views it limits ("Start next task", the task submission): every
POST counts once per account (`account`: the signed-in user, or the task link, which a signed
token names) and once per address, in Django's cache (Redis when CACHE_URL is set, so every web
process shares the counts); past RATE_LIMIT_WORK_PER_MINUTE (per account, per address) a
request gets HTTP 429, a message saying when to try again, and `Retry-After`. When the cache
itself is unreachable (Redis down) the limit is not applied (logged), so an outage of the
counters never becomes an error page.

`count` is a plain counter for limits that are not a view's (Prolific session starts).
"""

import hashlib
import logging
import time
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.http import JsonResponse
from django_ratelimit.core import get_usage

logger = logging.getLogger(__name__)


def client_address(request) -> str:
    # Behind the proxy (BEHIND_PROXY) the proxy's X-Forwarded-For names the client; its last entry is the one it added.
    if settings.SECURE_PROXY_SSL_HEADER and request.META.get("HTTP_X_FORWARDED_FOR"):
        return request.META["HTTP_X_FORWARDED_FOR"].split(",")[-1].strip()
    return request.META.get("REMOTE_ADDR", "")


def signed_in_user(group: str, request) -> str:
    """The account of a signed-in user (django-ratelimit key)."""
    return f"user:{request.user.pk}"


def task_link(group: str, request) -> str:
    """The account of a task link: its signed token names one assignment of one worker (the
    session, which a link-authorized request does not need, is not read)."""
    return f"link:{request.path_info}"


def _address(group: str, request) -> str:
    return f"address:{client_address(request)}"


def per_minute(what: str, *, account: Callable[[str, object], str]):
    """Limit a view to RATE_LIMIT_WORK_PER_MINUTE requests a minute per `account` and per address."""

    def decorator(view):
        group = f"{view.__module__}.{view.__qualname__}"

        @wraps(view)
        def limited(request, *args, **kwargs):
            wait = _wait(request, group, account)
            if wait:
                message = f"Too many {what} in a minute. Your work is safe; try again in {wait} seconds."
                logger.warning("rate limit: refused %s %s from %s", request.method, group, client_address(request))
                response = JsonResponse({"ok": False, "error": message, "detail": message}, status=429)
                response["Retry-After"] = str(wait)
                return response
            return view(request, *args, **kwargs)

        return limited

    return decorator


def _wait(request, group: str, account) -> int:
    """Count the request for its account and its address; the seconds until the later window
    ends if either count is past its limit, else 0."""
    per_account, per_address = settings.RATE_LIMIT_WORK_PER_MINUTE
    waits = [0]
    try:
        for scope, key, limit in (("account", account, per_account), ("address", _address, per_address)):
            usage = get_usage(request, group=f"{group}:{scope}", key=key, rate=(limit, 60), increment=True)
            if usage and usage["should_limit"]:
                waits.append(max(1, usage["time_left"]))
    except Exception as exc:  # noqa: BLE001 - redis.ConnectionError and friends
        logger.warning("rate-limit counters unavailable (%s): %s not limited", exc.__class__.__name__, group)
        return 0
    return max(waits)


def count(scope: str, who: str, window: int) -> int:
    """Add one to this fixed window's count of (scope, who) and return it; 0 when the cache is
    unreachable (logged: the limit is not applied)."""
    digest = hashlib.sha256(who.encode("utf-8", "replace")).hexdigest()[:32]
    key = f"rl:{scope}:{digest}:{int(time.time() // window)}"
    try:
        if cache.add(key, 1, window + 5):
            return 1
        try:
            return cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, window + 5)
            return 1
    except Exception as exc:  # noqa: BLE001 - redis.ConnectionError and friends
        logger.warning("rate-limit counters unavailable (%s): %s not applied", exc.__class__.__name__, scope)
        return 0
