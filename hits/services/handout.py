"""The one handout: the next place for a worker, whatever the provider.

`take_place` holds one place: the in-house *Start next task* (`next_assignment`), each of a
Prolific session's places and each task of a panel session call it, so eligibility, the fair
order, priority, expiry and adaptive places are one set of rules. Constant time whatever the
size of the database: the HIT is picked from the partial index of HITs with an open place
(`HIT.open_places`, kept in the same transaction) with `SELECT ... FOR UPDATE SKIP LOCKED`, so
concurrent handouts take different HITs without waiting and no HIT gets more assignments than
asked. Published batches of one provider share the workers: a lead-set priority first, then in
turns (`FAIR_ORDER`). No worker gets a summary twice in a batch (`_eligible`: a `pairs` batch's
follow-up HITs go to new workers), the (hit, worker) unique constraint backing it per HIT, and
a partial unique constraint allows one open in-house assignment per worker, whatever clicks race.
Places go back through hits.release.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.expressions import Combinable
from django.utils import timezone

from hits import places
from hits.models import HIT, OPEN_SHARE, Assignment, Batch, QualificationAttempt, Worker, WorkerEstimate
from hits.ratings import PRIOR
from hits.release import release, release_overdue
from hits.selectors import insider_datasets, insider_why
from hits.services.qualification import is_qualified

logger = logging.getLogger(__name__)


class NoWork(Exception):
    """Nothing to hand out; the message says why."""


INSIDER = "No task is open to you right now. The open batches of {datasets} are not offered to you (My work says why)."


def insider_open_batches(worker: Worker) -> list[tuple[str, str]]:
    """The datasets with published batches of the worker's provider that are closed to them as an
    insider (`_not_insider`), each with why ("you lead it", ...), for the worker's page."""
    if worker.user_id is None:
        return []
    username = _username(worker)
    closed = insider_datasets(worker.user_id, username).filter(
        batches__status=Batch.Status.PUBLISHED, batches__provider=worker.provider
    )
    out = []
    for name, *holds in insider_why(worker.user_id, username, closed):
        reasons = ("you lead it", "you write or proofread its references", "you labelled its gold")
        out.append((name, " and ".join(reason for reason, held in zip(reasons, holds, strict=True) if held)))
    return out


def open_assignment(worker: Worker) -> Assignment | None:
    """The worker's unfinished, unexpired assignment, to resume instead of taking another."""
    return (
        Assignment.objects.filter(worker=worker, status=Assignment.Status.ASSIGNED, deadline__gt=timezone.now())
        .select_related("hit__batch")
        .order_by("created_at")
        .first()
    )


def _open_to(worker: Worker, batch: Batch | None, now) -> Q | Combinable:
    """HITs of published, unexpired batches of the worker's provider whose qualification they
    hold: conditions on the HIT's batch, which the pick joins anyway (no subquery to build)."""
    passed = QualificationAttempt.objects.filter(
        test_id=OuterRef("batch__qualification_test_id"), worker_id=worker.pk, passed=True
    )
    open_to = (
        Q(batch__status=Batch.Status.PUBLISHED, batch__provider=worker.provider, batch__expires_at__gt=now)
        & (Q(batch__qualification_test__isnull=True) | Exists(passed))
        & _not_stopped(worker)
        & _not_reserved_for_others(worker)
        & _not_insider(worker)
    )
    return open_to & Q(batch_id=batch.pk) if batch is not None else open_to


def _not_stopped(worker: Worker) -> Q:
    """Leaves out batches that stopped the worker at chance (hits.allocation.service.stop_at_chance).
    A stop is no exclusion (it leaves the worker's judgments out of that batch only), so every
    worker, excluded or not, is asked."""
    stopped = WorkerEstimate.objects.filter(
        batch_id=OuterRef("batch_id"), worker_id=worker.pk, stopped_at__isnull=False
    )
    return Q(~Exists(stopped))


def _not_insider(worker: Worker) -> Q:
    """Leaves out the batches of datasets the worker's account leads, writes or labelled gold of
    (hits.selectors.insider_datasets): they know its references or answers, so they are no crowd
    for it. A worker with no account (a Prolific or panel participant) costs no condition."""
    if worker.user_id is None:
        return Q()
    return ~Q(batch__dataset_id__in=insider_datasets(worker.user_id, _username(worker)).values("pk"))


def _username(worker: Worker) -> str:
    """The account's username: an in-house worker's id is it (hits.services.people.inhouse_worker)."""
    if worker.provider == Worker.Provider.INHOUSE or worker.user is None:
        return worker.external_id
    return worker.user.username


def _not_reserved_for_others(worker: Worker) -> Q:
    """Leaves out batches reserved for other workers (`Batch.reserved_for`, e.g. the demo's open
    batch, for demo-worker only): a batch with no reservation is open to every worker."""
    reserved = Batch.reserved_for.through.objects.filter(batch_id=OuterRef("batch_id"))
    return Q(~Exists(reserved)) | Q(Exists(reserved.filter(worker_id=worker.pk)))


def held_in_stopped_batch(worker: Worker) -> Assignment | None:
    """The worker's open in-house assignment in a batch no longer handing out work (stopped): it
    may still be submitted until its deadline, or given up for other work (`next_assignment`)."""
    current = open_assignment(worker)
    if current is None or current.external_id or current.hit.batch.status == Batch.Status.PUBLISHED:
        return None
    return current


def give_back(*, assignment_id: int, worker_id: int) -> bool:
    """The worker gives their open in-house task back (the task page's *Give this task back*): it is
    released before its deadline (read as *Taken back*, unpaid) and its place reopens for another
    worker; they are never handed that HIT again. False when it was not open (submitted, expired).
    Its `released_at` keeps it *Taken back* once its old deadline has passed (`submission.taken_back`)."""
    return bool(
        release(
            Assignment.objects.filter(
                pk=assignment_id, worker_id=worker_id, status=Assignment.Status.ASSIGNED, external_id=""
            ),
            released_at=timezone.now(),
        )
    )


# The fair order (the partial index `hit_fair_pick`): higher batch priority first (on the HIT,
# hits.services.batches.hit_priority: a `pairs` batch's gold HITs first within it); then the HIT with the largest share of its
# places open, then the lowest turn (its place in its batch's order, as a share of the batch),
# so batches of equal priority take turns in proportion to their size instead of the oldest
# batch going first.
FAIR_ORDER = ("-priority", "-open_share", "turn", "pk")


def _eligible(worker: Worker, batch: Batch | None, now):
    """HITs with a place open to the worker: published, unexpired batches of their provider
    whose qualification they hold and that have not stopped them, of summaries they never had in
    that batch (a `pairs` batch's follow-up HITs go to new workers; elsewhere a batch has one HIT
    per summary, so this is "HITs they never had")."""
    had = Assignment.objects.filter(
        worker_id=worker.pk, hit__batch_id=OuterRef("batch_id"), hit__summary_id=OuterRef("summary_id")
    )
    return HIT.objects.filter(_open_to(worker, batch, now), open_places__gt=0).filter(
        ~Exists(had), _unseen_for_prior(worker)
    )


def _unseen_for_prior(worker: Worker) -> Q | Combinable:
    """A Prior rating HIT (the summaries alone: what a rater likes before seeing the input) only
    for a worker who never held a place showing its document's article, reference or ACUs (a
    place of any other batch on that document: Ref-free, Ref-based, ACU matching), whether
    submitted or not: the Prior batch's priority puts it first, this keeps a place reopened later
    (returned, expired, an extra place) from a rater who has seen the example (docs/protocols.md)."""
    seen = Assignment.objects.filter(
        worker_id=worker.pk, hit__summary__document_id=OuterRef("summary__document_id")
    ).exclude(hit__batch__protocol=PRIOR)
    return ~Q(batch__protocol=PRIOR) | ~Exists(seen)


def _pick(worker: Worker, batch: Batch | None, now, *, skip_locked: bool = True) -> HIT | None:
    """The next eligible HIT in the fair order, locked, with its batch's time allowed (`duration`, seconds)."""
    return (
        _eligible(worker, batch, now)
        .select_for_update(skip_locked=skip_locked, of=("self",))
        .annotate(
            duration=F("batch__assignment_duration_seconds"),
            open_share=OPEN_SHARE,
        )
        .order_by(*FAIR_ORDER)
        .first()
    )


def _resumable(worker: Worker, now) -> Assignment | None:
    """The worker's open in-house assignment to resume; one past its deadline is released
    here (the beat task may not have run yet) so its place reopens, and so is one held in a
    batch that stopped handing out work: the worker asked for other work, so its place is given up.
    Read only when the worker holds an assignment or no new place is open (off the common path)."""
    current = (
        Assignment.objects.filter(worker_id=worker.pk, status=Assignment.Status.ASSIGNED, external_id="")
        .select_related("hit__batch")
        .order_by("created_at")
        .first()
    )
    if current is not None and (
        (current.deadline and current.deadline <= now) or current.hit.batch.status != Batch.Status.PUBLISHED
    ):
        # Given up before its deadline (its batch stopped), it reads "Taken back"; after it, "Expired".
        release(Assignment.objects.filter(pk=current.pk, status=Assignment.Status.ASSIGNED), released_at=now)
        return _resumable(worker, now)
    return current


class Busy(Exception):
    """Every open place the worker could take is held by another handout this instant (raised
    instead of waiting when the caller's transaction holds places already: the caller retries
    its whole transaction, outside it)."""


@dataclass(frozen=True)
class Hold:
    """How the place is held: under the provider's id for the work (`external_id`; empty for
    in-house work, one open assignment per worker), until `deadline` (None: the batch's time
    allowed from now), confirmed or waiting for the provider's confirmation."""

    external_id: str = ""
    deadline: datetime | None = None
    confirmed: bool = True


IN_HOUSE = Hold()


def take_place(
    worker: Worker, batch: Batch | None = None, *, hold: Hold = IN_HOUSE, wait: bool = True, now=None
) -> Assignment | None:
    """The one handout, for every provider: the next place open to the worker in the fair order
    (eligibility, priority, turns between batches, stopped workers, adaptive places: `_pick`),
    held for them; None when none is open. When none is open, places held past their deadline
    in these batches are released (hits.release) and the pick runs once more.

    The in-house handout takes one place per worker; a Prolific session takes its K places and a
    panel session one at a time, each with this function, inside their own transaction.
    `wait=False` (the caller's transaction holds places already, so waiting could deadlock):
    raises Busy instead of waiting for a place another handout holds this instant. Raises
    IntegrityError (a savepoint rolled back) when the worker holds an open in-house assignment
    already."""
    now = now or timezone.now()
    for _ in range(2):
        assignment = _take(worker, batch, now, hold, wait)
        if assignment is not None:
            return assignment
        batch_id = batch.pk if batch is not None else None
        if not release_overdue(now=now, provider=worker.provider, batch_id=batch_id, limit=RELEASE_LIMIT):
            break
    return None


def _take(worker: Worker, batch: Batch | None, now, hold: Hold, wait: bool) -> Assignment | None:
    """Pick a HIT and hold one of its places: the pick, the insert and the place count in one
    transaction (a savepoint of the caller's)."""
    with transaction.atomic():
        # HITs other handouts hold this instant are skipped; only when every open HIT is
        # held (the last places of a batch) wait for them, then the place count is re-read.
        hit = _pick(worker, batch, now)
        if hit is None and wait:
            hit = _pick(worker, batch, now, skip_locked=False)
        if hit is None:
            if not wait and _eligible(worker, batch, now).exists():
                raise Busy
            return None
        allowed = timedelta(seconds=hit.duration)  # type: ignore[attr-defined]  # annotated by _pick
        assignment = Assignment.objects.create(
            hit=hit,
            worker=worker,
            deadline=hold.deadline or now + allowed,
            external_id=hold.external_id,
            confirmed=hold.confirmed,
        )
        places.take_one(hit.pk)
        return assignment


def next_assignment(worker: Worker, batch: Batch | None = None) -> Assignment:
    """The in-house handout: resume the worker's open assignment or give them a new one
    (`take_place`); raises NoWork.

    The database says whether the worker holds an open assignment already (at most one open
    in-house assignment per worker, a partial unique constraint), so parallel clicks of one
    worker end with one assignment, the others resuming it."""
    if worker.blocked:
        raise NoWork("Your account is blocked from new tasks.")
    for _ in range(3):
        now = timezone.now()
        try:
            assignment = take_place(worker, batch, now=now) or _resumable(worker, now)
        except IntegrityError:  # an open assignment (maybe a parallel click's): resume it
            assignment = _resumable(worker, now)
            if assignment is None:
                continue  # it was overdue and has just been released: try again
        if assignment is not None:
            return assignment
        break
    unqualified = Batch.objects.filter(
        status=Batch.Status.PUBLISHED, provider=worker.provider, qualification_test__isnull=False
    )
    if any(not is_qualified(worker, b) for b in unqualified):
        raise NoWork("No task is open to you right now. Pass the qualification test to get more.")
    own = insider_open_batches(worker)
    if own:
        raise NoWork(INSIDER.format(datasets=", ".join(name for name, _ in own)))
    raise NoWork("No task is waiting right now. Come back later.")


# At most this many HITs' overdue assignments are released by one handout (a bounded write;
# the next handout releases more).
RELEASE_LIMIT = 50
