"""What the lead's dashboards show, read from stored runs and a few aggregate queries.

Selectors: pages, the API and live polling read the latest stored run and say when it is
stale. With a broker they queue a coalesced recompute and return at once; only the embedded
no-broker mode computes in process (decided in `config.dispatch`).
"""

from datetime import timedelta
from decimal import Decimal

from django.db.models import Count, Max, Min, Q, Sum
from django.utils import timezone

from annotation.authoring import authoring_overview
from config.dispatch import runs_in_process
from hits.models import Assignment, Batch, LedgerEntry

from .models import ScoringRun
from .recompute import request_recompute
from .services import compute_scores, is_stale, latest_run

ROSE_ALPHA = {"acu_level": 0.7528, "summary_level": 0.7571}  # RoSE paper, CNN/DM
RATE_WINDOW = timedelta(hours=1)


def scores_run(
    dataset, batch=None, *, refresh: bool = True, parts: tuple[str, ...] | None = None
) -> tuple[ScoringRun | None, bool]:
    """(latest run, stale?) and, if stale, ask for a recompute. With a broker this never
    writes a run in the request: the run is None until the first recompute has finished.
    `parts`: the keys of the outputs the caller shows (the others are not read)."""
    run = latest_run(dataset, batch, parts=parts)
    stale = is_stale(run, dataset, batch)
    if stale and refresh:
        if runs_in_process():  # the embedded mode (no broker, small local datasets): now
            run, stale = compute_scores(dataset, batch, trigger="page"), False
        else:  # queued, coalesced; this request only reads
            request_recompute(dataset.pk, batch.pk if batch else None)
    return run, stale


def progress(dataset, batch=None) -> dict:
    """Places done, in progress and left over the crowd batches, and an estimated finish
    from the rate of the last hour."""
    batches = Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD)
    if batch is not None:
        batches = batches.filter(pk=batch.pk)
    total_places = 0
    for b in batches.annotate(n_hits=Count("hits")).values("n_hits", "assignments_per_hit"):
        total_places += b["n_hits"] * b["assignments_per_hit"]
    assignments = Assignment.objects.filter(hit__batch__in=batches)
    counts = assignments.aggregate(
        done=Count("pk", filter=Q(status__in=Assignment.COUNTED)),
        in_progress=Count("pk", filter=Q(status=Assignment.Status.ASSIGNED)),
        rejected=Count("pk", filter=Q(status=Assignment.Status.REJECTED)),
        recent=Count("pk", filter=Q(submitted_at__gte=timezone.now() - RATE_WINDOW)),
        first=Min("submitted_at"),
        last=Max("submitted_at"),
    )
    left = max(0, total_places - counts["done"] - counts["in_progress"])
    hits_done = batches.aggregate(
        n=Count("hits", filter=Q(hits__assignments__status__in=Assignment.COUNTED), distinct=True)
    )["n"]
    eta = None
    rate = counts["recent"] / RATE_WINDOW.total_seconds() if counts["recent"] else 0
    if rate and left + counts["in_progress"]:
        eta = timezone.now() + timedelta(seconds=(left + counts["in_progress"]) / rate)
    return {
        "batches": batches.count(),
        "hits": batches.aggregate(n=Count("hits"))["n"],
        "hits_with_work": hits_done,
        "places": total_places,
        "done": counts["done"],
        "in_progress": counts["in_progress"],
        "left": left,
        "rejected": counts["rejected"],
        "per_hour": counts["recent"],
        "eta": eta,
        "percent": round(100 * counts["done"] / total_places, 1) if total_places else 0,
    }


def spend(dataset, batch=None) -> dict:
    entries = LedgerEntry.objects.filter(batch__dataset=dataset)
    batches = Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD)
    if batch is not None:
        entries, batches = entries.filter(batch=batch), batches.filter(pk=batch.pk)
    totals = {k: Decimal("0.00") for k in LedgerEntry.Kind.values}
    for kind, amount in entries.values_list("kind").annotate(total=Sum("amount")).order_by():
        totals[kind] = amount
    totals["total"] = sum(totals.values(), Decimal("0.00"))
    totals["budget"] = batches.aggregate(b=Sum("budget"))["b"]
    totals["share"] = round(100 * float(totals["total"] / totals["budget"]), 1) if totals["budget"] else None
    return totals


def alpha_trend(dataset, batch=None, limit: int = 200) -> list[dict]:
    """Both alphas of the stored runs over time (oldest first), without loading the outputs."""
    rows = (
        ScoringRun.objects.filter(
            dataset=dataset, batch=batch, kind=ScoringRun.Kind.SCORES, status=ScoringRun.Status.DONE
        )
        .order_by("-started_at")
        .values_list(
            "pk", "started_at", "outputs__alpha__acu_level", "outputs__alpha__summary_level", "inputs__judgments"
        )[:limit]
    )
    return [
        {"run": pk, "at": at.isoformat(), "acu_level": a, "summary_level": s, "judgments": n}
        for pk, at, a, s, n in reversed(list(rows))
    ]


def overview(dataset, batch=None) -> dict:
    run, stale = scores_run(dataset, batch, parts=("alpha",))
    alpha = run.outputs.get("alpha") if run else None
    return {
        "progress": progress(dataset, batch),
        "spend": spend(dataset, batch),
        "authoring": authoring_overview(dataset)["states"],
        "alpha": alpha,
        "rose_alpha": ROSE_ALPHA,
        "trend": alpha_trend(dataset, batch),
        "run": run.pk if run else None,
        "run_at": run.finished_at.isoformat() if run and run.finished_at else None,
        "stale": stale,
    }
