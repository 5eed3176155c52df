"""Leaving a worker's judgments out of the scores, or back in: the one write of `Worker.excluded`.

The lead's Exclude and Block (hits.services.review) call `set_excluded`, which gives every round the worker
worked in a new version (hits/versions.py) in the same transaction, so a scoring run made before
reads as out of date. No caller bumps the versions for an exclusion by hand. (An adaptive batch's
stop of a worker at chance is no exclusion: it leaves the worker's judgments out of that batch
only, hits.selectors.counted.)
"""

from django.db import transaction

from hits import versions
from hits.models import Worker


def set_excluded(worker_id: int, excluded: bool) -> bool:
    """Exclude the worker (or count them again); True when that changed anything."""
    with transaction.atomic():
        changed = bool(Worker.objects.filter(pk=worker_id).exclude(excluded=excluded).update(excluded=excluded))
        if changed:
            versions.bump_for_worker(worker_id)
    return changed
