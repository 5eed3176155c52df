"""Mirroring MTurk's view of our assignments.

A submission counts only when MTurk confirms that assignment for that worker: our stored
answers stay unconfirmed until a sync finds the same AssignmentId with the same WorkerId.
MTurk assignments with no stored answers are flagged for the lead (the worker submitted at
MTurk but our server never received the answers). Decisions taken at MTurk (an approval by
the requester elsewhere, auto-approval, a rejection) go through `hits.services.mirror`, so
their reward and fee reach the ledger exactly once.
"""

import logging

from django.db import transaction

from hits import places, versions
from hits.allocation import ADAPTIVE
from hits.models import Assignment, Batch, Worker
from hits.providers import ProviderError
from hits.providers.mturk.provider import MTurkProvider
from hits.services import allocation, mirror

logger = logging.getLogger(__name__)

STATUS = {
    "Submitted": Assignment.Status.SUBMITTED,
    "Approved": Assignment.Status.APPROVED,
    "Rejected": Assignment.Status.REJECTED,
}
DECISIONS = {"Approved": "approved", "Rejected": "rejected"}
NO_ANSWERS = "MTurk reports this assignment {status}, but no answers were stored here."


def _confirm(hit, record: dict) -> tuple[str, int | None]:
    """Match MTurk's record to our assignment; returns the outcome and our assignment's id
    when its answers are confirmed."""
    status = STATUS[record["AssignmentStatus"]]
    worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.MTURK, external_id=record["WorkerId"])
    with transaction.atomic():
        ours = Assignment.objects.select_for_update().filter(hit=hit, external_id=record["AssignmentId"]).first()
        if ours is None:
            ours = Assignment.objects.select_for_update().filter(hit=hit, worker=worker).first()
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
        if not ours.judgments.exists():
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
        versions.bump(hit.batch.dataset_id, hit.batch_id)
        if outcome == "confirmed" and hit.batch.allocation == ADAPTIVE:
            allocation.decide(hit.pk)  # confirmed answers may settle the HIT or open a place
    decision = DECISIONS.get(record["AssignmentStatus"])
    if assignment_id is not None and decision:
        mirror.provider_decided(assignment_id, decision, feedback=record.get("RequesterFeedback") or "", source="MTurk")
    return outcome


def sync_batch(batch: Batch) -> dict:
    """Page through every published HIT's assignments; returns counts by outcome."""
    provider = MTurkProvider()
    counts = {"confirmed": 0, "flagged": 0, "hits": 0}
    behind = allocation.push_pending(batch)  # places opened while MTurk could not be told
    if behind:
        logger.warning("MTurk sync of batch %s: %d HITs still lack opened places there", batch.pk, behind)
    try:
        for hit in batch.hits.exclude(external_id="").order_by("pk"):
            counts["hits"] += 1
            for record in provider.list_assignments(batch, hit.external_id):
                counts[_mirror(hit, record)] += 1
    except ProviderError as exc:
        logger.error("MTurk sync of batch %s failed: %s", batch.pk, exc)
        Batch.objects.filter(pk=batch.pk).update(last_error=f"Sync: {exc}")
        raise
    logger.info("MTurk sync of batch %s: %s", batch.pk, summary(counts))
    return counts


def summary(counts: dict) -> str:
    return f"Synced {counts['hits']} HITs: {counts['confirmed']} confirmed, {counts['flagged']} flagged."
