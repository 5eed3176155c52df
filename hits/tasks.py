"""Periodic crowd chores, thin over the services."""

from celery import shared_task

from config.db_retry import DB_ERRORS, DB_RETRY, retry_after_db_error  # retried with backoff
from hits.providers import sync as provider_sync
from hits.release import release_overdue
from hits.services import batches, review

from .models import Batch


@shared_task(acks_late=True, **DB_RETRY)
def expire_abandoned_assignments() -> int:
    return release_overdue()


@shared_task(acks_late=True, **DB_RETRY)
def auto_approve_submissions() -> int:
    return review.auto_approve_due()


@shared_task(acks_late=True, **DB_RETRY)
def publish_batch(batch_id: int) -> str:
    """Publish (or resume publishing) a batch; idempotent, so a redelivered task is safe."""
    try:
        batches.publish_batch(Batch.objects.get(pk=batch_id))
    except batches.BatchError as exc:
        return str(exc)  # recorded on the batch as last_error for the lead
    return "published"


@shared_task(bind=True, acks_late=True, max_retries=DB_RETRY["max_retries"])
def sync_provider_batches(self) -> dict:
    """Mirror provider-side states for every open batch of a provider that syncs (MTurk,
    Prolific) and release abandoned Prolific sessions. Any database error is retried later with
    backoff, a bounded number of times: every money event the sync writes is keyed in the ledger,
    so a sync stopped midway and run again records each one once."""
    try:
        return provider_sync.sync_open_batches()
    except DB_ERRORS as exc:
        raise retry_after_db_error(self, exc, "Provider sync")


@shared_task(acks_late=True, **DB_RETRY)
def release_idle_prolific_sessions() -> int:
    """Beat: idle Prolific sessions give their unanswered HITs back."""
    from hits.providers.prolific.sessions import release_idle

    return release_idle()


@shared_task(acks_late=True, **DB_RETRY)
def release_idle_sessions() -> int:
    """Beat: every provider gives back the places its idle participants hold."""
    from hits.provider_interface import available_providers, get_provider

    return sum(get_provider(name).release_idle() for name in available_providers())


@shared_task(acks_late=True, **DB_RETRY)
def compact_tallies() -> int:
    """Beat: fold the running counts (hits.tallies, annotation.tallies) so dashboards read a row per count."""
    from annotation import tallies as reference_tallies
    from hits import tallies

    return tallies.compact() + reference_tallies.compact()


@shared_task(acks_late=True, **DB_RETRY)
def clear_expired_sessions() -> None:
    """Beat, daily: delete the sessions past their expiry (Django's `clearsessions`; nothing else
    removes them from the database)."""
    from django.core.management import call_command

    call_command("clearsessions")
