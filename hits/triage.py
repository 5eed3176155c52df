"""Triage: spend crowd money only where a machine judge is unsure.

From a finished judge run and a confidence c, the pairs with P(present) >= c or <= 1 - c are
decided by the machine (label: P >= 0.5); every other pair goes to the crowd, a pair the run has
no probability for included (`decided_pairs`, `machine_labels`: the one rule, `_decided`). A HIT
then carries only its summary's undecided ACUs (`HIT.acu_ids`) and is paid by the bucket of the
number of ACUs it carries (`carry_undecided`). Two kinds of batch
triage: a triage batch (hits/services/triage.py `create_triage_batch`: every HIT, no gold) and a
`pairs` batch with `triage_confidence` (hits/services/batches.py: its gold HITs stay whole, its
other HITs are triaged by its judge run, `allocation_judge_run`). Scores of the round combine both
(scoring/runs/triage.py).
"""

import logging

from django.db.models import Count, F, Q

from annotation.models import ACU
from hits.batch_fields import BatchError

from .models import HIT, JudgeRun, MachineJudgment
from .money import batch_buckets, bucket_for

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


def check_triage_source(
    run: JudgeRun,
    confidence: float,
    *,
    allow_not_for_ranking: bool = False,
    override: str = "tick “use it although it is not for ranking”",
) -> None:
    """Refuse (BatchError) a triage from this run at this confidence: a run not finished or not
    calibrated, a confidence outside (0.5, 1), a run marked "not for ranking" (`ranking_verdict`)
    unless `allow_not_for_ranking`, the lead's override (then logged; `override` says how to give it)."""
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
            f"Pick another judge, or {override}."
        )
    if verdict["for_ranking"] is False:
        logger.warning("Triage from judge run %s despite %s (overridden)", run.pk, verdict["reason"])


def _decided(confidence: float) -> Q:
    """The pairs the machine decides at this confidence: P >= c or P <= 1 - c (never a pair without
    a probability: it goes to the crowd)."""
    return Q(probability__gte=confidence) | Q(probability__lte=1 - confidence)


def decided_pairs(run: JudgeRun, confidence: float) -> dict[int, set[int]]:
    """{summary id: {acu ids the machine decides}} at this confidence."""
    out: dict[int, set[int]] = {}
    rows = MachineJudgment.objects.filter(_decided(confidence), run=run)
    for summary_id, acu_id in rows.values_list("summary_id", "acu_id").order_by():
        out.setdefault(summary_id, set()).add(acu_id)
    return out


def decided_counts(run: JudgeRun, confidence: float, summary_ids) -> dict[int, int]:
    """{summary id: how many of its document's ACUs the machine decides at this confidence}: the
    `decided_pairs` of these summaries counted in one query (a new batch's plan, hits.services.batch_plan)."""
    rows = MachineJudgment.objects.filter(
        _decided(confidence),
        run=run,
        summary_id__in=list(summary_ids),
        acu__reference__document_id=F("summary__document_id"),
    )
    return dict(rows.values_list("summary_id").annotate(n=Count("pk")).order_by())


def machine_labels(run: JudgeRun, confidence: float, summary_ids=None) -> dict[tuple[int, int], bool]:
    """{(summary id, acu id): machine label} of the pairs the machine decides at this confidence."""
    rows = MachineJudgment.objects.filter(_decided(confidence), run=run)
    if summary_ids is not None:
        rows = rows.filter(summary_id__in=list(summary_ids))
    return {
        (s, a): p >= 0.5
        for s, a, p in rows.values_list("summary_id", "acu_id", "probability").iterator(chunk_size=20000)
    }


def carry_undecided(batch, hits: list, decided_acus: dict[int, set[int]]) -> list:
    """Each of these HITs of the batch carries only its summary's ACUs the machine has not decided
    (`decided_pairs`; in reference order), paid by the bucket of their count; a HIT left with none
    is deleted and its summary recorded as decided (`Batch.decided_summaries`). Returns the kept HITs.
    (`hits` with their summaries selected: one query for every HIT's ACUs.)"""
    buckets = batch_buckets(batch)
    documents = {h.summary.document_id for h in hits}
    rows = ACU.objects.filter(reference__document_id__in=documents).order_by(
        "reference__document_id", "sentence__position", "position"
    )
    order: dict[int, list[int]] = {}
    for document_id, acu_id in rows.values_list("reference__document_id", "pk"):
        order.setdefault(document_id, []).append(acu_id)
    kept, empty = [], []
    for hit in hits:
        done = decided_acus.get(hit.summary_id, set())
        hit.acu_ids = [a for a in order.get(hit.summary.document_id, []) if a not in done]
        if not hit.acu_ids:
            empty.append(hit.pk)
            continue
        hit.acu_count = len(hit.acu_ids)
        hit.reward = bucket_for(buckets, hit.acu_count).reward
        kept.append(hit)
    batch.decided_summaries.add(*(h.summary_id for h in hits if h.pk in set(empty)))
    HIT.objects.filter(pk__in=empty).delete()
    HIT.objects.bulk_update(kept, ["acu_ids", "acu_count", "reward"])
    return kept
