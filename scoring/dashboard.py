"""What the lead's dashboards show, read from stored runs and a few aggregate queries.

Selectors: pages, the API and live polling read the latest stored run and say when it is
stale. With a broker they queue a coalesced recompute and return at once; only the embedded
no-broker mode computes in process (decided in `config.dispatch`).
"""

import json
from datetime import timedelta
from decimal import Decimal

from django.db import connection
from django.db.models import Count, Q, Sum
from django.utils import timezone

from annotation.models import Reference
from config.dispatch import runs_in_process
from hits.models import Assignment, Batch, LedgerEntry

from . import charts, scoped
from .models import ScoringRun
from .recompute import request_recompute
from .services import alpha_column, compute_scores, is_stale, latest_run

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


def _progress_rows(dataset, batch, since) -> list[tuple]:
    """Per crowd batch in scope: (assignments per HIT, HITs, counted, assigned, rejected,
    submitted since `since`, HITs with a counted assignment)."""
    if scoped.available():
        return scoped.progress_counts(dataset.pk, batch.pk if batch else None, since)
    batches = Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD)
    if batch is not None:
        batches = batches.filter(pk=batch.pk)
    rows = []
    for b in batches:
        counts = Assignment.objects.filter(hit__batch=b).aggregate(
            done=Count("pk", filter=Q(status__in=Assignment.COUNTED)),
            assigned=Count("pk", filter=Q(status=Assignment.Status.ASSIGNED)),
            rejected=Count("pk", filter=Q(status=Assignment.Status.REJECTED)),
            recent=Count("pk", filter=Q(submitted_at__gte=since)),
        )
        with_work = b.hits.filter(assignments__status__in=Assignment.COUNTED).distinct().count()
        rows.append((b.assignments_per_hit, b.hits.count(), *counts.values(), with_work))
    return rows


def progress(dataset, batch=None) -> dict:
    """Places done, in progress and left over the crowd batches, and an estimated finish
    from the rate of the last hour. One query on PostgreSQL (per HIT of the scope, its
    assignments counted by status), whatever the rest of the database holds."""
    now = timezone.now()
    rows = _progress_rows(dataset, batch, now - RATE_WINDOW)
    total_places = sum(per_hit * hits for per_hit, hits, *_ in rows)
    hits, done, in_progress, rejected, recent, hits_done = (sum(r[i] for r in rows) for i in range(1, 7))
    left = max(0, total_places - done - in_progress)
    eta = None
    rate = recent / RATE_WINDOW.total_seconds() if recent else 0
    if rate and left + in_progress:
        eta = now + timedelta(seconds=(left + in_progress) / rate)
    return {
        "batches": len(rows),
        "hits": hits,
        "hits_with_work": hits_done,
        "places": total_places,
        "done": done,
        "in_progress": in_progress,
        "left": left,
        "rejected": rejected,
        "per_hour": recent,
        "eta": eta,
        "percent": round(100 * done / total_places, 1) if total_places else 0,
    }


def spend(dataset, batch=None) -> dict:
    batches = Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD)
    if batch is not None:
        batches = batches.filter(pk=batch.pk)
    totals = {k: Decimal("0.00") for k in LedgerEntry.Kind.values}
    if scoped.available():
        sums = scoped.spend(dataset.pk, batch.pk if batch else None)
    else:
        entries = LedgerEntry.objects.filter(batch__dataset=dataset)
        if batch is not None:
            entries = entries.filter(batch=batch)
        sums = entries.values_list("kind").annotate(total=Sum("amount")).order_by()
    for kind, amount in sums:
        totals[kind] = amount
    totals["total"] = sum(totals.values(), Decimal("0.00"))
    totals["budget"] = batches.aggregate(b=Sum("budget"))["b"]
    totals["share"] = round(100 * float(totals["total"] / totals["budget"]), 1) if totals["budget"] else None
    return totals


def authoring_states(dataset) -> list[dict]:
    """References per authoring state (`annotation.authoring.authoring_overview(...)["states"]`,
    without the per-author rows, draft times and budget the overview page does not show)."""
    totals = dict.fromkeys(Reference.Status.values, 0)
    for status, n in (
        Reference.objects.filter(document__dataset=dataset).values_list("status").annotate(n=Count("pk")).order_by()
    ):
        totals[status] = n
    labels = dict(Reference.Status.choices)
    return [{"status": s, "label": labels[s], "count": n} for s, n in totals.items()]


def length_scatter(run) -> dict | None:
    """The systems page's score-against-length scatter of a run (None without judged summaries).

    On PostgreSQL every step-th summary is picked in the query (`charts.scatter_step`), so the
    page reads about 3,000 of the run's per-summary values, not its 0.9 MB of them for 22,000."""
    if run is None:
        return None
    if not scoped.available():
        summaries = ScoringRun.objects.filter(pk=run.pk).values_list("outputs__summaries", flat=True).first() or {}
        return charts.length_scatter(summaries) if summaries.get("ids") else None
    # NOTE: materialized, s and n are values read once; each pick is then ~3,000 direct lookups.
    pick = (
        "(SELECT jsonb_agg(s #> ARRAY['{key}', i::text] ORDER BY i)"
        " FROM generate_series(0, n - 1, greatest(1, n / %s)) i)"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH r AS MATERIALIZED (SELECT outputs->'summaries' AS s FROM {ScoringRun._meta.db_table} WHERE id = %s),"
            " k AS MATERIALIZED (SELECT s, jsonb_array_length(s->'ids') AS n FROM r)"
            f" SELECT n, {pick.format(key='words')}, {pick.format(key='acu')}, {pick.format(key='normalized_acu')}"
            " FROM k",
            [run.pk, *[charts.SCATTER_SAMPLE] * 3],
        )
        row = cursor.fetchone()
    if row is None or not row[0]:
        return None
    return charts.sampled_length_scatter(*(json.loads(v) if isinstance(v, str) else v for v in row[1:]))


def alpha_trend(dataset, batch=None, limit: int = 200) -> list[dict]:
    """Both alphas of the stored runs over time (oldest first), without loading the outputs."""
    rows = (
        ScoringRun.objects.filter(
            dataset=dataset, batch=batch, kind=ScoringRun.Kind.SCORES, status=ScoringRun.Status.DONE
        )
        .order_by("-started_at")
        .annotate(both=alpha_column())
        .values_list("pk", "started_at", "both", "inputs__judgments")[:limit]
    )
    return [
        {
            "run": pk,
            "at": at.isoformat(),
            "acu_level": (both or {}).get("acu_level"),
            "summary_level": (both or {}).get("summary_level"),
            "judgments": n,
        }
        for pk, at, both, n in reversed(list(rows))
    ]


def overview(dataset, batch=None) -> dict:
    run, stale = scores_run(dataset, batch, parts=("alpha",))
    alpha = run.outputs.get("alpha") if run else None
    return {
        "progress": progress(dataset, batch),
        "spend": spend(dataset, batch),
        "authoring": authoring_states(dataset),
        "alpha": alpha,
        "rose_alpha": ROSE_ALPHA,
        "trend": alpha_trend(dataset, batch),
        "run": run.pk if run else None,
        "run_at": run.finished_at.isoformat() if run and run.finished_at else None,
        "stale": stale,
    }
