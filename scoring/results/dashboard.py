"""What the lead's dashboards show, read from stored runs and a few aggregate queries.

Selectors: pages, the API and live polling read the latest stored run and say when it is
stale. With a broker they queue a coalesced recompute and return at once; only the embedded
no-broker mode computes in process (decided in `config.dispatch`).
"""

from datetime import timedelta
from decimal import Decimal

from django.core.cache import caches
from django.db import connection
from django.db.models import Count, Q, Sum
from django.utils import timezone

from annotation.models import Dataset, Reference
from annotation.selectors import reference_states
from config.dispatch import runs_in_process
from hits import tallies
from hits.models import Assignment, Batch, LedgerEntry, Tally
from scoring.models import ScoringRun
from scoring.results import charts, leaderboard, worker_pages
from scoring.runs.recompute import request_recompute
from scoring.runs.selectors import alpha_trend, latest_run, run_parts
from scoring.runs.services import compute_scores, is_stale

ROSE_ALPHA = {"acu_level": 0.7528, "summary_level": 0.7571}  # RoSE paper, CNN/DM
RATE_WINDOW = timedelta(hours=1)
# What a page derives from a finished run is cached by the run's id: a run never changes once done.
RUN_CACHE_SECONDS = 24 * 3600


def scores_run(
    dataset, batch=None, *, refresh: bool = True, parts: tuple[str, ...] | None = None
) -> tuple[ScoringRun | None, bool]:
    """(latest run, stale?) and, if stale, ask for a recompute. With a broker this never
    writes a run in the request: the run is None until the first recompute has finished.
    `parts`: the keys of the outputs the caller shows (the others are not read)."""
    run = latest_run(dataset, batch, parts=parts)
    stale = is_stale(run, dataset, batch, current=run.current_version if run else None)
    if stale and refresh:
        if runs_in_process():  # the embedded mode (no broker, small local datasets): now, read as above
            compute_scores(dataset, batch, trigger="page")
            run, stale = latest_run(dataset, batch, parts=parts), False
        else:  # queued, coalesced; this request only reads
            request_recompute(dataset.pk, batch.pk if batch else None)
    return run, stale


def _tallied(dataset, batch, since) -> dict[int, dict]:
    """Per batch in scope, from its tallies (hits.tallies): kind, assignments per HIT, budget and
    {what: (count, amount)}; per-minute submissions summed from `since` on."""
    if batch is not None:  # a round's own row is read already
        rows = [(batch.pk, batch.kind, batch.assignments_per_hit, batch.budget, batch.status)]
    else:
        rows = (
            Batch.objects.filter(dataset=dataset)
            .order_by()
            .values_list("pk", "kind", "assignments_per_hit", "budget", "status")
        )
    out = {
        pk: {"kind": kind, "per_hit": per_hit, "budget": budget, "status": status, "counts": {}}
        for pk, kind, per_hit, budget, status in rows
    }
    since_minute = int(since.timestamp() // 60)
    # Summed here: after compaction a batch has a row per key, and a row per minute of the window.
    for batch_id, what, minute, n, amount in Tally.objects.filter(batch_id__in=list(out)).values_list(
        "batch_id", "what", "minute", "n", "amount"
    ):
        if minute == 0 or minute >= since_minute:
            count, total = out[batch_id]["counts"].get(what, (0, Decimal("0.00")))
            out[batch_id]["counts"][what] = (count + n, total + amount)
    return out


def _progress_rows(dataset, batch, since, tallied=None) -> list[tuple]:
    """Per crowd batch in scope: (assignments per HIT, HITs, counted, assigned, rejected,
    submitted since `since`, still handed out); `tallied`: the scope's tallies read already (`_tallied`)."""
    if tallies.available():
        rows = []
        for entry in (tallied if tallied is not None else _tallied(dataset, batch, since)).values():
            if entry["kind"] != Batch.Kind.CROWD:
                continue
            count = {what: n for what, (n, _) in entry["counts"].items()}
            rows.append(
                (
                    entry["per_hit"],
                    count.get("hits", 0),
                    sum(count.get(s, 0) for s in Assignment.COUNTED),
                    count.get(Assignment.Status.ASSIGNED, 0),
                    count.get(Assignment.Status.REJECTED, 0),
                    count.get(tallies.SUBMISSIONS, 0),
                    entry["status"] == Batch.Status.PUBLISHED,
                )
            )
        return rows
    batches = Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD)
    if batch is not None:
        batches = batches.filter(pk=batch.pk)
    rows = []
    for b in batches:
        counts = Assignment.objects.filter(hit__batch=b).aggregate(
            done=Count("pk", filter=Q(status__in=Assignment.COUNTED)),
            assigned=Count("pk", filter=Q(status=Assignment.Status.ASSIGNED)),
            rejected=Count("pk", filter=Q(status=Assignment.Status.REJECTED)),
            recent=Count("pk", filter=Q(submitted_at__gte=since.replace(second=0, microsecond=0))),
        )
        rows.append((b.assignments_per_hit, b.hits.count(), *counts.values(), b.status == Batch.Status.PUBLISHED))
    return rows


def progress(dataset, batch=None, tallied=None) -> dict:
    """Places done, in progress and left over the crowd batches, and an estimated finish
    from the rate of the last hour (counted by the minute). On PostgreSQL from the batches' tallies
    (one query for a round, two for a dataset), whatever their size and the rest of the database."""
    now = timezone.now()
    rows = _progress_rows(dataset, batch, now - RATE_WINDOW, tallied)
    total_places = sum(per_hit * hits for per_hit, hits, *_ in rows)
    hits, done, in_progress, rejected, recent = (sum(r[i] for r in rows) for i in range(1, 6))
    left = max(0, total_places - done - in_progress)
    # An estimated finish only for the work still handed out: stopped or complete batches have none.
    open_work = sum(max(0, per_hit * n - d - a) + a for per_hit, n, d, a, _r, _s, handed_out in rows if handed_out)
    eta = None
    rate = recent / RATE_WINDOW.total_seconds() if recent else 0
    if rate and open_work:
        eta = now + timedelta(seconds=open_work / rate)
    return {
        "batches": len(rows),
        "hits": hits,
        "places": total_places,
        "done": done,
        "in_progress": in_progress,
        "left": left,
        "rejected": rejected,
        "per_hour": recent,
        "eta": eta,
        "percent": round(100 * done / total_places, 1) if total_places else 0,
    }


def spend(dataset, batch=None, tallied=None) -> dict:
    """Ledger totals by kind over the batches in scope, and the crowd batches' budget."""
    totals = {k: Decimal("0.00") for k in LedgerEntry.Kind.values}
    if tallies.available():
        budget = None
        for entry in (tallied if tallied is not None else _tallied(dataset, batch, timezone.now())).values():
            for what, (_, amount) in entry["counts"].items():
                if what.startswith(tallies.LEDGER):
                    totals[what.removeprefix(tallies.LEDGER)] += amount
            if entry["kind"] == Batch.Kind.CROWD and entry["budget"] is not None:
                budget = (budget or Decimal("0.00")) + entry["budget"]
    else:
        batches = Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD)
        entries = LedgerEntry.objects.filter(batch__dataset=dataset)
        if batch is not None:
            batches, entries = batches.filter(pk=batch.pk), entries.filter(batch=batch)
        for kind, amount in entries.values_list("kind").annotate(total=Sum("amount")).order_by():
            totals[kind] = amount
        budget = batches.aggregate(b=Sum("budget"))["b"]
    totals["total"] = sum(totals.values(), Decimal("0.00"))
    totals["budget"] = budget
    totals["share"] = round(100 * float(totals["total"] / budget), 1) if budget else None
    return totals


def authoring_states(dataset) -> list[dict]:
    """References per authoring state (`annotation.authoring.authoring_overview(...)["states"]`,
    without the per-author rows, draft times and budget the overview page does not show), from
    `annotation.selectors.reference_states` (on PostgreSQL the dataset's tallies)."""
    labels = dict(Reference.Status.choices)
    return [{"status": s, "label": labels[s], "count": n} for s, n in reference_states(dataset).items()]


def scope_rows(dataset_id: int, round_id: int | None) -> tuple[Dataset | None, Batch | None]:
    """The dataset and (with `round_id`) its round of a dashboard request, None each when there is
    no such row: written SQL (plain, any database), as the ORM's compile of the two lookups and the
    join of Batch's default order cost a millisecond of every dashboard request."""
    dataset = next(iter(Dataset.objects.raw(f"SELECT * FROM {_table(Dataset)} WHERE id = %s", [dataset_id])), None)
    if dataset is None or round_id is None:
        return dataset, None
    batch = next(
        iter(
            Batch.objects.raw(
                f"SELECT * FROM {_table(Batch)} WHERE id = %s AND dataset_id = %s", [round_id, dataset_id]
            )
        ),
        None,
    )
    return dataset, batch


def latest_of_kind(dataset, batch, kind: str) -> ScoringRun | None:
    """The scope's latest run of `kind` (power analysis, metric correlations), whatever its status:
    written SQL (plain, any database) in the order of ScoringRun.Meta."""
    scope = "batch_id = %s" if batch else "batch_id IS NULL"
    sql = (
        f"SELECT * FROM {_table(ScoringRun)} WHERE dataset_id = %s AND {scope} AND kind = %s"
        " ORDER BY started_at DESC, id DESC LIMIT 1"
    )
    return next(iter(ScoringRun.objects.raw(sql, [dataset.pk, *([batch.pk] if batch else []), kind])), None)


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def round_choices(dataset) -> list[dict]:
    """The round picker's rounds (the crowd and imported batches, oldest first) as {pk, name}."""
    return list(dataset.batches.exclude(kind=Batch.Kind.MACHINE).order_by("created_at", "pk").values("pk", "name"))


def systems_page(run, documents: str, machine_scores: dict) -> dict:
    """What the systems page shows of a run beyond the parts read with it (`SYSTEMS_HEAD`): the
    leaderboard and matrix (`leaderboard.systems_view`), with each system's machine scores, their
    chart, the length scatter and normalization. Read and built only when the page's fragments of
    this run are not cached (templates/scoring/systems.html)."""
    rest = tuple(p for p in leaderboard.SYSTEMS_PARTS if p not in run.outputs)
    out = {**run.outputs, **run_parts(run.pk, rest)}
    view = leaderboard.systems_view(out, documents)
    return {
        **view,
        "systems": [(name, s, machine_scores.get(name, [])) for name, s in view["systems"]],
        "leaderboard_chart": charts.leaderboard(view["shown_systems"]) if view["shown_systems"] else None,
        "scatter_chart": charts.stored_length_scatter(out["length_scatter"]) if out.get("length_scatter") else None,
        "normalization": out.get("length_normalization"),
    }


def workers_table(run) -> dict:
    """The run's stored workers table (its "workers" part: rows, flagged, alpha without the flagged),
    each row with the texts of its number cells (`worker_pages.shown`), cached by run: the page
    reads it on every request, sorted and paged per request."""
    if run is None:
        return {}

    def table() -> dict:
        stored = run_parts(run.pk, ("workers",)).get("workers", {})
        if not stored.get("rows"):
            return stored
        return {**stored, "rows": [{**r, "shown": worker_pages.shown(r)} for r in stored["rows"]]}

    return caches["pages"].get_or_set(f"dashboard:workers:{run.pk}", table, RUN_CACHE_SECONDS)


def trend_chart(dataset, batch, run) -> dict:
    """The agreement trend chart of the scope (`alpha_trend` through `charts.alpha_trend`), cached
    by the scope's latest run: it changes when a newer run is the latest. (A run that finishes after
    a newer one started enters the chart with the next run.)"""
    return caches["pages"].get_or_set(
        f"dashboard:trend:{dataset.pk}:{batch.pk if batch else 0}:{run.pk if run else 0}",
        lambda: charts.alpha_trend(alpha_trend(dataset, batch), ROSE_ALPHA),
        RUN_CACHE_SECONDS,
    )


def overview(dataset, batch=None) -> dict:
    run, stale = scores_run(dataset, batch, parts=("alpha",))
    alpha = run.outputs.get("alpha") if run else None
    # One read of the scope's tallies for both cards (spend ignores the per-minute counts).
    tallied = _tallied(dataset, batch, timezone.now() - RATE_WINDOW) if tallies.available() else None
    return {
        "progress": progress(dataset, batch, tallied),
        "spend": spend(dataset, batch, tallied),
        "authoring": authoring_states(dataset),
        "alpha": alpha,
        "rose_alpha": ROSE_ALPHA,
        "trend_chart": trend_chart(dataset, batch, run),
        "run": run.pk if run else None,
        "run_at": run.finished_at.isoformat() if run and run.finished_at else None,
        "stale": stale,
    }
