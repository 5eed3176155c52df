"""Mirroring Prolific's submissions (sync and signed hooks), and reviewing and paying sessions.

A session's judgments count only once Prolific reports its submission (SESSION_ID) for that
participant as completed (AWAITING REVIEW, APPROVED or REJECTED). The sync (Celery beat every
five minutes, and *Sync now*) pages through the study's submissions; a hook
(submission.status.change) applies the same change at once. RETURNED and TIMED-OUT submissions
release the session's HITs. Prolific's decisions are mirrored through the review services, so
the ledger records every payment once, whoever decided and however often it is retried. The
sync also lists the screening study's submissions: each one Prolific approved (automatically)
is recorded once in the ledger, its reward and Prolific's fee (`record_screening_pay`). Before
calling Prolific, it records every paid bonus whose ledger rows are missing
(`bonuses.record_paid_bonuses`; bonuses are paid and settled in hits/providers/prolific/bonuses.py).

Prolific facts: GET /api/v1/submissions/?study=ID&page_size=N, pages linked by _links.next.href
(https://docs.prolific.com/api-reference/submissions/get-submissions); statuses RESERVED, ACTIVE,
TIMED-OUT, AWAITING REVIEW, APPROVED, RETURNED, REJECTED, SCREENED OUT (/submission-object);
POST /api/v1/submissions/{id}/transition/ is idempotent, and REJECT needs a message of at least
100 characters and a rejection_category (/transition-submission; the category values are those
of Prolific's own CLI, prolific-oss/cli); POST /api/v1/submissions/bulk-approve/ {submission_ids}
(one of its two documented bodies, the recommended one; at most 1,000 ids a call:
/api-reference/submissions/bulk-approve-submissions); bonuses are set up with
POST /api/v1/submissions/bonus-payments/ {study_id, csv_bonuses "<submission_id>,<amount>\n"}
and paid with POST /api/v1/bulk-bonus-payments/{id}/pay/, which is "not idempotent"
(/api-reference/bonuses/create-bonus-payments, /pay-bonus-payments); hooks
(/api-reference/webhooks/subscribing, /receiving) post {resource_id, event_type, participant_id,
status} signed X-Prolific-Request-Signature = base64(HMAC-SHA256(secret,
X-Prolific-Request-Timestamp + body)) (/webhooks/verifying). Assumption: a hook whose timestamp
is more than PROLIFIC_WEBHOOK_TOLERANCE seconds away (or not a finite number) is refused; the
sync still sees the change. A hook is applied once: its event id (or, without one, its signed
timestamp and signature) is remembered in the cache for twice the tolerance, so a replay within
the window changes nothing. Bodies over PROLIFIC_HOOK_MAX_BYTES or nested deeper than
HOOK_MAX_DEPTH are refused.
"""

import base64
import contextlib
import hashlib
import hmac
import logging
import math
import time
from decimal import Decimal

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.utils import timezone

from config.json_body import parse_json_bytes
from hits import versions
from hits.allocation import service as allocation
from hits.allocation.policy import ADAPTIVE_KINDS
from hits.ledger import record_with_fee
from hits.models import Assignment, Batch, LedgerEntry, ProviderCall, Worker
from hits.money import MAX_FEEDBACK, cents
from hits.provider_interface import ProviderError
from hits.providers.prolific.bonuses import record_paid_bonuses
from hits.providers.prolific.decisions import check_rejection, mark_decision
from hits.providers.prolific.models import ProlificGroupMember, ProlificSession, ProlificStudy
from hits.providers.prolific.provider import ProlificProvider
from hits.providers.prolific.rewards import paid_rewards, rest_key, rest_of_session, session_fee
from hits.providers.prolific.sessions import release, release_abandoned
from hits.release import release as release_places
from hits.services import review

# Prolific's hook bodies are flat objects; anything deeper is refused before it is used.
HOOK_MAX_DEPTH = 8

logger = logging.getLogger(__name__)

COMPLETED = {"AWAITING REVIEW", "APPROVED", "REJECTED"}
NO_ANSWERS = "Prolific reports this submission {status}, but no answers were stored here."
# The ledger key of a paid screening submission: this prefix and Prolific's submission id.
SCREENING_KEY = "reward:prolific-screening:"
NO_SESSION = "Prolific reports submission {sid} {status} for {pid}, but no session was started here."


def normalize(status) -> str:
    return str(status or "").strip().upper().replace("_", " ")


def participant_of(record: dict) -> str:
    return str(record.get("participant_id") or record.get("participant") or "")


# ---- mirroring ------------------------------------------------------------------------


def apply_submission(batch: Batch, submission_id: str, participant_id: str, status: str) -> str:
    """Mirror one submission's status; returns confirmed, released, flagged, in progress or ignored."""
    status = normalize(status)
    with transaction.atomic():
        session = (
            ProlificSession.objects.select_for_update(of=("self",))
            .select_related("worker")
            .filter(batch=batch, session_id=submission_id)
            .first()
        )
        if session is None:
            if status not in COMPLETED or not participant_id:
                return "ignored"  # never reached our page; nothing of ours is at stake
            worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.PROLIFIC, external_id=participant_id)
            ProlificSession.objects.get_or_create(
                batch=batch,
                session_id=submission_id,
                defaults={
                    "worker": worker,
                    "study_id": "",
                    "size": 0,
                    "status": ProlificSession.Status.ABANDONED,
                    "deadline": timezone.now(),
                    "submission_status": status,
                    "flag": NO_SESSION.format(sid=submission_id, status=status, pid=participant_id),
                },
            )
            return "flagged"
        if participant_id and participant_id != session.worker.external_id:
            session.flag = (
                f"Prolific reports participant {participant_id} for this submission, not {session.worker.external_id}."
            )
            session.confirmed = False
            session.save(update_fields=["flag", "confirmed"])
            if session.assignments().filter(confirmed=True).update(confirmed=False):
                versions.bump(batch.dataset_id, batch.pk, rating=bool(batch.protocol))
            return "flagged"
        session.submission_status = status
        outcome = "in progress"
        if status in COMPLETED:
            answered = session.assignments().exclude(status__in=[Assignment.Status.ASSIGNED, Assignment.Status.EXPIRED])
            newly = sorted(set(answered.filter(confirmed=False).values_list("hit_id", flat=True)))
            if answered.filter(confirmed=False).update(confirmed=True):
                versions.bump(batch.dataset_id, batch.pk, rating=bool(batch.protocol))
            if batch.allocation in ADAPTIVE_KINDS:
                for hit_id in newly:  # confirmed answers may settle a HIT or open a place (HITs in id order)
                    allocation.decide(hit_id)
            if answered.exists():
                session.confirmed, session.flag, outcome = True, "", "confirmed"
            else:
                session.confirmed, session.flag, outcome = False, NO_ANSWERS.format(status=status), "flagged"
        elif status in ("RETURNED", "TIMED-OUT"):
            # A returned submission gives up its pay: its answered HITs go back to the pool too.
            release(session, include_submitted=status == "RETURNED")
            answered = session.assignments().filter(status=Assignment.Status.SUBMITTED).count()
            if answered:
                session.flag = (
                    f"Prolific timed this submission out after {answered} HIT(s) were answered here; "
                    "they do not count unless Prolific reports it completed."
                )
            outcome = "released"
        session.save(update_fields=["submission_status", "confirmed", "flag"])
    if status == "APPROVED":
        settle_approved(session)
    elif status == "REJECTED":
        settle_rejected(session, "Rejected on Prolific.")
    return outcome


def settle_approved(session: ProlificSession, by=None) -> list[str]:
    """Approve (and so pay, once) every answered HIT of an approved session, and the rest of
    the session reward when the session held fewer HITs than planned or left some unanswered.
    Prolific pays the whole study reward once, so the session's HITs still open are released
    first (their places reopen): the rest covers them, and none can be answered and approved
    afterwards and so be recorded a second time. A submission committed before the release is
    approved below; one after it finds its HIT expired."""
    mark_decision(session, "approved")
    release_places(session.assignments().filter(status=Assignment.Status.ASSIGNED), confirmed=False)
    submitted = session.assignments().filter(status=Assignment.Status.SUBMITTED).values_list("pk", flat=True)
    _, errors = review.bulk(review.approve, list(submitted), by=by)
    study = session.batch.prolific_studies.filter(kind="main").first()
    if study is not None and not errors:
        rest = rest_of_session(study, paid_rewards(session))
        if rest:
            with transaction.atomic():  # the session's row locked while its fee is reckoned and written
                record_with_fee(
                    key=rest_key(session.pk),
                    kind=LedgerEntry.Kind.REWARD,
                    assignment=None,
                    worker=session.worker,
                    batch=session.batch,
                    amount=rest,
                    fee=session_fee(ProlificProvider(), session, rest, rest_key(session.pk)),
                    by=by,
                    note=f"Rest of the session reward ({session.size} of {study.hits_per_session} HITs)",
                )
    return errors


def settle_rejected(session: ProlificSession, feedback: str, by=None) -> list[str]:
    mark_decision(session, "rejected")
    submitted = session.assignments().filter(status=Assignment.Status.SUBMITTED).values_list("pk", flat=True)
    _, errors = review.bulk(review.reject, list(submitted), feedback=feedback[:MAX_FEEDBACK], by=by)
    return errors


def _submissions(provider, batch, study_id: str) -> list[dict]:
    try:
        records = list(provider.client.list_submissions(study_id))
    except ProviderError as exc:
        ProviderCall.objects.create(batch=batch, action="list submissions", target=study_id, ok=False, error=str(exc))
        raise
    ProviderCall.objects.create(batch=batch, action="list submissions", target=f"{study_id}: {len(records)}", ok=True)
    return records


def sync_batch(batch: Batch) -> dict:
    """Mirror every submission of the batch's study; returns counts by outcome."""
    counts = {"submissions": 0, "confirmed": 0, "released": 0, "flagged": 0, "in progress": 0, "ignored": 0}
    main = batch.prolific_studies.filter(kind="main").exclude(study_id="").first()
    if main is None:
        return counts
    provider = ProlificProvider()
    bonuses = record_paid_bonuses(provider, batch)  # needs no call: before any could fail
    if bonuses:
        counts["bonuses recorded"] = bonuses
    try:
        status = provider.call(batch, "read study", main.study_id, "get_study", main.study_id).get("status")
        if status:
            ProlificStudy.objects.filter(pk=main.pk).update(status=status)
        for record in _submissions(provider, batch, main.study_id):
            counts["submissions"] += 1
            counts[apply_submission(batch, record["id"], participant_of(record), str(record.get("status") or ""))] += 1
        group_failures = len(push_group_members(batch)["failed"])
        if group_failures:
            counts["group failures"] = group_failures
        allocation.push_pending(batch)  # places opened while Prolific could not be told
        screening_paid = record_screening_pay(provider, batch)
        if screening_paid:
            counts["screening paid"] = screening_paid
    except ProviderError as exc:
        logger.error("Prolific sync of batch %s failed: %s", batch.pk, exc)
        Batch.objects.filter(pk=batch.pk).update(last_error=f"Sync: {exc}")
        raise
    release_abandoned()
    logger.info("Prolific sync of batch %s: %s", batch.pk, summary(counts))
    return counts


def record_screening_pay(provider, batch: Batch) -> int:
    """Record in the ledger, once each, the screening submissions Prolific paid: the screening
    study approves automatically, so each APPROVED submission cost its reward (the study's, as
    the cost estimate counts it) and Prolific's fee. The key is the submission id, so a repeated
    sync records nothing more; returned, rejected or unfinished submissions record nothing.
    Returns the number of submissions recorded now."""
    screening = batch.prolific_studies.filter(kind="screening").exclude(study_id="").first()
    if screening is None:
        return 0
    amount = cents(Decimal(screening.reward_cents) / 100)
    fee = provider.fee(amount, batch.assignments_per_hit)
    recorded = set(LedgerEntry.objects.filter(batch=batch, key__startswith=SCREENING_KEY).values_list("key", flat=True))
    new = 0
    for record in _submissions(provider, batch, screening.study_id):
        key = f"{SCREENING_KEY}{record['id']}"[:100]
        if normalize(record.get("status")) != "APPROVED" or key in recorded or amount <= 0:
            continue
        participant = participant_of(record)
        if not participant:
            logger.warning("Prolific screening submission %s has no participant: not recorded", record["id"])
            continue
        with transaction.atomic():  # the reward and its fee together: a key found has both
            worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.PROLIFIC, external_id=participant)
            _, created = record_with_fee(
                key=key,
                kind=LedgerEntry.Kind.REWARD,
                assignment=None,
                worker=worker,
                batch=batch,
                amount=amount,
                fee=fee,
                by=None,
                note=f"Screening test reward (Prolific submission {record['id']}, approved automatically)",
            )
        recorded.add(key)
        new += created
    return new


def summary(counts: dict) -> str:
    return (
        f"Synced {counts['submissions']} Prolific submissions: {counts['confirmed']} confirmed, "
        f"{counts['released']} released, {counts['flagged']} flagged"
        + (f", {counts['group failures']} not added to the participant group" if counts.get("group failures") else "")
        + (f", {counts['screening paid']} paid screening submissions recorded" if counts.get("screening paid") else "")
        + (f", {counts['bonuses recorded']} paid bonuses recorded" if counts.get("bonuses recorded") else "")
        + "."
    )


# ---- hooks ------------------------------------------------------------------------------


def verify_signature(
    body: bytes, timestamp: str, signature: str, secret: str, now: float | None = None, tolerance: int | None = None
) -> bool:
    if not (secret and timestamp and signature):
        return False
    try:
        sent = float(timestamp)
    except ValueError:
        return False
    if not math.isfinite(sent):  # "nan" and "inf" would pass any freshness comparison
        return False
    tolerance = settings.PROLIFIC_WEBHOOK_TOLERANCE if tolerance is None else tolerance
    if abs((now if now is not None else time.time()) - sent) > tolerance:
        return False
    expected = base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest())
    return hmac.compare_digest(expected, signature.strip().encode())


def handle_hook(body: bytes, timestamp: str, signature: str) -> tuple[int, str]:
    """Apply one signed hook; returns the HTTP status and a short outcome."""
    secret = settings.PROLIFIC_WEBHOOK_SECRET
    if not secret:
        return 503, "PROLIFIC_WEBHOOK_SECRET is not set"
    if len(body) > settings.PROLIFIC_HOOK_MAX_BYTES:
        return 413, "body too large"
    if not verify_signature(body, timestamp, signature, secret):
        return 403, "invalid signature"
    try:
        payload = parse_json_bytes(body, max_depth=HOOK_MAX_DEPTH)
        event, resource = payload["event_type"], str(payload["resource_id"])
    except (ValueError, KeyError, TypeError):  # JSONBodyError is a ValueError
        return 400, "not a Prolific hook"
    # A signed hook may be sent again by anyone who saw it, within its window: each event counts once.
    event_id = (
        str(payload.get("event_id") or payload.get("id") or "")
        or hashlib.sha256(timestamp.encode() + b"|" + signature.strip().encode()).hexdigest()
    )
    replay_key = "prolific-hook:" + hashlib.sha256(event_id.encode()).hexdigest()
    if not _remember(replay_key):
        logger.warning("Prolific hook %s was replayed: ignored", event_id[:64])
        return 200, "replayed"
    try:
        return _apply_hook(payload, event, resource)
    except Exception:
        with contextlib.suppress(Exception):
            cache.delete(replay_key)  # not applied: Prolific's retry must still count
        raise


def _remember(key: str) -> bool:
    """True the first time a hook's key is seen; with the cache down, the hook is applied
    (its changes mirror Prolific's status, so applying one twice changes nothing more)."""
    try:
        return cache.add(key, 1, 2 * settings.PROLIFIC_WEBHOOK_TOLERANCE + 60)
    except Exception:  # noqa: BLE001 - redis.ConnectionError and friends
        logger.warning("cache unavailable: hook replay protection skipped")
        return True


def _apply_hook(payload: dict, event: str, resource: str) -> tuple[int, str]:
    if event == "submission.status.change":
        session = ProlificSession.objects.select_related("batch").filter(session_id=resource).first()
        if session is None:
            return 200, "unknown submission"  # not one of ours, or not started here: the sync decides
        return 200, apply_submission(
            session.batch, resource, str(payload.get("participant_id") or ""), str(payload.get("status") or "")
        )
    if event == "study.status.change":
        ProlificStudy.objects.filter(study_id=resource).update(status=normalize(payload.get("status")))
        return 200, "study status"
    return 200, "ignored"


# ---- review and pay (sessions, in bulk) ---------------------------------------------------


def _waiting(session) -> str:
    if session.submission_status == "AWAITING REVIEW":
        return ""
    return (
        f"Session {session.session_id}: Prolific reports it {session.submission_status or 'not completed yet'}; "
        "only completed submissions can be reviewed (sync first)."
    )


# Prolific recommends at most this many submission ids in one bulk approval.
BULK_APPROVE_MAX = 1000


# A session step the database could not write (a lock wait aborted, the connection lost): each write is a
# transaction of its own, rolled back whole, and what Prolific did is recorded once later (keyed rows).
UNRECORDED_CALL = (
    "Prolific may have {done} session(s) {ids} already, but the database could not record it just now, so nothing "
    "of it was saved here. The next sync records Prolific's decision{then}, or {again} them again."
)
UNSETTLED = (
    "Session {sid}: {done} at Prolific, but the database could not record its HITs' {what} just now; what is "
    "missing is recorded once by the next sync, or by {again} it again."
)


def approve_sessions(batch: Batch, session_ids, by=None) -> tuple[int, list[str]]:
    """Approve sessions with one bulk call, then pay their HITs (and any rest) once each. A database
    failure after the call (its log row, the sessions' decision) is a message: nothing of the part is
    marked, and the sync, seeing Prolific's APPROVED, or approving again, settles it once."""
    sessions = list(batch.prolific_sessions.filter(pk__in=session_ids).select_related("worker", "batch").order_by("pk"))
    errors, ready = [], []
    for s in sessions:
        if s.decision == "rejected":
            errors.append(f"Session {s.session_id} was rejected; it cannot be approved.")
        elif not s.decision:
            problem = _waiting(s)
            errors.append(problem) if problem else ready.append(s)
    for start in range(0, len(ready), BULK_APPROVE_MAX):
        part = ready[start : start + BULK_APPROVE_MAX]
        try:
            ProlificProvider().call(
                batch, "bulk approve", f"{len(part)} submissions", "bulk_approve", [s.session_id for s in part]
            )
            _mark_part(part, "approved")
        except ProviderError as exc:  # the parts before it stand (approved and paid below)
            errors.append(str(exc))
            break
        except DatabaseError:
            logger.exception("database error recording the bulk approval of batch %s", batch.pk)
            errors.append(_unrecorded(part, "approved", "approve"))
            break  # no more calls whose outcome could not be recorded either
    approved = [s for s in sessions if s.decision == "approved"]
    for s in approved:
        errors += _settled(settle_approved, s, "approved", "rewards", "approving", by=by)
    return len(approved), errors


def _mark_part(part: list, decision: str) -> None:
    """The decision of every session of a part Prolific took, in one statement (all or none)."""
    ProlificSession.objects.filter(pk__in=[s.pk for s in part], decision="").update(
        decision=decision, decided_at=timezone.now()
    )
    for s in part:
        s.decision = decision


def _unrecorded(part: list, done: str, again: str) -> str:
    ids = ", ".join(s.session_id for s in part[:5]) + (f" and {len(part) - 5} more" if len(part) > 5 else "")
    then = " (and pays each HIT once)" if done == "approved" else ""
    return UNRECORDED_CALL.format(done=done, ids=ids, then=then, again=again)


def _settled(settle, session, done: str, what: str, again: str, **kwargs) -> list[str]:
    """`settle_approved` or `settle_rejected` of a decided session; a database failure is its message
    (each of its writes is a transaction of its own, keyed: a later settle writes only what is missing)."""
    try:
        return settle(session, **kwargs)
    except DatabaseError:
        logger.exception("database error settling Prolific session %s", session.pk)
        return [UNSETTLED.format(sid=session.session_id, done=done, what=what, again=again)]


def reject_sessions(batch: Batch, session_ids, *, category: str, message: str, by=None) -> tuple[int, list[str]]:
    message = (message or "").strip()
    try:
        check_rejection(category, message)
    except ProviderError as exc:
        return 0, [str(exc)]
    provider, done, errors = ProlificProvider(), 0, []
    for s in batch.prolific_sessions.filter(pk__in=session_ids).select_related("worker", "batch").order_by("pk"):
        if s.decision == "approved":
            errors.append(f"Session {s.session_id} was approved; it cannot be rejected.")
            continue
        if not s.decision:
            if problem := _waiting(s):
                errors.append(problem)
                continue
            try:
                provider.call(
                    batch,
                    "reject submission",
                    s.session_id,
                    "transition_submission",
                    s.session_id,
                    "REJECT",
                    message=message,
                    rejection_category=category,
                )
                _mark_part([s], "rejected")
            except ProviderError as exc:
                errors.append(f"Session {s.session_id}: {exc}")
                continue
            except DatabaseError:
                logger.exception("database error recording the rejection of Prolific session %s", s.pk)
                errors.append(_unrecorded([s], "rejected", "reject"))
                continue
        feedback = f"[{category}] {message}"
        errors += _settled(settle_rejected, s, "rejected", "rejections", "rejecting", feedback=feedback, by=by)
        done += 1
    return done, errors


def _permanent(exc: ProviderError) -> bool:
    """Prolific refused this member for good (a 4xx other than token and rate limits)."""
    status = getattr(exc, "status", None)
    return isinstance(status, int) and 400 <= status < 500 and status not in (401, 403, 408, 429)


def push_group_members(batch: Batch) -> dict:
    """Add screening passers to the participant group, each checked against their screening
    submission at Prolific first (its participant and study). A member Prolific refuses (e.g.
    404 for a made-up submission) gets the error, shown to the lead, and is not tried again;
    a passing fault (network, 5xx) leaves them pending for the next sync. Neither stops the
    others, and neither fails the batch's sync. Returns {"added": n, "failed": [messages]}."""
    result: dict = {"added": 0, "failed": []}
    screening = batch.prolific_studies.filter(kind="screening").exclude(participant_group_id="").first()
    if screening is None:
        return result
    provider, verified = ProlificProvider(), []
    pending = ProlificGroupMember.objects.filter(group_id=screening.participant_group_id, added_at=None, error="")
    for member in pending.select_related("worker").order_by("pk"):
        try:
            record = provider.call(
                batch, "read submission", member.submission_id, "get_submission", member.submission_id
            )
        except ProviderError as exc:
            _member_failed(member, f"Prolific could not confirm submission {member.submission_id}: {exc}", exc, result)
            continue
        if (
            participant_of(record) != member.worker.external_id
            or record.get("study_id", screening.study_id) != screening.study_id
        ):
            member.error = (
                f"Submission {member.submission_id} is not this participant's screening submission at Prolific."
            )
            member.save(update_fields=["error"])
            result["failed"].append(f"{member.worker.external_id}: {member.error}")
            continue
        verified.append(member)
    group = screening.participant_group_id
    try:
        if verified:
            _add(provider, batch, group, verified)
    except ProviderError:  # one of them refused: add them one at a time to find out which
        for member in verified:
            try:
                _add(provider, batch, group, [member])
            except ProviderError as exc:
                _member_failed(member, f"Prolific did not add them to group {group}: {exc}", exc, result)
    result["added"] = ProlificGroupMember.objects.filter(
        pk__in=[m.pk for m in verified], added_at__isnull=False
    ).count()
    return result


def _add(provider, batch: Batch, group: str, members: list) -> None:
    provider.call(
        batch, "add to participant group", group, "add_to_group", group, [m.worker.external_id for m in members]
    )
    ProlificGroupMember.objects.filter(pk__in=[m.pk for m in members]).update(added_at=timezone.now())


def _member_failed(member, message: str, exc: ProviderError, result: dict) -> None:
    logger.warning("Prolific group member %s (%s): %s", member.pk, member.worker.external_id, message)
    result["failed"].append(f"{member.worker.external_id}: {message}")
    if _permanent(exc):
        member.error = message
        member.save(update_fields=["error"])
