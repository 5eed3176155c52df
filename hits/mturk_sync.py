"""Mirroring MTurk's view of our assignments.

A submission counts only when MTurk confirms that assignment for that worker: our stored
answers stay unconfirmed until a sync finds the same AssignmentId with the same WorkerId.
MTurk assignments with no stored answers are flagged for the lead (the worker submitted at
MTurk but our server never received the answers).
"""
from django.db import transaction

from .models import Assignment, Batch, Worker
from .providers import ProviderError, get_provider

STATUS = {"Submitted": Assignment.Status.SUBMITTED, "Approved": Assignment.Status.APPROVED, "Rejected": Assignment.Status.REJECTED}
NO_ANSWERS = "MTurk reports this assignment {status}, but no answers were stored here."


def _mirror(hit, record: dict) -> str:
    status = STATUS[record["AssignmentStatus"]]
    worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.MTURK, external_id=record["WorkerId"])
    with transaction.atomic():
        ours = Assignment.objects.select_for_update().filter(hit=hit, external_id=record["AssignmentId"]).first()
        if ours is None:
            ours = Assignment.objects.select_for_update().filter(hit=hit, worker=worker).first()
        if ours is None:
            Assignment.objects.create(
                hit=hit, worker=worker, external_id=record["AssignmentId"], status=status, confirmed=False,
                submitted_at=record.get("SubmitTime"), flag=NO_ANSWERS.format(status=status),
            )
            return "flagged"
        if ours.worker_id != worker.pk:
            ours.flag = f"MTurk reports worker {record['WorkerId']} for this assignment, not {ours.worker.external_id}."
            ours.confirmed = False
            ours.save(update_fields=["flag", "confirmed"])
            return "flagged"
        if not ours.judgments.exists():
            ours.external_id, ours.status, ours.confirmed = record["AssignmentId"], status, False
            ours.flag = NO_ANSWERS.format(status=status)
            ours.save(update_fields=["external_id", "status", "confirmed", "flag"])
            return "flagged"
        ours.confirmed, ours.flag, ours.external_id = True, "", record["AssignmentId"]
        # Mirror MTurk's decision, never moving back from a decision to "submitted".
        if status != Assignment.Status.SUBMITTED or ours.status == Assignment.Status.ASSIGNED:
            ours.status = status
        ours.save(update_fields=["confirmed", "flag", "external_id", "status"])
        return "confirmed"


def sync_batch(batch: Batch) -> dict:
    """Page through every published HIT's assignments; returns counts by outcome."""
    provider = get_provider(batch.provider)
    counts = {"confirmed": 0, "flagged": 0, "hits": 0}
    try:
        for hit in batch.hits.exclude(external_id="").order_by("pk"):
            counts["hits"] += 1
            for record in provider.list_assignments(batch, hit.external_id):
                counts[_mirror(hit, record)] += 1
    except ProviderError as exc:
        Batch.objects.filter(pk=batch.pk).update(last_error=f"Sync: {exc}")
        raise
    return counts


def sync_open_batches() -> int:
    synced = 0
    for batch in Batch.objects.filter(provider=Worker.Provider.MTURK, status__in=[Batch.Status.PUBLISHED, Batch.Status.STOPPED]):
        try:
            sync_batch(batch)
            synced += 1
        except ProviderError:
            continue  # recorded on the batch; the next run tries again
    return synced
