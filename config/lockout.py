"""The sign-in lockout (django-axes): who is counted, and what a locked-out visitor is told.

After LOGIN_FAILURES_PER_ACCOUNT failed sign-ins (the sign-in page, `/api/token/`, the admin's) for
one username, or LOGIN_FAILURES_PER_ADDRESS from one address (`TwoLimitsHandler`), within
AXES_COOLOFF_TIME, every attempt, the right password too, is refused until that time has passed since the last failure. Axes counts in the database
(AccessAttempt rows, settings.AXES_HANDLER), so the lockout holds in every process whatever
the cache is, and still holds while Redis is down.

Usernames are counted as sign-in reads them: Django's sign-in form folds a username with NFKC
(fullwidth "ｌｅｎａ" signs in as "lena"), so the lockout folds it the same way
(`fold_username`, which the token endpoint uses as well).
"""

import logging
from datetime import timedelta

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_parameters, get_client_username, get_cool_off, get_failure_limit
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import Sum
from django.shortcuts import render

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


def retry_after(request) -> int:
    """Seconds until a locked-out client may try again (the whole cool-off: the lockout ends
    that long after the last counted failure)."""
    cool_off = get_cool_off(request) or timedelta(0)
    return max(1, int(cool_off.total_seconds()))


def message(wait: int) -> str:
    minutes = max(1, round(wait / 60))
    return (
        "Too many failed sign-ins for this account or from this address. "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )


def refused_page(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: the sign-in page again, with the message, as HTTP 429."""
    wait = retry_after(request)
    logger.warning("sign-in lockout: refused %s %s", request.method, request.path_info)
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


class TwoLimitsHandler(AxesDatabaseHandler):
    """Axes' database handler with the app's two limits: LOGIN_FAILURES_PER_ACCOUNT failures
    for one username, LOGIN_FAILURES_PER_ADDRESS from one address (higher: a lab's workers often
    sign in from one address). Axes compares one count with one limit (AXES_FAILURE_LIMIT, the
    per-account limit), so an address's count is given on that scale: it reaches the limit at
    exactly LOGIN_FAILURES_PER_ADDRESS failures."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        per_account = get_failure_limit(request, credentials)
        per_address = settings.LOGIN_FAILURES_PER_ADDRESS
        username = get_client_username(request, credentials)
        parameters = get_client_parameters(
            username, request.axes_ip_address, request.axes_user_agent, request, credentials
        )
        worst = 0
        # get_user_attempts filters by these parameters, in this order, within the cool-off.
        for filters, attempts in zip(parameters, self.get_user_attempts(request, credentials), strict=True):
            failures = attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
            worst = max(worst, failures if "username" in filters else failures * per_account // per_address)
        return worst
