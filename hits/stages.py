"""Where a batch is in its life: draft → published → complete (every assignment decided) → paid (a selector, reads only)."""

from dataclasses import dataclass

from django.db.models import Count
from django.utils import timezone

from hits.models import Assignment, Batch, LedgerEntry
from hits.selectors.figures import batch_figures
from hits.selectors.waiting import waiting_summary

EXPLAIN = {
    "draft": "Not published yet: check the cost, then publish.",
    "publishing": "Being handed to the provider.",
    "published": "Workers are taking its HITs.",
    "stopped": "No new HITs are handed out; submitted work can still be reviewed.",
    "complete": "Every assignment is decided (approved or rejected); some approved rewards are not paid yet.",
    "paid": "Every assignment is decided and every approved reward is in the ledger.",
    "imported": "Labels imported with the dataset (read-only).",
    "expert": "Authors and leads label these summaries on the task page, unpaid; their labels are the gold.",
}


@dataclass(frozen=True)
class Stage:
    code: str
    label: str
    explanation: str


def batch_stage(batch: Batch) -> Stage:
    """The stage a lead reads on the batch pages (`batch_stages` of this one batch)."""
    return batch_stages([batch])[batch.pk]


def batch_stages(batches, figures: dict[int, dict] | None = None) -> dict[int, Stage]:
    """{batch id: stage} of these batches, in a few queries whatever their number: their figures
    (`batch_figures`, or the ones the caller already read), the rewards paid of the finished ones,
    and whether places wait for nobody from the pages cache (`waiting_summary`). The stored status
    says whether work is handed out; complete and paid follow from the assignments and the ledger,
    so no page has to write them."""
    batches = list(batches)
    stages = {b.pk: stage for b in batches if (stage := _fixed_stage(b)) is not None}
    live = [b for b in batches if b.pk not in stages]
    if figures is None or any(b.pk not in figures for b in live):
        figures = batch_figures(live)
    finished = {b.pk for b in live if _finished(b, figures[b.pk])}
    paid = _rewards_paid(finished)
    for batch in live:
        entry = figures[batch.pk]
        if batch.pk in finished:
            stages[batch.pk] = _finished_stage(batch, entry, paid.get(batch.pk, 0))
        else:
            stages[batch.pk] = _running_stage(batch, entry)
    return stages


def _rewards_paid(ids: set[int]) -> dict[int, int]:
    """{batch id: assignments whose reward is in the ledger} of these batches, one query."""
    if not ids:
        return {}
    rewards = LedgerEntry.objects.filter(batch_id__in=ids, kind=LedgerEntry.Kind.REWARD, assignment__isnull=False)
    return dict(rewards.order_by().values_list("batch_id").annotate(n=Count("pk")))


def _fixed_stage(batch: Batch) -> Stage | None:
    """The stage of a batch whose assignments do not decide it: imported, expert, not published yet."""
    if batch.kind in (Batch.Kind.IMPORTED, Batch.Kind.IMPORTED_CROWD):
        return Stage("imported", "Imported", EXPLAIN["imported"])
    if batch.kind == Batch.Kind.EXPERT:
        label = "Expert round" if batch.status == Batch.Status.PUBLISHED else "Expert round, closed"
        return Stage("expert", label, EXPLAIN["expert"])
    if batch.status in (Batch.Status.DRAFT, Batch.Status.PUBLISHING):
        return _stage(batch.status)
    return None


def _places(batch: Batch, entry: dict) -> int:
    return entry["hits"] * batch.assignments_per_hit


def _finished(batch: Batch, entry: dict) -> bool:
    """Every assignment decided, and every place approved or no more handed out."""
    counts = entry["by_status"]
    pending = counts.get(Assignment.Status.ASSIGNED, 0) + counts.get(Assignment.Status.SUBMITTED, 0)
    approved = counts.get(Assignment.Status.APPROVED, 0)
    decided = approved + counts.get(Assignment.Status.REJECTED, 0)
    return not (pending or not decided or (approved < _places(batch, entry) and not _hands_out_no_more(batch)))


def _running_stage(batch: Batch, entry: dict) -> Stage:
    counts, places = entry["by_status"], _places(batch, entry)
    taken = sum(counts.get(s, 0) for s in (Assignment.Status.ASSIGNED, Assignment.Status.SUBMITTED))
    stage = _stage(batch.status)
    if (
        batch.status == Batch.Status.PUBLISHED
        and places
        and taken + counts.get(Assignment.Status.APPROVED, 0) >= places
    ):
        return _every_place_taken(stage, counts)
    if stage.code == "published" and (waiting := waiting_summary(batch)):
        # some of its places no worker here may take: it will not finish by itself
        places = waiting["places"]
        return Stage(
            stage.code,
            "Short of workers",
            f"{places} of its open place{'s' if places != 1 else ''} no worker here may take: it cannot finish "
            "by itself (its page says what you can do).",
        )
    return stage


def _finished_stage(batch: Batch, entry: dict, paid: int) -> Stage:
    stage = _stage("paid" if paid >= entry["by_status"].get(Assignment.Status.APPROVED, 0) else "complete")
    left = entry["left"] if batch.status == Batch.Status.STOPPED else 0
    if left:  # "Paid" beside "7 left" would read as finished: say the batch stopped short
        explanation = stage.explanation[0].lower() + stage.explanation[1:]
        return Stage(
            stage.code,
            f"Stopped, {stage.label.lower()}",
            f"Stopped with {left} place{'s' if left != 1 else ''} never done; {explanation}",
        )
    return stage


def _hands_out_no_more(batch: Batch) -> bool:
    """The batch hands out no more work: stopped, complete or past its lifetime."""
    return batch.status in (Batch.Status.STOPPED, Batch.Status.COMPLETE) or (
        batch.expires_at is not None and batch.expires_at <= timezone.now()
    )


def _every_place_taken(stage: Stage, counts: dict) -> Stage:
    """A published batch whose every place is taken: nothing is being handed out any more; says
    how many are still worked on and how many wait for review."""
    waiting = counts.get(Assignment.Status.SUBMITTED, 0)
    assigned = counts.get(Assignment.Status.ASSIGNED, 0)
    parts = [f"{assigned} still being worked on"] if assigned else []
    if waiting:
        parts.append(f"{waiting} submitted, waiting for your review")
    return Stage(stage.code, stage.label, "Every place is taken: " + ", ".join(parts or ["all done"]) + ".")


def _stage(code: str) -> Stage:
    label = dict(Batch.Status.choices).get(code) or code.capitalize()
    return Stage(code, label, EXPLAIN.get(code, ""))
