"""Per-minute limits on the crowd path's posts, on django-ratelimit's counters; the client's
address as every limit (and the sign-in lockout) sees it.

`client_address`: the peer's address (REMOTE_ADDR), or, when the peer is one of the
TRUSTED_PROXIES (CIDRs), the address its X-Forwarded-For names: the entries are read from the
right (the last one is the one the nearest proxy added) past every trusted proxy, and the first
untrusted one is the client. A client that talks to the app directly cannot choose its address
with the header, whatever it sends. An IPv6 address is counted by its /64 (one subscriber's
network: its owner can use 2^64 addresses), as the network's first address (`2001:db8:1:2::`);
an IPv4 address (an IPv4-mapped IPv6 one too) as itself.

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
import ipaddress
import logging
import time
from collections.abc import Callable
from functools import lru_cache, wraps

from django.conf import settings
from django.core.cache import cache
from django.http import JsonResponse
from django.shortcuts import render
from django_ratelimit.core import get_usage

from .replies import wants_page

logger = logging.getLogger(__name__)


IPV6_GROUP_PREFIX = 64


@lru_cache(maxsize=8)
def _networks(cidrs: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


def _parse(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443", as some proxies write it
        text = text[1 : text.index("]")]
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def is_trusted_proxy(address) -> bool:
    """Whether `address` (text or parsed) is one of settings.TRUSTED_PROXIES."""
    parsed = _parse(address) if isinstance(address, str) else address
    return parsed is not None and any(parsed in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


def _peer_and_forwarded(request):
    """The address that sent the request: the peer, or the client a trusted proxy names."""
    peer = _parse(request.META.get("REMOTE_ADDR", ""))
    if peer is None or not is_trusted_proxy(peer):
        return peer
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for entry in reversed([e for e in forwarded.split(",") if e.strip()]):
        hop = _parse(entry)
        if hop is None:  # the proxy wrote something that is no address: stop at what it vouches for
            return peer
        if not is_trusted_proxy(hop):
            return hop
        peer = hop
    return peer


def group(address) -> str:
    """An address as the limits count it: IPv4 as itself, IPv6 by its /64."""
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, IPV6_GROUP_PREFIX), strict=False).network_address)
    return str(address)


def client_address(request) -> str:
    """The client's address as every per-address bound counts it (see the module's docstring);
    "" when the request carries none that can be read."""
    address = _peer_and_forwarded(request)
    return "" if address is None else group(address)


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
                if wants_page(request):  # a form's button (Start next task): a page, not JSON text
                    response = render(request, "429.html", {"message": message}, status=429)
                else:
                    body = {"ok": False, "error": message, "detail": message, "code": "rate_limited"}
                    response = JsonResponse(body, status=429)
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
