"""Places a published batch still has that no worker can take (a selector, reads only).

A worker never gets the same HIT twice, so a HIT's open places beyond the in-house workers who may
take the batch and have not had that HIT (done, held or let expire) wait for nobody: with three
places per HIT and one worker, two places of each HIT are never taken. Once they are all that is
left, *Start next task* says "No task is waiting" and the batch would read as running forever. The batch page says so, why, and
what the lead can do (add workers, let failed workers retake the test, stop the batch).
Only in-house batches: the other providers bring new participants, whose number we cannot know.

Counting them reads the open HITs' assignments and the worker pool, a few queries per batch: the
pages that name many batches' stages or finish (the batch list, the dataset page, the dashboards
and their live poll) read `waiting_summary`, kept WAITING_SECONDS in the pages cache; the batch
page, which names the reasons, counts afresh (`refresh_waiting`) and keeps what it counted, so the
other pages say the same from then on.
"""

from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db.models import Count, F, Max, Q, Sum, Value
from django.db.models.functions import Greatest, Least

from config.roles import WORKER
from hits.models import Assignment, Batch, QualificationAttempt, Worker, WorkerEstimate


def _pool(batch: Batch) -> dict:
    """In-house workers by what they may do with this batch: take it, or try its test first."""
    users = get_user_model().objects.filter(groups__name=WORKER, is_active=True)
    workers = Worker.objects.filter(provider=Worker.Provider.INHOUSE, user__in=users)
    blocked = workers.filter(blocked_at__isnull=False).count()
    workers = workers.filter(blocked_at__isnull=True)
    stopped_ids = WorkerEstimate.objects.filter(batch=batch, stopped_at__isnull=False).values("worker")
    stopped = workers.filter(pk__in=stopped_ids).count()
    workers = workers.exclude(pk__in=stopped_ids)
    newcomers = users.filter(worker__isnull=True).count()
    reserved = batch.reserved_for.values("pk")
    if reserved.exists():  # reserved for named workers (hits.services.handout): nobody else may take it
        workers, newcomers = workers.filter(pk__in=reserved), 0
    test = batch.qualification_test
    if test is None:
        return {"able": workers, "may_try": newcomers, "blocked": blocked, "stopped": stopped, "failed_out": 0}
    attempts = QualificationAttempt.objects.filter(test=test)
    passed = attempts.filter(passed=True).values("worker")
    others = workers.exclude(pk__in=passed).annotate(
        tries=Count(  # attempts used: an undecided sheet uses none
            "qualification_attempts",
            filter=Q(qualification_attempts__test=test, qualification_attempts__decided=True),
        )
    )
    failed_out = others.filter(tries__gte=test.max_attempts).count()
    return {
        "able": workers.filter(pk__in=passed),
        "may_try": newcomers + others.filter(tries__lt=test.max_attempts).count(),
        "blocked": blocked,
        "stopped": stopped,
        "failed_out": failed_out,
    }


def waiting_places(batch: Batch) -> dict | None:
    """The open places of a published in-house batch that no worker can take, with the reasons;
    None when every open place has someone who may take it (or may qualify for it).

    `places`: of each open HIT, the open places beyond the workers who may take the batch and have
    not had that HIT (each takes one place at most); `hits`: the HITs with such a place. With one
    worker left and three open places on a HIT the worker never had, two of them count."""
    if batch.status != Batch.Status.PUBLISHED or batch.provider != Worker.Provider.INHOUSE:
        return None
    open_hits = batch.hits.filter(open_places__gt=0)
    if not open_hits.exists():
        return None
    pool = _pool(batch)
    if pool["may_try"]:
        return None  # a worker may still qualify (or sign in for the first time) and take them
    able = list(pool["able"].values_list("pk", flat=True))
    stuck = (
        open_hits.annotate(had=Count("assignments", filter=Q(assignments__worker_id__in=able)))
        .annotate(untaken=Least(F("open_places"), Greatest(Value(0), F("open_places") + F("had") - Value(len(able)))))
        .filter(untaken__gt=0)
    )
    totals = stuck.aggregate(n=Sum("untaken"), per_hit=Max("max_assignments"))
    places = totals["n"] or 0
    if not places:
        return None
    had = Assignment.objects.filter(hit__in=stuck.values("pk"), worker_id__in=able)
    return {
        "places": places,
        "hits": stuck.count(),
        "able": len(able),
        # places per HIT (the most of these HITs): more than `able` leaves places nobody may take
        # even on HITs no worker has had yet
        "places_per_hit": totals["per_hit"],
        "done": had.filter(status__in=Assignment.COUNTED + (Assignment.Status.REJECTED,))
        .values("worker")
        .distinct()
        .count(),
        "holding": had.filter(status=Assignment.Status.ASSIGNED).values("worker").distinct().count(),
        "expired": had.filter(status=Assignment.Status.EXPIRED).values("worker").distinct().count(),
        "blocked": pool["blocked"],
        "stopped": pool["stopped"],
        "failed_out": pool["failed_out"],
        "test": batch.qualification_test,
    }


# Seconds the pages keep a batch's waiting places (whether places wait for nobody changes with the
# workers, slowly; the live poll asks every few seconds).
WAITING_SECONDS = 60


def waiting_summary(batch: Batch) -> dict:
    """{places, hits} of the batch's places no worker can take, {} when there are none: what every
    page but the batch page reads of `waiting_places`, from the pages cache (counted at most once
    every WAITING_SECONDS, or when the batch page counts it)."""
    summary = caches["pages"].get(_key(batch))
    if summary is None:
        summary = _summary(refresh_waiting(batch))
    return summary


def refresh_waiting(batch: Batch) -> dict | None:
    """`waiting_places`, counted now; its summary replaces the one the other pages read."""
    waiting = waiting_places(batch)
    caches["pages"].set(_key(batch), _summary(waiting), WAITING_SECONDS)
    return waiting


def _summary(waiting: dict | None) -> dict:
    return {"places": waiting["places"], "hits": waiting["hits"]} if waiting else {}


def _key(batch: Batch) -> str:
    return f"waiting-places:v1:{batch.pk}"
