"""Triage batches: spend crowd money only where a machine judge is unsure.

From a finished judge run and a confidence c, the pairs with P(present) >= c or <= 1 - c are
decided by the machine (label: P >= 0.5); every other pair goes to the crowd. A HIT per summary
carries only that summary's uncertain ACUs (`HIT.acu_ids`) and is paid by the bucket of the
number of ACUs it carries. Scores of the round combine both (scoring/runs/triage.py). A triage
batch can be adaptive (hits/allocation/policy.py): its HITs' places then follow the crowd's answers on
the ACUs they carry.
"""

import logging

from django.db import transaction

from hits.allocation.policy import ADAPTIVE_KINDS
from hits.batch_fields import BatchSpec
from hits.services.batches import BatchError, batch_buckets, create_batch, hit_priority

from .models import HIT, JudgeRun, MachineJudgment
from .money import bucket_for

logger = logging.getLogger(__name__)


def ranking_verdict(figures: dict | None) -> dict:
    """Whether a judge run may rank systems (and so be a triage source): its system-level Kendall
    tau with the human scores must have a 95% CI above 0. {"for_ranking": True, False or None
    (not measured: no human labels, or too few systems or documents), "reason": ...}."""
    kendall = (((figures or {}).get("correlations") or {}).get("system") or {}).get("kendall")
    if not kendall or any(v is None for v in kendall):
        return {
            "for_ranking": None,
            "reason": "not measured: no system-level correlation with human scores (no labels, or too few "
            "systems or documents)",
        }
    value, low, high = kendall
    interval = f"system-level Kendall tau {value:.3f}, 95% CI [{low:.3f}, {high:.3f}]"
    if low <= 0:
        return {"for_ranking": False, "reason": f"not for ranking: {interval} includes 0 or lies below it"}
    return {"for_ranking": True, "reason": interval}


def decided(probability: float, confidence: float) -> bool:
    return probability >= confidence or probability <= 1 - confidence


def uncertain_pairs(run: JudgeRun, confidence: float) -> dict[int, list[int]]:
    """{summary id: [acu ids the machine is unsure of]} at this confidence."""
    out: dict[int, list[int]] = {}
    rows = MachineJudgment.objects.filter(run=run, probability__gt=1 - confidence, probability__lt=confidence)
    for summary_id, acu_id in rows.values_list("summary_id", "acu_id").order_by("summary_id", "acu_id"):
        out.setdefault(summary_id, []).append(acu_id)
    return out


def machine_labels(run: JudgeRun, confidence: float, summary_ids=None) -> dict[tuple[int, int], bool]:
    """{(summary id, acu id): machine label} of the pairs the machine decides at this confidence."""
    rows = MachineJudgment.objects.filter(run=run).exclude(probability__gt=1 - confidence, probability__lt=confidence)
    if summary_ids is not None:
        rows = rows.filter(summary_id__in=list(summary_ids))
    return {
        (s, a): p >= 0.5
        for s, a, p in rows.values_list("summary_id", "acu_id", "probability").iterator(chunk_size=20000)
    }


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
    """A draft crowd batch whose HITs carry only the ACUs the run is unsure of at `confidence`.

    A run marked "not for ranking" (`ranking_verdict`) is refused unless `allow_not_for_ranking`."""
    if run.status != JudgeRun.Status.DONE:
        raise BatchError("The judge run has not finished; triage needs its probabilities.")
    if not 0.5 < confidence < 1:
        raise BatchError("The confidence must lie between 0.5 and 1 (e.g. 0.9).")
    if not run.calibration.get("target"):
        raise BatchError(
            "This judge run was not calibrated (the dataset had no human labels); its scores are no probabilities."
        )
    verdict = ranking_verdict(run.figures)
    if verdict["for_ranking"] is False and not allow_not_for_ranking:
        raise BatchError(
            f"Judge run {run.pk} ({run.judge}) is {verdict['reason']}: its labels could reorder the systems. "
            "Pick another judge, or override explicitly."
        )
    if verdict["for_ranking"] is False:
        logger.warning("Triage from judge run %s despite %s (overridden)", run.pk, verdict["reason"])
    uncertain = uncertain_pairs(run, confidence)
    if not uncertain:
        raise BatchError(f"At c = {confidence:g} the machine decides every pair: there is nothing for the crowd.")
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
    batch.save(update_fields=["triage_run", "triage_confidence"])
    buckets = batch_buckets(batch)
    batch.hits.exclude(summary_id__in=list(uncertain)).delete()
    hits = list(batch.hits.select_related("summary__document__reference"))
    if not hits:
        raise BatchError("None of the uncertain pairs belongs to an approved reference the crowd may see.")
    for hit in hits:
        order = list(
            hit.summary.document.reference.acus.order_by("sentence__position", "position").values_list("pk", flat=True)
        )
        mine = set(uncertain[hit.summary_id])
        hit.acu_ids = [a for a in order if a in mine]
        hit.acu_count = len(hit.acu_ids)
        hit.reward = bucket_for(buckets, hit.acu_count).reward
        hit.gold_answers = None
        hit.priority = hit_priority(batch, gold=False)
        if batch.allocation in ADAPTIVE_KINDS:  # no gold HIT is left: every HIT starts at the minimum
            hit.max_assignments = hit.open_places = batch.allocation_min
    HIT.objects.bulk_update(
        hits, ["acu_ids", "acu_count", "reward", "gold_answers", "max_assignments", "open_places", "priority"]
    )
    logger.info(
        "Triage batch %s from judge run %s at c=%s: %d HITs, %d uncertain pairs",
        batch.pk,
        run.pk,
        confidence,
        len(hits),
        sum(len(v) for v in uncertain.values()),
    )
    return batch
