"""The one module that imports boto3: a configured `mturk` client, and AWS errors turned
into ProviderError messages a lead can act on.

Credentials come from the standard AWS chain (environment, shared files, instance role),
never from our database. Throttling and transient faults are retried by botocore's
"standard" retry mode, at most MAX_ATTEMPTS attempts in all, each bounded by the connect and
read timeouts, so one call waits at most about MAX_ATTEMPTS × (CONNECT + READ) seconds. No page
a worker opens calls MTurk (hits/providers/mturk/views.py); only leads' actions and the sync do.
"""

import logging
import re

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError, NoCredentialsError
from django.conf import settings

from hits.provider_interface.base import ProviderError

logger = logging.getLogger(__name__)

ENDPOINTS = {
    True: "https://mturk-requester-sandbox.us-east-1.amazonaws.com",
    False: "https://mturk-requester.us-east-1.amazonaws.com",
}
WORKER_SITES = {True: "https://workersandbox.mturk.com", False: "https://www.mturk.com"}
MAX_ATTEMPTS, CONNECT_TIMEOUT, READ_TIMEOUT = 3, 5, 20
RETRY_CONFIG = Config(
    retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS},  # the first call and two retries
    connect_timeout=CONNECT_TIMEOUT,
    read_timeout=READ_TIMEOUT,
)
_HIT_ID = re.compile(r"\b[A-Z0-9]{30}\b")


def endpoint(sandbox: bool) -> str:
    """MTURK_ENDPOINT_URL (a proxy, or an MTurk-compatible stand-in for staging) or AWS's own."""
    return getattr(settings, "MTURK_ENDPOINT_URL", "") or ENDPOINTS[sandbox]


def make_client(sandbox: bool, endpoint_url: str | None = None, config: Config | None = None):
    url = endpoint_url or endpoint(sandbox)
    logger.debug("MTurk client for %s", url)
    return boto3.client("mturk", region_name="us-east-1", endpoint_url=url, config=config or RETRY_CONFIG)


def no_retry_config() -> Config:
    """For callers (and tests) that want one attempt and a quick answer."""
    return Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=2, read_timeout=5)


def error_code(exc: Exception) -> str:
    return exc.response.get("Error", {}).get("Code", "") if isinstance(exc, ClientError) else ""


def error_message(exc: Exception) -> str:
    return exc.response.get("Error", {}).get("Message", str(exc)) if isinstance(exc, ClientError) else str(exc)


def existing_hit_id(exc: Exception) -> str | None:
    """The HIT id MTurk names when a UniqueRequestToken was already used (the HIT exists)."""
    if not isinstance(exc, ClientError):
        return None
    message = error_message(exc)
    if "already exists" not in message.lower() and "HitAlreadyExists" not in message:
        return None
    found = _HIT_ID.search(message)
    return found.group(0) if found else None


def call(client, operation: str, **params):
    """Call one operation; any failure becomes a ProviderError with a clear message."""
    try:
        return getattr(client, operation)(**params)
    except NoCredentialsError:
        raise ProviderError(
            "No AWS credentials found. Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile) "
            "for the web and worker processes."
        ) from None
    except EndpointConnectionError as exc:
        raise ProviderError(
            f"Could not reach Amazon Mechanical Turk ({exc.kwargs.get('endpoint_url', 'endpoint')}). "
            "AWS closed MTurk to requesters on 2026-09-30; if it is reachable again, check the network. "
            "Nothing was lost: the batch can be resumed."
        ) from None
    except ClientError as exc:
        raise MTurkError(error_code(exc), error_message(exc), exc) from None
    except BotoCoreError as exc:
        raise ProviderError(f"MTurk call {operation} failed: {exc}") from None


class MTurkError(ProviderError):
    """MTurk answered with an error (RequestError or ServiceFault)."""

    def __init__(self, code: str, message: str, original: Exception):
        self.code = code
        self.original = original
        self.existing_hit_id = existing_hit_id(original)
        super().__init__(f"MTurk refused ({code}): {message}")
