"""The one module that imports requests: Prolific's REST API with a token from the
environment, timeouts, retries on 429/5xx with exponential backoff, and every failure
turned into a ProviderError with a message a lead can act on.

Idempotent calls (GET, PATCH, the submission transition that Prolific documents as
idempotent, adding group members, the cost calculator) go through a session that retries;
calls that could act twice (creating a study, publishing, setting up and paying a bonus)
go through a session that never retries, so a lost answer is resolved by reading state
back, never by sending the call again. Endpoints and shapes: see hits/providers/prolific.py.
"""

import re
from urllib.parse import quote

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from hits.provider_interface.base import ProviderError

DEFAULT_API_URL = "https://api.prolific.com/api/v1/"
RETRY_STATUSES = (429, 500, 502, 503, 504)
BACKOFF = 0.5  # seconds; urllib3 doubles it per retry (0.5, 1, 2, 4) and honours Retry-After


# Prolific's ids (participants, studies, submissions, groups) are 24 hexadecimal characters.
PROLIFIC_ID = re.compile(r"[0-9a-fA-F]{24}")


def is_prolific_id(value) -> bool:
    return isinstance(value, str) and PROLIFIC_ID.fullmatch(value) is not None


def segment(value) -> str:
    """One id as a path segment: quoted whole (no "/", "?", "#" or ".." can steer the path)."""
    text = str(value)
    if not text or text in (".", ".."):
        raise ProviderError(f"{text!r} is not an id Prolific could have given; nothing was sent.")
    return quote(text, safe="")


class ProlificError(ProviderError):
    """Prolific answered with an error status; `status` and `detail` are kept for callers."""

    def __init__(self, status: int, message: str, detail=None):
        self.status = status
        self.detail = detail
        super().__init__(message)


def _session(token: str, retries: int, backoff: float) -> requests.Session:
    session = requests.Session()
    session.headers.update(
        {"Authorization": f"Token {token}", "Accept": "application/json", "User-Agent": "acu-eval/1"}
    )
    retry = Retry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        backoff_factor=backoff,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=None,
        respect_retry_after_header=True,
        raise_on_status=False,  # the last 429/5xx comes back as a response we explain
    )
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


def _error_text(body) -> str:
    """Prolific's errors come as {"error": {"title", "detail"}} or {"detail": ...}."""
    if isinstance(body, dict):
        error = body["error"] if isinstance(body.get("error"), dict) else body
        detail = error.get("detail") or error.get("title") or error.get("message")
        if isinstance(detail, dict):
            return "; ".join(f"{key}: {value}" for key, value in detail.items())
        if detail:
            return str(detail)
    return str(body)[:300]


class ProlificClient:
    def __init__(
        self,
        token: str | None = None,
        base_url: str | None = None,
        timeout: tuple[float, float] | None = None,
        retries: int | None = None,
        backoff: float | None = None,
    ):
        token = token if token is not None else getattr(settings, "PROLIFIC_API_TOKEN", "")
        if not token:
            raise ProviderError(
                "No Prolific API token: set PROLIFIC_API_TOKEN (Prolific → Settings → API tokens) for the web and "
                "worker processes. Nothing was sent; the batch can be resumed once it is set."
            )
        self.base_url = (base_url or getattr(settings, "PROLIFIC_API_URL", "") or DEFAULT_API_URL).rstrip("/") + "/"
        self.timeout = timeout or (5.0, float(getattr(settings, "PROLIFIC_TIMEOUT", 30)))
        retries = getattr(settings, "PROLIFIC_RETRIES", 4) if retries is None else retries
        backoff = BACKOFF if backoff is None else backoff
        self.retrying = _session(token, retries, backoff)
        self.once = _session(token, 0, 0)

    # ---- transport ----------------------------------------------------------------------
    def request(self, method: str, path: str, *, json=None, params=None, idempotent: bool = True):
        # Paths are built here from quoted segments and appended to the API address, never
        # resolved (urljoin) against it; an absolute address is only a page link Prolific gave.
        if path.startswith(("http://", "https://")):
            if not path.startswith(self.base_url):
                raise ProviderError(f"Prolific linked outside its API ({path[:80]}); nothing was sent.")
            url = path
        else:
            url = self.base_url + path.lstrip("/")
        session = self.retrying if idempotent else self.once
        try:
            response = session.request(method, url, json=json, params=params, timeout=self.timeout)
        except requests.exceptions.Timeout:
            raise ProviderError(
                f"Prolific did not answer {method} {path} in time. If it acted, the next sync or resume sees it; "
                "nothing is sent twice."
            ) from None
        except requests.exceptions.RequestException as exc:
            reason = exc.__class__.__name__
            raise ProviderError(
                f"Could not reach Prolific ({reason} on {method} {path}). Check the network; nothing was lost and "
                "the batch can be resumed."
            ) from None
        return self._result(method, path, response)

    def _result(self, method: str, path: str, response):
        try:
            body = response.json() if response.content else {}
        except ValueError:
            body = {"detail": response.text[:300]}
        status = response.status_code
        if status < 400:
            return body
        if status in (401, 403):
            message = f"Prolific refused the API token ({status}): check PROLIFIC_API_TOKEN and its workspace."
        elif status == 429:
            message = "Prolific is rate-limiting this account (429) even after retrying; try again in a few minutes."
        elif status >= 500:
            message = f"Prolific had a server error ({status}) on {method} {path}, after retries; try again later."
        else:
            message = f"Prolific refused {method} {path} ({status}): {_error_text(body)}"
        raise ProlificError(status, message, body)

    # ---- studies ------------------------------------------------------------------------
    def create_study(self, payload: dict) -> dict:
        return self.request("POST", "studies/", json=payload, idempotent=False)

    def get_study(self, study_id: str) -> dict:
        return self.request("GET", f"studies/{segment(study_id)}/")

    def update_study(self, study_id: str, fields: dict) -> dict:
        return self.request("PATCH", f"studies/{segment(study_id)}/", json=fields)

    def transition_study(self, study_id: str, action: str) -> dict:
        # Not retried: publishing twice is refused; callers read the status back instead.
        return self.request(
            "POST", f"studies/{segment(study_id)}/transition/", json={"action": action}, idempotent=False
        )

    def study_cost(self, reward_cents: int, places: int) -> dict:
        return self.request(
            "POST", "study-cost-calculator/", json={"reward": reward_cents, "total_available_places": places}
        )

    # ---- submissions --------------------------------------------------------------------
    def list_submissions(self, study_id: str, page_size: int = 100):
        """Every submission of a study, following the `_links.next.href` of each page."""
        url, params = "submissions/", {"study": study_id, "page_size": page_size}
        for _ in range(10_000):  # bounded: a misbehaving API cannot loop forever
            page = self.request("GET", url, params=params)
            yield from page.get("results") or []
            nxt = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not nxt:
                return
            url, params = nxt, {}
        raise ProviderError("Prolific kept returning further pages of submissions; stopped after 10,000.")

    def get_submission(self, submission_id: str) -> dict:
        return self.request("GET", f"submissions/{segment(submission_id)}/")

    def transition_submission(self, submission_id: str, action: str, **fields) -> dict:
        # Prolific documents this transition as idempotent: a repeat is ignored, so retrying is safe.
        return self.request(
            "POST", f"submissions/{segment(submission_id)}/transition/", json={"action": action, **fields}
        )

    def bulk_approve(self, submission_ids: list[str]) -> dict:
        # The documented body is one of {study_id, participant_ids} or {submission_ids} (the one
        # Prolific recommends); at most sync.BULK_APPROVE_MAX ids a call, as they recommend.
        return self.request("POST", "submissions/bulk-approve/", json={"submission_ids": submission_ids})

    # ---- bonuses ------------------------------------------------------------------------
    def setup_bonuses(self, study_id: str, csv_bonuses: str) -> dict:
        return self.request(
            "POST",
            "submissions/bonus-payments/",
            json={"study_id": study_id, "csv_bonuses": csv_bonuses},
            idempotent=False,
        )

    def pay_bonuses(self, bulk_id: str) -> dict:
        # Prolific: "This endpoint is not idempotent" — sent at most once, never retried.
        return self.request("POST", f"bulk-bonus-payments/{segment(bulk_id)}/pay/", idempotent=False)

    # ---- participant groups -------------------------------------------------------------
    def create_group(self, name: str, workspace_id: str, description: str = "") -> dict:
        return self.request(
            "POST",
            "participant-groups/",
            json={"name": name, "workspace_id": workspace_id, "description": description},
            idempotent=False,
        )

    def add_to_group(self, group_id: str, participant_ids: list[str]) -> dict:
        # Members already in the group are ignored by Prolific, so a retry is harmless.
        return self.request(
            "POST", f"participant-groups/{segment(group_id)}/participants/", json={"participant_ids": participant_ids}
        )
