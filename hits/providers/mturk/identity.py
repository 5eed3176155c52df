"""Who an MTurk worker is: an (assignmentId, workerId, hitId) triple counts only when MTurk says so.

The task page and our qualification page are opened with MTurk's query parameters, which
anyone can type. Before an assignment takes a place (or a test attempt is recorded) the
triple is checked with `get_assignment`; a confirmed triple is cached for an hour, a refused
one for a short while, so a reload does not call MTurk again. Anything MTurk does not confirm
is held as unconfirmed: no row is written, no place is taken, the real worker is not blocked.
"""

import contextlib
import hashlib
import logging

from django.core import signing
from django.core.cache import cache

from hits.providers.base import ProviderError

logger = logging.getLogger(__name__)

CONFIRMED_SECONDS = 3600
REFUSED_SECONDS = 30
QUAL_SALT = "hits.mturk.qualification"


def _key(sandbox: bool, assignment_id: str, worker_id: str, hit_id: str) -> str:
    raw = f"{int(sandbox)}|{assignment_id}|{worker_id}|{hit_id}".encode()
    return "mturk-identity:" + hashlib.sha256(raw).hexdigest()


def _cache_get(key):
    try:
        return cache.get(key)
    except Exception:  # noqa: BLE001 - the cache (Redis) down: ask MTurk instead
        logger.warning("cache unavailable: MTurk identity checked without it")
        return None


def _cache_set(key, value, seconds) -> None:
    with contextlib.suppress(Exception):  # the cache down: the next check asks MTurk again
        cache.set(key, value, seconds)


def confirm(provider, *, sandbox: bool, assignment_id: str, worker_id: str, hit_id: str) -> bool:
    """True when MTurk reports `assignment_id` as `worker_id`'s assignment of HIT `hit_id`."""
    if not (assignment_id and worker_id and hit_id) or max(map(len, (assignment_id, worker_id, hit_id))) > 200:
        return False
    key = _key(sandbox, assignment_id, worker_id, hit_id)
    known = _cache_get(key)
    if known is not None:
        return known
    try:
        record = provider.assignment_record(sandbox, assignment_id)
    except ProviderError as exc:
        logger.warning("MTurk did not confirm assignment %s of worker %s: %s", assignment_id, worker_id, exc)
        _cache_set(key, False, REFUSED_SECONDS)
        return False
    ok = record.get("WorkerId") == worker_id and record.get("HITId") == hit_id
    if not ok:
        logger.warning(
            "assignment %s is not worker %s's on HIT %s at MTurk (someone typed the link)",
            assignment_id,
            worker_id,
            hit_id,
        )
    _cache_set(key, ok, CONFIRMED_SECONDS if ok else REFUSED_SECONDS)
    return ok


def qualification_token(test_id: int, worker_id: str, sandbox: bool) -> str:
    """Signed proof, put in the test form, that MTurk confirmed this worker."""
    return signing.dumps({"t": test_id, "w": worker_id, "s": sandbox}, salt=QUAL_SALT, compress=True)


def read_qualification_token(token: str, test_id: int, max_age: int = 4 * 3600) -> tuple[str, bool] | None:
    """(worker id, sandbox) of a valid token for this test, else None."""
    try:
        data = signing.loads(token or "", salt=QUAL_SALT, max_age=max_age)
        if int(data["t"]) != test_id:
            return None
        return str(data["w"]), bool(data["s"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None
