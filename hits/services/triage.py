"""Triage batches (hits/triage.py): a crowd batch whose HITs carry only the ACUs a judge run is unsure of."""

import logging

from django.db import transaction

from hits.allocation.policy import ADAPTIVE_KINDS
from hits.batch_fields import BatchSpec
from hits.models import HIT, JudgeRun
from hits.services.batches import BatchError, create_batch, hit_priority
from hits.triage import carry_undecided, check_triage_source, decided_pairs

logger = logging.getLogger(__name__)


@transaction.atomic
def create_triage_batch(
    run: JudgeRun,
    *,
    confidence: float,
    assignments: int = 3,
    user=None,
    name: str = "",
    allow_not_for_ranking: bool = False,
    **batch_options,
):
    """A draft crowd batch whose HITs carry only the ACUs the run is unsure of at `confidence`
    (no gold HIT: every HIT is triaged; a `pairs` batch keeps its gold with `triage_confidence`).

    A run marked "not for ranking" (hits.triage.ranking_verdict) is refused unless `allow_not_for_ranking`."""
    check_triage_source(run, confidence, allow_not_for_ranking=allow_not_for_ranking)
    chosen = {
        key: batch_options.pop(key)
        for key in ("systems", "references", "qualification_test", "seed")
        if key in batch_options
    }
    spec = BatchSpec(
        assignments=assignments,
        name=name or f"triage of {run.judge} v{run.version} at c={confidence:g}",
        **batch_options,
    )
    batch = create_batch(dataset=run.batch.dataset, spec=spec, created_by=user, **chosen)
    batch.triage_run, batch.triage_confidence = run, confidence
    batch.triage_allow_not_for_ranking = allow_not_for_ranking
    batch.save(update_fields=["triage_run", "triage_confidence", "triage_allow_not_for_ranking"])
    hits = list(batch.hits.select_related("summary"))
    for hit in hits:
        hit.gold_answers = None
        hit.priority = hit_priority(batch, gold=False)
        if batch.allocation in ADAPTIVE_KINDS:  # no gold HIT is left: every HIT starts at the minimum
            hit.max_assignments = hit.open_places = batch.allocation_min
    HIT.objects.bulk_update(hits, ["gold_answers", "max_assignments", "open_places", "priority"])
    decided_acus = decided_pairs(run, confidence)
    kept = carry_undecided(batch, hits, decided_acus)
    if not kept:
        raise BatchError(
            f"At c = {confidence:g} the machine decides every pair of the chosen summaries: there is nothing for "
            "the crowd. Choose a higher confidence."
        )
    logger.info(
        "Triage batch %s from judge run %s at c=%s: %d HITs, %d pairs for the crowd",
        batch.pk,
        run.pk,
        confidence,
        len(kept),
        sum(h.acu_count for h in kept),
    )
    return batch
