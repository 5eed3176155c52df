"""Sign-in limits that an attacker cannot turn against the account's owner (django-axes).

Two bounds, on the sign-in page, `/api/token/` and the admin's sign-in, counted in the database
(AccessAttempt rows, settings.AXES_HANDLER), so they hold in every process, Redis or not:

- **a lock per account and address**: after LOGIN_FAILURES_PER_ACCOUNT_AND_ADDRESS failed
  sign-ins for one username from one address (an IPv6 /64, config.ratelimit.client_address)
  within LOGIN_WINDOW_SECONDS, that address's attempts for that username, the right password too,
  are refused until the window has passed since the last failure. Failures from other addresses
  never lock the owner out of their own, and failures from one shared address (a lab's NAT) for
  some accounts never lock the others behind it.
- **a delay per account from all addresses** (many addresses guessing one password): once
  LOGIN_FAILURES_PER_ACCOUNT failures for the username have been counted in the window, each
  further check of its password waits 2^(failures - LOGIN_FAILURES_PER_ACCOUNT) seconds (at most
  LOGIN_DELAY_MAX_SECONDS) after the last failure; an attempt sooner is refused with the seconds
  to wait, and is not counted. A browser the account has signed in from before (it holds the
  signed cookie KNOWN_COOKIE naming the account) is not delayed. Nothing here touches a session:
  a signed-in user stays signed in.

Usernames are counted as sign-in reads them: Django's sign-in form folds a username with NFKC
(fullwidth "ｌｅｎａ" signs in as "lena"), so the lockout folds it the same way
(`fold_username`, which the token endpoint uses as well).
"""

import logging
from datetime import timedelta

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.core import signing
from django.db.models import Max, Sum
from django.http import JsonResponse
from django.shortcuts import render
from django.utils import timezone

from .ratelimit import client_address as _client_address

# The browsers an account has signed in from: a signed cookie naming (up to KNOWN_MAX) folded usernames.
KNOWN_COOKIE = "acu_known"
KNOWN_SALT = "config.lockout.known"
KNOWN_MAX_AGE = 365 * 24 * 3600
KNOWN_MAX = 20

logger = logging.getLogger(__name__)


def fold_username(raw: str) -> str:
    """A username as sign-in looks it up: NFKC-folded (Django's `normalize_username`, the
    folding of its sign-in form's username field)."""
    return get_user_model().normalize_username(raw)


def username(request, credentials: dict | None) -> str | None:
    """AXES_USERNAME_CALLABLE: the folded username of an attempt."""
    raw = (credentials or {}).get("username")
    if raw is None and request is not None:
        raw = getattr(request, "data", request.POST).get("username")
    return fold_username(str(raw)) if raw is not None else None


def client_address(request) -> str | None:
    """AXES_CLIENT_IP_CALLABLE: the address every per-address bound counts (None if unreadable)."""
    return _client_address(request) or None


def retry_after(request) -> int:
    """Seconds until a refused client may try again: the account's delay when that refused it,
    else the whole cool-off (the lock ends that long after the last counted failure)."""
    delayed = getattr(request, "lockout_delay", 0)
    if delayed:
        return delayed
    cool_off = get_cool_off(request) or timedelta(0)
    return max(1, int(cool_off.total_seconds()))


def message(wait: int) -> str:
    count, unit = (wait, "second") if wait < 120 else (max(1, round(wait / 60)), "minute")
    return f"Too many failed sign-ins for this account. Try again in {count} {unit}{'s' if count != 1 else ''}."


def account_delay(failures: int) -> int:
    """Seconds a password check of an account waits after its last failure, given the account's
    failures in the window (0 below LOGIN_FAILURES_PER_ACCOUNT)."""
    over = failures - settings.LOGIN_FAILURES_PER_ACCOUNT
    if over < 0:
        return 0
    return min(settings.LOGIN_DELAY_MAX_SECONDS, 2 ** min(over, 30))


def known_accounts(request) -> list[str]:
    """The folded usernames that have signed in from this browser (its KNOWN_COOKIE)."""
    raw = request.COOKIES.get(KNOWN_COOKIE)
    if not raw:
        return []
    try:
        names = signing.loads(raw, salt=KNOWN_SALT, max_age=KNOWN_MAX_AGE)
    except signing.BadSignature:
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def refused_page(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: the sign-in page again, with the message, as HTTP 429."""
    wait = retry_after(request)
    logger.warning("sign-in lockout: refused %s %s", request.method, request.path_info)
    if request.path_info.startswith("/api/"):  # the API answers JSON, with its code
        text = message(wait)
        body = {"ok": False, "error": text, "detail": text, "code": "locked_out"}
        response = JsonResponse(body, status=429)
        response["Retry-After"] = str(wait)
        return response
    context = {"form": AuthenticationForm(request), "limit_message": message(wait)}
    response = render(request, "registration/login.html", context, status=429)
    response["Retry-After"] = str(wait)
    return response


class LockoutBackend(AxesStandaloneBackend):
    """Axes' backend (first in AUTHENTICATION_BACKENDS: refuses a locked-out client before a
    password is checked). An `authenticate()` without a request (the test client's `login()`,
    a shell) has no client to count, so it passes here where axes would raise."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


class AccountAddressHandler(AxesDatabaseHandler):
    """Axes' database handler with the app's two bounds (see the module's docstring): axes
    itself locks the (username, address) pair (AXES_LOCKOUT_PARAMETERS, AXES_FAILURE_LIMIT);
    `is_locked` adds the account's delay."""

    def is_locked(self, request, credentials: dict | None = None) -> bool:
        if super().is_locked(request, credentials):
            return True
        wait = self.delay_left(request, credentials)
        if wait:
            request.lockout_delay = wait
            logger.warning("sign-in delay: %s s before the next check of this account", wait)
        return bool(wait)

    def delay_left(self, request, credentials: dict | None) -> int:
        """Seconds this attempt must still wait for the account's delay (0: check it now)."""
        username = get_client_username(request, credentials)
        if not username or username in known_accounts(request):
            return 0
        since = timezone.now() - (get_cool_off(request) or timedelta(0))
        counted = AccessAttempt.objects.filter(username=username, attempt_time__gte=since).aggregate(
            failures=Sum("failures_since_start"), last=Max("attempt_time")
        )
        delay = account_delay(counted["failures"] or 0)
        if not delay:
            return 0
        elapsed = (timezone.now() - counted["last"]).total_seconds()
        return max(0, int(delay - elapsed + 0.999))

    def user_logged_in(self, sender, request, user, **kwargs):
        super().user_logged_in(sender, request, user, **kwargs)
        if request is not None:
            request.lockout_signed_in = fold_username(user.get_username())


class KnownBrowserMiddleware:
    """Gives a browser that has just signed in the cookie that exempts it from its account's delay."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        name = getattr(request, "lockout_signed_in", None)
        if name:
            names = [name, *(n for n in known_accounts(request) if n != name)][:KNOWN_MAX]
            response.set_cookie(
                KNOWN_COOKIE,
                signing.dumps(names, salt=KNOWN_SALT),
                max_age=KNOWN_MAX_AGE,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response
