"""An OpenAI-compatible chat client that asks for one JSON answer (vLLM, Ollama or a hosted API).

Configuration (Django settings, else the environment): `LLM_BASE_URL` (the API base, e.g.
`http://127.0.0.1:11434/v1`; `/chat/completions` is appended), `LLM_MODEL`, `LLM_API_KEY`
(optional for local servers) and `LLM_TIMEOUT` (seconds to wait for an answer, default 60).
No Django models here: the drafters (annotation) and the judges (scoring) both call it.
Every failure is an `LLMError` whose message tells the lead what to do; nothing else escapes.
"""

import json
import logging
import os
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import requests

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 60.0
CONNECT_TIMEOUT = 5.0
BACKOFF = 0.5  # seconds, doubled per retry
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 60.0  # seconds: a server's Retry-After beyond this is waited this long only
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class LLMError(Exception):
    """The language model could not give a usable answer; the message is for the lead."""

    requests = 0  # the HTTP requests sent before it failed (what a run counts as calls made)


class LLMAnswerError(LLMError):
    """The model answered, but not with the JSON asked for (asking again may help)."""


USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


@dataclass
class ChatReply:
    """One answer of the chat endpoint: its content, the token `usage` the server reported
    ({prompt_tokens, completion_tokens, total_tokens}; None when it reported none: unknown, not
    zero) and the HTTP `requests` it took (1, plus one per retry)."""

    content: str
    usage: dict | None
    requests: int


def _usage(body: dict) -> dict | None:
    """The response's `usage` counts that are whole numbers; None without any."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    counts = {
        key: int(usage[key])
        for key in USAGE_KEYS
        if isinstance(usage.get(key), int) and not isinstance(usage.get(key), bool) and usage[key] >= 0
    }
    if counts and "total_tokens" not in counts and {"prompt_tokens", "completion_tokens"} <= counts.keys():
        counts["total_tokens"] = counts["prompt_tokens"] + counts["completion_tokens"]
    return counts or None


def _setting(name: str, default: str = "") -> str:
    try:
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        try:
            value = getattr(settings, name, None) if settings.configured else None
        except ImproperlyConfigured:
            value = None
    except ImportError:  # used without Django
        value = None
    if value in (None, ""):
        value = os.environ.get(name, default)
    return str(value) if value is not None else default


def llm_settings() -> dict:
    """The endpoint in force (never the key itself: only whether one is set)."""
    return {
        "base_url": _setting("LLM_BASE_URL").rstrip("/"),
        "model": _setting("LLM_MODEL"),
        "api_key_set": bool(_setting("LLM_API_KEY")),
        "timeout": _timeout(None),
    }


def _timeout(timeout: float | None) -> float:
    if timeout is not None:
        return float(timeout)
    raw = _setting("LLM_TIMEOUT")
    try:
        return float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        raise LLMError(f"LLM_TIMEOUT must be a number of seconds, not {raw!r}.") from None


def llm_configured() -> bool:
    """True when an endpoint and a model are named (whether they answer is another matter)."""
    return bool(_setting("LLM_BASE_URL") and _setting("LLM_MODEL"))


def _error_detail(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("detail") or error)[:300]
        return str(error)[:300]
    return str(body)[:300]


def retry_after(response: requests.Response) -> float:
    """The seconds a 429/5xx answer's Retry-After header asks to wait (seconds or an HTTP date),
    at most MAX_RETRY_AFTER; 0 without a readable header."""
    raw = (response.headers.get("Retry-After") or "").strip()
    if not raw:
        return 0.0
    try:
        seconds = float(raw)
    except ValueError:
        try:
            seconds = (parsedate_to_datetime(raw) - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError):
            return 0.0
    return min(max(seconds, 0.0), MAX_RETRY_AFTER) if seconds == seconds else 0.0


def parse_json_content(content: str):
    """The JSON object or list in a model's answer (a ```json fence around it is tolerated)."""
    if not isinstance(content, str) or not content.strip():
        raise LLMAnswerError("The language model returned an empty answer instead of JSON.")
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except ValueError:
        raise LLMAnswerError(f"The language model's answer is not valid JSON: {content[:200]!r}") from None
    if not isinstance(value, (dict, list)):
        raise LLMAnswerError(f"The language model answered {value!r}; a JSON object or list was expected.")
    return value


def chat_json(messages: list[dict], *, temperature: float = 0.0, timeout: float | None = None, retries: int = 2):
    """Send `messages` to the chat endpoint asking for a JSON object and return it parsed (`chat`)."""
    return parse_json_content(chat(messages, temperature=temperature, timeout=timeout, retries=retries).content)


def _failed(message: str, requests_sent: int) -> LLMError:
    error = LLMError(message)
    error.requests = requests_sent
    return error


def chat(
    messages: list[dict], *, temperature: float = 0.0, timeout: float | None = None, retries: int = 2
) -> ChatReply:
    """Send `messages` to the chat endpoint asking for a JSON object; its answer (unparsed), usage
    and the requests it took.

    Timeouts, refused connections, 429 and 5xx answers are retried `retries` times with
    backoff, waiting at least what a 429/5xx answer's Retry-After asks (capped); anything else (not configured, a 4xx, a malformed answer) raises LLMError at once.
    """
    if not llm_configured():
        raise LLMError(
            "No language model is configured: set LLM_BASE_URL (an OpenAI-compatible API base such as "
            "http://127.0.0.1:11434/v1) and LLM_MODEL, and LLM_API_KEY if the server needs one."
        )
    base = _setting("LLM_BASE_URL").rstrip("/")
    model = _setting("LLM_MODEL")
    key = _setting("LLM_API_KEY")
    read_timeout = _timeout(timeout)
    url = f"{base}/chat/completions"
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    payload = {
        "model": model,
        "messages": messages,
        "temperature": temperature,
        "response_format": {"type": "json_object"},
    }
    last_problem, wait = "", 0.0
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(max(BACKOFF * 2 ** (attempt - 1), wait))
        wait = 0.0
        try:
            response = requests.post(
                url, json=payload, headers=headers, timeout=(min(CONNECT_TIMEOUT, read_timeout), read_timeout)
            )
        except requests.Timeout:
            last_problem = f"no answer from {url} within {read_timeout:g} s (LLM_TIMEOUT)"
            logger.warning("LLM call timed out (attempt %d of %d): %s", attempt + 1, retries + 1, url)
            continue
        except requests.ConnectionError:
            last_problem = f"cannot reach {url}: is the server running and LLM_BASE_URL right?"
            logger.warning("LLM endpoint unreachable (attempt %d of %d): %s", attempt + 1, retries + 1, url)
            continue
        except requests.RequestException as exc:
            raise _failed(f"The request to the language model at {url} failed: {exc}", attempt + 1) from None
        if response.status_code in RETRY_STATUSES:
            last_problem = f"{url} answered HTTP {response.status_code}: {_error_detail(response)}"
            wait = retry_after(response)
            logger.warning(
                "LLM call failed with HTTP %d (attempt %d of %d)", response.status_code, attempt + 1, retries + 1
            )
            continue
        if response.status_code >= 400:
            hint = " Check LLM_API_KEY." if response.status_code in (401, 403) else ""
            hint = hint or (" Check LLM_MODEL and LLM_BASE_URL." if response.status_code == 404 else "")
            raise _failed(
                f"The language model refused the request (HTTP {response.status_code}): "
                f"{_error_detail(response)}.{hint}",
                attempt + 1,
            )
        try:
            body = response.json()
            content = body["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise _failed(
                f"{url} did not answer like an OpenAI-compatible chat API (no choices[0].message.content).", attempt + 1
            ) from None
        return ChatReply(content=content, usage=_usage(body), requests=attempt + 1)
    raise _failed(f"The language model gave no answer after {retries + 1} attempts: {last_problem}.", retries + 1)
