"""A panel participant's way through a session: a place is taken only when a task starts.

Opening the study link writes nothing. The first *Start* makes the participant's Worker row and
session and takes one HIT; each following task is taken when the previous one is answered. A
session holds at most one HIT at a time, so idle or made-up participants hold at most one place
each, and `idle.release_idle` gives those back. At most PANEL_SESSIONS_PER_ADDRESS new sessions
or sessions resumed after an idle release (and as many screening attempts) per study come from one
address in PANEL_ADDRESS_WINDOW seconds;
refused ids leave no Worker row. Each task is taken with the one handout
(hits.services.handout.take_place): the same eligibility, priorities, turns between batches,
expiry and adaptive places as in-house work, never over-filling a HIT.
"""

import logging
import secrets

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from config import ratelimit
from hits import sheets
from hits.models import Assignment, Batch, QualificationAttempt, Worker
from hits.providers.panel.config import config, sessions_per_network
from hits.providers.panel.models import PanelSession
from hits.services.handout import Hold, take_place
from hits.services.qualification import is_qualified, submit_attempt

logger = logging.getLogger(__name__)

DONE = (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.REJECTED)
# One screening attempt per participant id, as on Prolific: a made-up id is no second try.
ATTEMPTS = 1


class SessionRefused(Exception):
    """No task for this participant now; the message is for them."""


def worker_of(participant_id: str) -> Worker | None:
    return Worker.objects.filter(provider=Worker.Provider.PANEL, external_id=participant_id).first()


def session_of(batch: Batch, participant_id: str) -> PanelSession | None:
    return (
        PanelSession.objects.filter(
            batch=batch, worker__provider=Worker.Provider.PANEL, worker__external_id=participant_id
        )
        .select_related("worker")
        .first()
    )


def progress(session: PanelSession) -> tuple[int, int]:
    """(tasks answered, tasks in the session)."""
    return session.assignments().filter(status__in=DONE).count(), session.size


def held(session: PanelSession, now=None) -> Assignment | None:
    now = now or timezone.now()
    return session.assignments().filter(status=Assignment.Status.ASSIGNED, deadline__gt=now).order_by("pk").first()


def needs_screening(batch: Batch, participant_id: str) -> bool:
    if batch.qualification_test_id is None:
        return False
    worker = worker_of(participant_id)
    return worker is None or not is_qualified(worker, batch)


def _open(batch: Batch, now) -> bool:
    return batch.status == Batch.Status.PUBLISHED and not (batch.expires_at and batch.expires_at <= now)


def _check_address(scope: str, batch: Batch, address: str) -> None:
    bound = sessions_per_network(batch)
    if not address or not bound:
        return
    if ratelimit.count(scope, f"{batch.pk}|{address}", settings.PANEL_ADDRESS_WINDOW) > bound:
        logger.warning("panel batch %s: %s refused for address %s (bound %s reached)", batch.pk, scope, address, bound)
        raise SessionRefused(
            f"Too many sessions of this study were started from your network ({bound} an hour). Please try "
            "again later; if you take part in a lab or class session, tell the researcher, who can raise "
            "this bound for the study."
        )


def _complete(session: PanelSession, now, size: int | None = None) -> None:
    fields = {"status": PanelSession.Status.COMPLETED, "completed_at": now}
    if size is not None:
        fields["size"] = size
    PanelSession.objects.filter(pk=session.pk).update(**fields)
    for name, value in fields.items():
        setattr(session, name, value)
    logger.info("panel session %s of batch %s completed", session.key, session.batch_id)


def finish_if_done(session: PanelSession, now=None) -> bool:
    if session.status == PanelSession.Status.COMPLETED:
        return True
    done, size = progress(session)
    if done >= size:
        _complete(session, now or timezone.now())
        return True
    return False


def _take(session: PanelSession, worker: Worker, batch: Batch, now) -> Assignment | None:
    """One place for the session with the one handout (inside the caller's transaction), or
    None when none is left. No panel API confirms work: the lead's review decides."""
    return take_place(worker, batch, hold=Hold(external_id=session.key, confirmed=True), now=now)


def start_task(*, batch: Batch, participant_id: str, address: str = "", now=None) -> Assignment | None:
    """The participant's current task: the one held, or a newly taken one. None when the
    session is complete (the completion code is due). Raises SessionRefused with a message."""
    now = now or timezone.now()
    session = session_of(batch, participant_id)
    if session is not None:
        return _continue(session, batch, now, address)
    if not _open(batch, now):
        raise SessionRefused("This study is closed. Thank you for your interest.")
    existing = worker_of(participant_id)
    if existing is not None and existing.blocked:
        raise SessionRefused("Your participant id cannot take these tasks.")
    if existing is None and batch.qualification_test_id is not None:
        raise SessionRefused("This study needs the screening test first.")
    if existing is not None and not is_qualified(existing, batch):
        raise SessionRefused("This study needs the screening test first.")
    _check_address("panel-session", batch, address)
    try:
        with transaction.atomic():
            worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.PANEL, external_id=participant_id)
            session = PanelSession.objects.create(
                batch=batch,
                worker=worker,
                key="P" + secrets.token_hex(10),
                size=int(config(batch)["tasks_per_session"]),
                address=(address or "")[:45],
            )
            assignment = _take(session, worker, batch, now)
            if assignment is None:
                raise _Empty
    except _Empty:
        raise SessionRefused("No task is left in this study. Thank you for your interest.") from None
    except IntegrityError:  # a second tab made this session a moment ago
        session = session_of(batch, participant_id)
        if session is None:
            raise
        return _continue(session, batch, now, address)
    logger.info("panel batch %s: session %s started for %s", batch.pk, session.key, participant_id)
    return assignment


class _Empty(Exception):
    """Rolls the new session (and a new Worker row) back when no HIT could be handed out."""


def _continue(session: PanelSession, batch: Batch, now, address: str = "") -> Assignment | None:
    with transaction.atomic():
        session = PanelSession.objects.select_for_update().select_related("worker").get(pk=session.pk)
        if session.status == PanelSession.Status.COMPLETED:
            return None
        current = held(session, now)
        if current is not None:
            if session.status != PanelSession.Status.ACTIVE:
                PanelSession.objects.filter(pk=session.pk).update(status=PanelSession.Status.ACTIVE)
            return current
        done, size = progress(session)
        if done >= size:
            _complete(session, now)
            return None
        if session.worker.blocked:
            raise SessionRefused("Your participant id cannot take more tasks.")
        if session.status == PanelSession.Status.IDLE:
            # Its place was given back: taking a new one counts as a new session for the address,
            # or idle sessions from one address would each take a place again and again.
            _check_address("panel-session", batch, address)
        assignment = _take(session, session.worker, batch, now) if _open(batch, now) else None
        if assignment is None:
            if done:  # nothing left for them: the session ends with what was done
                _complete(session, now, size=done)
                return None
            raise SessionRefused("No task is left in this study. Thank you for your interest.")
        PanelSession.objects.filter(pk=session.pk).update(status=PanelSession.Status.ACTIVE)
        session.status = PanelSession.Status.ACTIVE
        return assignment


def screen(
    *, batch: Batch, participant_id: str, answers: dict, address: str = "", sheet: int | None = None
) -> QualificationAttempt:
    """One screening attempt (pass, fail or not decided yet: one more sheet); the Worker row is made only once the address bound
    allows it. QualificationError (from the service) says when no attempt is left; AlreadyGraded
    when `sheet` (the number the form carried) was graded already (a double click)."""
    test = batch.qualification_test
    if test is None:
        raise SessionRefused("This study has no screening test.")
    worker = worker_of(participant_id)
    if worker is None:
        _check_address("panel-screening", batch, address)
        worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.PANEL, external_id=participant_id)
    attempt = submit_attempt(
        test=test, worker=worker, answers=answers, max_attempts=ATTEMPTS, network=sheets.network(address), sheet=sheet
    )
    logger.info(
        "panel batch %s: %s %s the screening",
        batch.pk,
        participant_id,
        "passed" if attempt.passed else "failed" if attempt.decided else "has not decided yet",
    )
    return attempt
