"""Prolific work sessions: how many HITs a session holds, and handing them out.

A Prolific participant takes a study once, so a study place is a session of K HITs
(K set per batch so a session lasts about the study's estimated completion time). A
participant arriving with PROLIFIC_PID, STUDY_ID and SESSION_ID gets K HITs at once, each an
assignment carrying SESSION_ID (Prolific's submission id) as its external id, all due at the
session deadline. Abandoned sessions release their HITs (their assignments expire and the
places reopen); the (hit, worker) constraint means a participant never gets the same HIT
twice, across sessions too.

Each place is taken with the one handout (hits.services.handout.take_place): the same
eligibility, priorities, turns between batches, expiry and adaptive places as in-house work,
never over-filling a HIT. Only the first place may wait for a HIT another handout holds; when
the others are all held this instant the session's transaction rolls back and is run again
after a short pause, outside it (config.db_retry.retried). Places go back through hits.release.
"""

import re
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.db import IntegrityError, transaction
from django.utils import timezone

from config import ratelimit
from config.db_retry import retried
from hits.models import Assignment, Batch, Worker
from hits.providers.prolific.client import is_prolific_id
from hits.providers.prolific.models import ProlificSession, ProlificStudy
from hits.providers.prolific.plans import allowed_minutes
from hits.release import release as release_places
from hits.services.handout import Busy, Hold, take_place
from hits.services.qualification import is_qualified

TOKEN_SALT = "hits.prolific.session"
# Prolific's participant ids are 24 hexadecimal characters; longer text is not an id Prolific gave.
PID_MAX_LENGTH = 64
_PID = re.compile(r"[A-Za-z0-9_-]+")


BLOCKED = "Your participant id cannot take these tasks. Please return the study on Prolific."


class SessionRefused(Exception):
    """No session for this participant; the message is for them."""


class BadParameters(SessionRefused):
    """The ids in the link are not ids Prolific gives (a 400, nothing written)."""


def check_ids(participant_id: str, study_id: str, session_id: str) -> tuple[str, str, str]:
    """The three ids Prolific adds to the link, stripped and checked before anything is
    read or written: PROLIFIC_PID at most 64 letters, digits, "-" or "_" (Prolific's are 24 hex
    characters), STUDY_ID likewise, SESSION_ID exactly Prolific's id format (24 hex characters:
    it names the submission in API paths)."""
    participant_id, study_id, session_id = (str(v or "").strip() for v in (participant_id, study_id, session_id))
    if not (participant_id and study_id and session_id):
        raise BadParameters(
            "Prolific did not pass your participant, study and session ids. Open the study from Prolific."
        )
    for name, value in (("PROLIFIC_PID", participant_id), ("STUDY_ID", study_id)):
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise BadParameters(f"The {name} in this link contains control characters. Open the study from Prolific.")
        if len(value) > PID_MAX_LENGTH or not _PID.fullmatch(value):
            raise BadParameters(
                f"The {name} in this link is not a Prolific id (letters, digits, - or _, at most "
                f"{PID_MAX_LENGTH} characters). Open the study from Prolific."
            )
    if not is_prolific_id(session_id):
        raise BadParameters(
            "The SESSION_ID in this link is not a Prolific submission id (24 hexadecimal characters). "
            "Open the study from Prolific."
        )
    return participant_id, study_id, session_id


# ---- tokens -----------------------------------------------------------------------------


def session_token(session: ProlificSession) -> str:
    return signing.dumps({"s": session.pk, "w": session.worker_id}, salt=TOKEN_SALT, compress=True)


def read_session_token(token: str) -> ProlificSession:
    try:
        data = signing.loads(token, salt=TOKEN_SALT)
        return ProlificSession.objects.select_related("batch", "worker").get(
            pk=int(data["s"]), worker_id=int(data["w"])
        )
    except (signing.BadSignature, KeyError, TypeError, ValueError, ProlificSession.DoesNotExist):
        raise SessionRefused("This session link is not valid. Open the study again from Prolific.") from None


# ---- handing out ------------------------------------------------------------------------


def start_session(
    *, batch: Batch, participant_id: str, study_id: str, session_id: str, now=None, address: str = ""
) -> ProlificSession:
    """The participant's session for this SESSION_ID: resumed, or created with K HITs (at most
    PROLIFIC_SESSIONS_PER_ADDRESS new sessions per study from one address)."""
    now = now or timezone.now()
    participant_id, study_id, session_id = check_ids(participant_id, study_id, session_id)
    main = batch.prolific_studies.filter(kind=ProlificStudy.Kind.MAIN).exclude(study_id="").first()
    if batch.provider != "prolific" or main is None:
        raise SessionRefused("This study is not open here.")
    if study_id != main.study_id:
        raise SessionRefused("This link belongs to another Prolific study. Open the study again from Prolific.")
    # The Worker row is written only once the participant is accepted (not for every made-up id).
    known = Worker.objects.filter(provider=Worker.Provider.PROLIFIC, external_id=participant_id).first()
    existing = ProlificSession.objects.filter(batch=batch, session_id=session_id).select_related("worker").first()
    if existing is not None:
        return _resume(existing, known)
    if known is not None and known.blocked:
        raise SessionRefused(BLOCKED)
    if batch.status != Batch.Status.PUBLISHED or (batch.expires_at and batch.expires_at <= now):
        raise SessionRefused("This study is closed. Please return it on Prolific; you will not be penalised.")
    if batch.qualification_test_id and (known is None or not is_qualified(known, batch)):
        raise SessionRefused("This study needs the qualification test first. Please return it on Prolific.")
    window = settings.PROLIFIC_ADDRESS_WINDOW
    if (
        address
        and ratelimit.count("prolific-start", f"{batch.pk}|{address}", window) > settings.PROLIFIC_SESSIONS_PER_ADDRESS
    ):
        raise SessionRefused(
            "Too many sessions of this study were started from your network. "
            "Please return the study on Prolific, or try again later."
        )
    deadline = now + timedelta(minutes=allowed_minutes(batch, main.estimated_minutes))

    def open_session(*, partial: bool) -> ProlificSession:
        with transaction.atomic():  # a session that gets no HIT leaves no Worker row either
            worker = known or accepted_worker(participant_id)
            session = ProlificSession.objects.create(
                batch=batch, worker=worker, session_id=session_id, study_id=study_id, size=0, deadline=deadline
            )
            session.size = _fill(session, worker, batch, main.hits_per_session, now=now, partial=partial)
            if session.size == 0:
                raise _Empty
            ProlificSession.objects.filter(pk=session.pk).update(size=session.size)
        return session

    try:
        try:
            session = retried(lambda: open_session(partial=False), on=(Busy,))
        except Busy:  # the last places stayed held by other sessions: start with the places there are
            session = open_session(partial=True)
    except _Empty:
        raise SessionRefused(
            "No task is left for you in this study (you did every one still open). Please return it on Prolific; "
            "you will not be penalised."
        ) from None
    except IntegrityError:  # a second tab created this session a moment ago
        session = ProlificSession.objects.select_related("worker").get(batch=batch, session_id=session_id)
        return _resume(
            session, Worker.objects.filter(provider=Worker.Provider.PROLIFIC, external_id=participant_id).first()
        )
    return session


class _Empty(Exception):
    """Rolls the new session back when no HIT could be handed out."""


def accepted_worker(participant_id: str) -> Worker:
    """The participant's Worker row, written now that their id was checked and accepted."""
    try:
        with transaction.atomic():
            return Worker.objects.get_or_create(provider=Worker.Provider.PROLIFIC, external_id=participant_id)[0]
    except IntegrityError:  # a parallel first request made it
        return Worker.objects.get(provider=Worker.Provider.PROLIFIC, external_id=participant_id)


def _resume(session: ProlificSession, worker: Worker | None) -> ProlificSession:
    if worker is None or session.worker_id != worker.pk:
        raise SessionRefused("This Prolific session belongs to another participant.")
    if session.status == ProlificSession.Status.ABANDONED:
        if worker.blocked:  # its tasks went back when they were blocked, before its time ran out
            raise SessionRefused(BLOCKED)
        raise SessionRefused(
            "The time for this session ran out and its tasks went to others. Please return the study on Prolific."
        )
    return session


def _fill(session: ProlificSession, worker: Worker, batch: Batch, want: int, *, now, partial: bool) -> int:
    """Take up to `want` places for the session with the one handout (inside the caller's
    transaction). Only the first place waits for a HIT another handout holds (a transaction
    that holds places never waits, so sessions cannot deadlock); a later place raises Busy
    when every one left is held this instant, unless `partial` (then the session has fewer)."""
    hold = Hold(external_id=session.session_id, deadline=session.deadline, confirmed=False)
    taken = 0
    while taken < want:
        try:
            if take_place(worker, batch, hold=hold, wait=taken == 0, now=now) is None:
                break
        except Busy:
            if not partial:
                raise
            break
        taken += 1
    return taken


def next_assignment(session: ProlificSession) -> Assignment | None:
    """The session's first unanswered assignment, in the order they were handed out."""
    return session.assignments().filter(status=Assignment.Status.ASSIGNED).order_by("pk").first()


def progress(session: ProlificSession) -> tuple[int, int]:
    assignments = session.assignments()
    done = assignments.exclude(status__in=[Assignment.Status.ASSIGNED, Assignment.Status.EXPIRED]).count()
    return done, assignments.count()


def finish_if_done(session: ProlificSession, now=None) -> bool:
    """Mark the session completed once nothing is left to answer and something was answered."""
    if session.status == ProlificSession.Status.COMPLETED:
        return True
    done, total = progress(session)
    if total == 0 or done < total:  # an expired (abandoned) HIT means the session was not finished
        return False
    now = now or timezone.now()
    ProlificSession.objects.filter(pk=session.pk, status=ProlificSession.Status.ACTIVE).update(
        status=ProlificSession.Status.COMPLETED, completed_at=now
    )
    session.status, session.completed_at = ProlificSession.Status.COMPLETED, now
    return True


def release(session: ProlificSession, *, include_submitted: bool = False) -> int:
    """Give the session's unanswered HITs back (and, for a returned submission, the answered ones)."""
    statuses = [Assignment.Status.ASSIGNED] + ([Assignment.Status.SUBMITTED] if include_submitted else [])
    freed = release_places(session.assignments().filter(status__in=statuses), confirmed=False)
    ProlificSession.objects.filter(pk=session.pk).exclude(status=ProlificSession.Status.COMPLETED).update(
        status=ProlificSession.Status.ABANDONED
    )
    return freed


def release_abandoned(now=None) -> int:
    """Sessions past their deadline with HITs unanswered: those HITs go back to the pool."""
    now = now or timezone.now()
    released = 0
    for session in ProlificSession.objects.filter(status=ProlificSession.Status.ACTIVE, deadline__lte=now):
        if not finish_if_done(session, now):
            released += release(session)
    return released


def release_idle(now=None) -> int:
    """Sessions without an answer for PROLIFIC_IDLE_SECONDS (since they started or their last
    answer) give their unanswered HITs back, so idle or made-up sessions do not hold places."""
    from django.db.models import Max

    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.PROLIFIC_IDLE_SECONDS)
    released = 0
    active = ProlificSession.objects.filter(status=ProlificSession.Status.ACTIVE, created_at__lt=cutoff)
    for session in active.iterator():
        last = session.assignments().aggregate(last=Max("submitted_at"))["last"]
        if (last or session.created_at) < cutoff and not finish_if_done(session, now):
            released += release(session)
    return released
