"""Syncing batches with their providers: one entry point for the lead's *Sync now*, the API
and the periodic task, whatever the provider.

Each provider package that declares `Capability.SYNC` has a `sync.sync_batch(batch)` that
mirrors what happened at the provider and returns counts, and a `summary(counts)` for the lead.
"""

import logging

from hits.models import Batch
from hits.provider_interface import Capability, ProviderError, get_provider
from hits.providers.mturk import bonuses as mturk_bonuses
from hits.providers.mturk import sync as mturk_sync
from hits.providers.prolific import bonuses as prolific_bonuses
from hits.providers.prolific import sync as prolific_sync

logger = logging.getLogger(__name__)

SYNCS = {"mturk": mturk_sync, "prolific": prolific_sync}  # each has sync_batch(batch) and summary(counts)


def can_sync(batch: Batch) -> bool:
    if batch.kind != Batch.Kind.CROWD or batch.provider not in SYNCS:
        return False
    return get_provider(batch.provider).supports(Capability.SYNC)


def sync_batch(batch: Batch) -> dict:
    """Sync one batch now; raises ProviderError with a message for the lead."""
    if not can_sync(batch):
        return {"summary": "Nothing to sync: this round's work is all recorded here."}
    module = SYNCS[batch.provider]
    counts = module.sync_batch(batch)
    return {**counts, "summary": module.summary(counts)}


def sync_open_batches() -> dict:
    """Sync every published or stopped batch of a syncing provider; a failure is logged,
    recorded on its batch and counted, and the others still run. Then record the paid Prolific
    and MTurk bonuses still missing from the ledger of batches no longer synced (a complete batch)."""
    result = {"synced": 0, "failed": 0}
    for batch in Batch.objects.filter(
        provider__in=list(SYNCS), status__in=[Batch.Status.PUBLISHED, Batch.Status.STOPPED]
    ).order_by("pk"):
        try:
            sync_batch(batch)
            result["synced"] += 1
        except ProviderError as exc:
            result["failed"] += 1
            logger.error("sync of batch %s (%s) failed: %s", batch.pk, batch.provider, exc)
    if result["failed"]:
        logger.warning("provider sync: %s batches synced, %s failed", result["synced"], result["failed"])
    prolific_sync.release_abandoned()
    prolific_bonuses.record_all_paid_bonuses()  # those of batches no longer synced (complete)
    mturk_bonuses.record_all_paid_bonuses()
    return result
