"""A dataset's rows kept per round between recomputes, keyed by the round's version.

While a round is being worked only that round's counted judgments change, and every change
bumps the round's version in its own transaction (`hits.versions`: a submission, a rejection,
an exclusion, a provider confirmation, an import). A dataset-level read (the recompute queued
after submissions) therefore reads the versions of the dataset's rounds (one query) and reads
from the database only the rounds whose version moved since this process last read them; the
finished rounds come from here, so the recompute's reads follow the live round, not the whole
dataset (issue 14). What is kept are the database's rows, not results: a run from kept rows
equals one that read everything (tests/test_round_cache.py).

Versions are read before the rows, so rows kept under a version are at least as new as it (a
change committed in between has bumped the version again: the next read misses and reads the
round anew). Kept per process (a Celery worker process, or a web process computing in place),
at most SCORING_ROUND_CACHE_ROWS rows over all rounds, the least recently used dropped first;
0 turns it off. PostgreSQL only, as `scoring.runs.scoped`.
"""

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sized
from typing import TypeVar

from django.conf import settings

from hits import versions

logger = logging.getLogger(__name__)

Rows = TypeVar("Rows", bound=Sized)

_lock = threading.Lock()
# (database, kind, round id) -> (version, rows, size counted against the limit)
_kept: OrderedDict[tuple[int, str, int], tuple[int, Sized, int]] = OrderedDict()
_total = 0


def per_round(kind: str, dataset_id: int, read: Callable[[list[int]], Mapping[int, Rows]], empty: Rows) -> list[Rows]:
    """The rows of each round of the dataset, in round id order. `read(round ids)` reads the
    rounds not kept at their current version and returns {round id: rows}; a round it leaves
    out has none (`empty`). `kind` names what is kept (each reader its own)."""
    database, current = versions.rounds(dataset_id)
    found: dict[int, Rows] = {}
    with _lock:
        for round_id, version in current.items():
            entry = _kept.get((database, kind, round_id))
            if entry is not None and entry[0] == version:
                _kept.move_to_end((database, kind, round_id))
                found[round_id] = entry[1]  # type: ignore[assignment]
    missing = sorted(set(current) - set(found))
    if missing:
        fresh = read(missing)
        for round_id in missing:
            found[round_id] = fresh.get(round_id, empty)
            _keep((database, kind, round_id), current[round_id], found[round_id])
    logger.debug("dataset %s %s: %d of %d rounds read from the database", dataset_id, kind, len(missing), len(current))
    return [found[round_id] for round_id in sorted(current)]


def _keep(key: tuple[int, str, int], version: int, rows: Sized) -> None:
    global _total
    limit = settings.SCORING_ROUND_CACHE_ROWS
    size = len(rows) + 1  # an empty round still takes an entry
    with _lock:
        old = _kept.pop(key, None)
        if old is not None:
            _total -= old[2]
        if size > limit:
            return
        _kept[key] = (version, rows, size)
        _total += size
        while _total > limit:
            _, (_, _, dropped) = _kept.popitem(last=False)
            _total -= dropped


def clear() -> None:
    """Forget every kept round (tests; a process that wants its memory back)."""
    global _total
    with _lock:
        _kept.clear()
        _total = 0


def kept_rows() -> int:
    """Rows kept now, over all rounds and kinds (each round counts one more)."""
    return _total
