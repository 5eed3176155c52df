"""Response hardening: a Content-Security-Policy on every page, framing rules, signed tokens kept
out of logs, and proxy headers read only from the proxy.

Every response gets a policy of "self" only; inline scripts run only with the request's nonce
(`{{ csp_nonce }}` in templates). Pages are not framable (`frame-ancestors 'none'`, beside
Django's X-Frame-Options DENY) unless a view names the sites that may frame it with
`allow_framing(response, sites)` (MTurk's worker sites for the MTurk pages, Prolific's for its pages).
"""

import logging
import re
import secrets

from django.conf import settings

from .ratelimit import is_trusted_proxy

# The headers a proxy in front sets; from anyone else they are dropped before any code reads them.
FORWARDED_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST", "HTTP_FORWARDED")


class TrustedProxyHeadersMiddleware:
    """First of all middleware: a request whose peer is not one of TRUSTED_PROXIES loses its
    X-Forwarded-* headers, so a client that reaches the app directly can neither pass for HTTPS
    (SECURE_PROXY_SSL_HEADER) nor choose its address (config.ratelimit.client_address)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        meta = request.META
        if any(name in meta for name in FORWARDED_HEADERS) and not is_trusted_proxy(meta.get("REMOTE_ADDR", "")):
            for name in FORWARDED_HEADERS:
                meta.pop(name, None)
        return self.get_response(request)


# The one inline event handler of the site (the round picker) is allowed by its hash.
INLINE_HANDLER_HASHES = ("'sha256-osjxnKEPL/pQJbFk1dKsF7PYFmTyMWGmVSiL9inhxJY='",)  # this.form.submit()


def allow_framing(response, sites):
    """Let `sites` (and this site) frame the page; drops X-Frame-Options, which cannot name sites."""
    response.csp_frame_ancestors = ["'self'", *sites]
    response.xframe_options_exempt = True
    return response


def policy(nonce: str, frame_ancestors=None) -> str:
    ancestors = " ".join(frame_ancestors) if frame_ancestors else "'none'"
    scripts = " ".join(("'self'", f"'nonce-{nonce}'", "'unsafe-hashes'", *INLINE_HANDLER_HASHES))
    return (
        "default-src 'self'; "
        f"script-src {scripts}; "
        "style-src 'self' 'unsafe-inline'; "  # style attributes in a few templates; no script runs from them
        "img-src 'self' data:; "
        "object-src 'none'; base-uri 'self'; "
        f"frame-ancestors {ancestors}"
    )


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.csp_nonce = secrets.token_urlsafe(16)
        response = self.get_response(request)
        if "Content-Security-Policy" not in response and getattr(settings, "CSP_ENABLED", True):
            response["Content-Security-Policy"] = policy(
                request.csp_nonce, getattr(response, "csp_frame_ancestors", None)
            )
        return response


def csp_nonce(request):
    """Context processor: the nonce inline <script> tags carry."""
    return {"csp_nonce": getattr(request, "csp_nonce", "")}


# Signed values from django.core.signing (task, session and form tokens): "<payload>:<time>:<signature>".
_TOKEN = re.compile(r"\.?[A-Za-z0-9_-]{16,}:[A-Za-z0-9_-]{4,}:[A-Za-z0-9_-]{16,}")


def redact(text: str) -> str:
    return _TOKEN.sub("[token]", text)


class RedactTokensFilter(logging.Filter):
    """Logging filter: task and session tokens (which open a worker's task) never reach a log line."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


def framable_by(setting_name: str):
    """View decorator: the sites listed in `settings.<setting_name>` may frame the page."""
    from functools import wraps

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            return allow_framing(view(request, *args, **kwargs), getattr(settings, setting_name))

        return wrapper

    return decorator
