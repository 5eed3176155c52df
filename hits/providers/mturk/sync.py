"""Mirroring MTurk's view of our assignments.

A submission counts only when MTurk confirms that assignment for that worker: answers posted
from the task page are held (`MTurkHeldSubmission`, no Worker or Assignment row, no place)
until a sync finds the same AssignmentId with the same WorkerId in ListAssignmentsForHIT; then
they become that worker's Assignment with its judgments, and the worker's other held answers for
the HIT (made-up assignment ids) are dropped. Held qualification answers are graded, and the
qualification granted, the same way. Held rows MTurk never reports are dropped once MTurk could
no longer report them (the HIT's lifetime, the assignment duration and auto-approval past).
MTurk assignments with no stored answers are flagged for the lead (the worker submitted at
MTurk but our server never received the answers). Decisions taken at MTurk (an approval by
the requester elsewhere, auto-approval, a rejection) go through `hits.services.mirror`, so
their reward and fee reach the ledger exactly once.
"""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from hits import places, versions
from hits.allocation import service as allocation
from hits.allocation.policy import ADAPTIVE_KINDS
from hits.models import Assignment, Batch, Worker
from hits.provider_interface import ProviderError
from hits.providers.mturk.bonuses import record_paid_bonuses
from hits.providers.mturk.config import config
from hits.providers.mturk.models import MTurkHeldSubmission
from hits.providers.mturk.provider import MTurkProvider
from hits.services import mirror, qualification, review
from hits.services.submission import SubmissionRefused, has_answers, submit_assignment

logger = logging.getLogger(__name__)

STATUS = {
    "Submitted": Assignment.Status.SUBMITTED,
    "Approved": Assignment.Status.APPROVED,
    "Rejected": Assignment.Status.REJECTED,
}
DECISIONS = {"Approved": "approved", "Rejected": "rejected"}
NO_ANSWERS = "MTurk reports this assignment {status}, but no answers were stored here."


def _accepted(hit, record: dict, submitted):
    """When the worker accepted the assignment at MTurk: the active time held from the page is
    stored at most from then to its submission. Our Assignment row is written by the sync, after
    the work, so its creation says nothing of it. MTurk reports AcceptTime for every submitted
    assignment; without one, the earliest accept MTurk allows (it refuses a submission later than
    the assignment duration after the accept), so the time allowed is the only bound."""
    return record.get("AcceptTime") or submitted - timedelta(seconds=hit.batch.assignment_duration_seconds)


def _from_held(hit, worker, ours, held, record: dict) -> tuple[str, int | None]:
    """MTurk reported the assignment held answers were posted for: they become the worker's
    Assignment (confirmed) with its judgments, inside the caller's transaction."""
    if ours is None:
        ours = Assignment.objects.create(
            hit=hit, worker=worker, external_id=record["AssignmentId"], status=Assignment.Status.ASSIGNED
        )
    else:
        ours.external_id, ours.status, ours.deadline = record["AssignmentId"], Assignment.Status.ASSIGNED, None
        ours.confirmed, ours.flag = True, ""
        ours.save(update_fields=["external_id", "status", "deadline", "confirmed", "flag"])
    submitted = record.get("SubmitTime") or timezone.now()
    try:
        with transaction.atomic():
            submit_assignment(
                assignment_id=ours.pk,
                worker_id=worker.pk,
                answers=held.answers,
                comment=held.comment,
                active_seconds=held.active_seconds,
                now=submitted,
                handed_out_at=_accepted(hit, record, submitted),
            )
    except SubmissionRefused as exc:
        ours.status, ours.confirmed = STATUS[record["AssignmentStatus"]], False
        ours.flag = f"MTurk reports this assignment; the answers held for it were refused: {exc}"
        ours.save(update_fields=["status", "confirmed", "flag"])
        return "flagged", None
    MTurkHeldSubmission.objects.filter(
        hit=hit, worker_id=worker.external_id, kind=MTurkHeldSubmission.Kind.TASK
    ).delete()
    return "confirmed", ours.pk


def _confirm(hit, record: dict) -> tuple[str, int | None]:
    """Match MTurk's record to our assignment; returns the outcome and our assignment's id
    when its answers are confirmed."""
    status = STATUS[record["AssignmentStatus"]]
    # MTurk reports this worker: their Worker row is written now, not when a page was opened.
    worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.MTURK, external_id=record["WorkerId"])
    with transaction.atomic():
        ours = Assignment.objects.select_for_update().filter(hit=hit, external_id=record["AssignmentId"]).first()
        if ours is None:
            ours = Assignment.objects.select_for_update().filter(hit=hit, worker=worker).first()
        if ours is None or (ours.worker_id == worker.pk and not has_answers(ours)):
            held = (
                MTurkHeldSubmission.objects.select_for_update()
                .filter(
                    hit=hit,
                    assignment_id=record["AssignmentId"],
                    worker_id=record["WorkerId"],
                    kind=MTurkHeldSubmission.Kind.TASK,
                )
                .first()
            )
            if held is not None:
                return _from_held(hit, worker, ours, held, record)
        if ours is None:
            Assignment.objects.create(
                hit=hit,
                worker=worker,
                external_id=record["AssignmentId"],
                status=status,
                confirmed=False,
                submitted_at=record.get("SubmitTime"),
                flag=NO_ANSWERS.format(status=status),
            )
            return "flagged", None
        if ours.worker_id != worker.pk:
            ours.flag = f"MTurk reports worker {record['WorkerId']} for this assignment, not {ours.worker.external_id}."
            ours.confirmed = False
            ours.save(update_fields=["flag", "confirmed"])
            return "flagged", None
        if not has_answers(ours):
            ours.external_id, ours.status, ours.confirmed = record["AssignmentId"], status, False
            ours.flag = NO_ANSWERS.format(status=status)
            ours.save(update_fields=["external_id", "status", "confirmed", "flag"])
            return "flagged", None
        ours.confirmed, ours.flag, ours.external_id = True, "", record["AssignmentId"]
        if ours.status == Assignment.Status.ASSIGNED:
            ours.status = Assignment.Status.SUBMITTED  # answers stored: MTurk has it submitted at least
        ours.save(update_fields=["confirmed", "flag", "external_id", "status"])
        return "confirmed", ours.pk


def _mirror(hit, record: dict) -> str:
    with transaction.atomic():  # the confirmation, the HIT's places and the round's version together
        outcome, assignment_id = _confirm(hit, record)
        places.refresh(hit_ids=[hit.pk])
        versions.bump(hit.batch.dataset_id, hit.batch_id, rating=bool(hit.batch.protocol))
        if outcome == "confirmed" and hit.batch.allocation in ADAPTIVE_KINDS:
            allocation.decide(hit.pk)  # confirmed answers may settle the HIT or open a place
    decision = DECISIONS.get(record["AssignmentStatus"])
    if assignment_id is not None and decision:
        mirror.provider_decided(assignment_id, decision, feedback=record.get("RequesterFeedback") or "", source="MTurk")
    elif outcome == "flagged" and decision == "approved":
        _paid_without_answers(hit, record)
    _grade_held_test(hit, record)
    return outcome


def _paid_without_answers(hit, record: dict) -> None:
    """MTurk approved (so paid, with its fee) an assignment of the reported worker whose answers
    never reached us, kept flagged and approved here: the ledger records the payment once."""
    paid = Assignment.objects.filter(
        hit=hit,
        external_id=record["AssignmentId"],
        worker__provider=Worker.Provider.MTURK,
        worker__external_id=record["WorkerId"],
        status=Assignment.Status.APPROVED,
    ).values_list("pk", flat=True)
    for assignment_id in paid:
        review.paid_at_provider(assignment_id=assignment_id)


def _grade_held_test(hit, record: dict) -> None:
    """Qualification answers held for this assignment: graded now MTurk reported it, and the
    qualification granted on a pass. The grant call is listed on the batch page; a refused one
    keeps the held row, so the next sync (which lists the assignment again) grants it, until
    `drop_stale_held` ends the wait; the attempt is graded once (its external id)."""
    held = MTurkHeldSubmission.objects.filter(
        hit=hit,
        assignment_id=record["AssignmentId"],
        worker_id=record["WorkerId"],
        kind=MTurkHeldSubmission.Kind.QUALIFICATION,
    ).select_related("test")
    for row in held:
        if row.test is None:  # a qualification row always names its test
            row.delete()
            continue
        worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.MTURK, external_id=row.worker_id)
        external_id = MTurkHeldSubmission.attempt_id(row.assignment_id)
        try:
            attempt = row.test.attempts.filter(worker=worker, external_id=external_id).first()
            if attempt is None:
                attempt = qualification.submit_attempt(
                    test=row.test, worker=worker, answers=row.answers, external_id=external_id
                )
                logger.info(
                    "MTurk worker %s: qualification test %s graded %.2f", worker.external_id, row.test_id, attempt.score
                )
            if attempt.passed:
                MTurkProvider().grant_qualification(
                    row.test, worker, attempt.score, sandbox=config(hit.batch)["sandbox"], batch=hit.batch
                )
        except ProviderError as exc:  # kept: the next sync grants it
            logger.warning("MTurk worker %s: qualification not granted yet: %s", worker.external_id, exc)
            continue
        except qualification.QualificationError as exc:
            logger.warning("MTurk worker %s: held qualification answers not applied: %s", worker.external_id, exc)
        row.delete()


def drop_stale_held(batch: Batch, now=None) -> int:
    """Held answers MTurk can no longer report (made-up ids): dropped."""
    now = now or timezone.now()
    age = timedelta(
        seconds=batch.lifetime_seconds + batch.assignment_duration_seconds + batch.auto_approve_seconds + 86400
    )
    return MTurkHeldSubmission.objects.filter(hit__batch=batch, created_at__lt=now - age).delete()[0]


def sync_batch(batch: Batch) -> dict:
    """Page through every published HIT's assignments; returns counts by outcome."""
    provider = MTurkProvider()
    counts = {"confirmed": 0, "flagged": 0, "hits": 0}
    behind = allocation.push_pending(batch)  # places opened while MTurk could not be told
    if behind:
        logger.warning("MTurk sync of batch %s: %d HITs still lack opened places there", batch.pk, behind)
    try:
        bonuses = record_paid_bonuses(provider, batch)
        if bonuses:
            counts["bonuses recorded"] = bonuses
        for hit in batch.hits.exclude(external_id="").order_by("pk"):
            counts["hits"] += 1
            for record in provider.list_assignments(batch, hit.external_id):
                counts[_mirror(hit, record)] += 1
        drop_stale_held(batch)
    except ProviderError as exc:
        logger.error("MTurk sync of batch %s failed: %s", batch.pk, exc)
        Batch.objects.filter(pk=batch.pk).update(last_error=f"Sync: {exc}")
        raise
    logger.info("MTurk sync of batch %s: %s", batch.pk, summary(counts))
    return counts


def summary(counts: dict) -> str:
    return f"Synced {counts['hits']} HITs: {counts['confirmed']} confirmed, {counts['flagged']} flagged."
