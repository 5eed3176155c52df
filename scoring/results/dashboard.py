"""What the lead's dashboards show, read from stored runs and a few aggregate queries.

Selectors: pages, the API and live polling read the latest stored run and say when it is
stale; they write nothing. The writes that change judgments ask for the recompute
(`hits.versions.bump` -> `scoring.runs.recompute`), and a lead may ask again with a POST.
"""

from datetime import datetime

from django.core.cache import caches
from django.utils import timezone

from annotation.models import Dataset, Reference
from annotation.selectors import reference_states
from hits.models import Batch
from hits.provider_interface import money_currency
from hits.selectors import counted_judgments, figures, imported_round_counts, label_rounds
from scoring.models import ScoringRun
from scoring.results import charts, leaderboard, worker_pages
from scoring.runs.recompute import recompute_pending
from scoring.runs.selectors import alpha_trend, latest_run, run_parts
from scoring.runs.services import is_stale

ROSE_ALPHA = {"acu_level": 0.7528, "summary_level": 0.7571}  # RoSE paper, CNN/DM
# What a page derives from a finished run is cached by the run's id: a run never changes once done.
RUN_CACHE_SECONDS = 24 * 3600


def scores_run(dataset, batch=None, *, parts: tuple[str, ...] | None = None) -> tuple[ScoringRun | None, bool]:
    """(latest run, stale?), read only: a stale run's recompute was asked for by the write that
    made it stale (or is a lead's POST away). `parts`: the keys of the outputs the caller shows
    (the others are not read)."""
    run = latest_run(dataset, batch, parts=parts)
    return run, is_stale(run, dataset, batch, current=run.current_version if run else None)


def freshness(dataset, batch, run, stale: bool) -> str | None:
    """What the pages say of the scores they show; None when they are current. "empty": the scope
    has no counted judgments and no run, so there is nothing to compute yet (a draft round, a
    dataset not judged yet); "recomputing": a recompute is queued or running; "behind": the
    judgments changed since the run and no recompute is on its way (a lead's POST away)."""
    if not stale:
        return None
    if run is None and not counted_judgments(dataset, batch).exists():
        return "empty"
    return "recomputing" if recompute_pending(dataset.pk, batch.pk if batch else None) else "behind"


def authoring_states(dataset) -> list[dict]:
    """References per authoring state (`annotation.services.authoring_progress.authoring_overview(...)["states"]`,
    without the per-author rows, draft times and budget the overview page does not show), from
    `annotation.selectors.reference_states` (on PostgreSQL the dataset's tallies)."""
    labels = dict(Reference.Status.choices)
    return [{"status": s, "label": labels[s], "count": n} for s, n in reference_states(dataset).items()]


def scope_rows(dataset_id: int, round_id: int | None) -> tuple[Dataset | None, Batch | None]:
    """The dataset and (with `round_id`) its round of a dashboard request, None each when there is
    no such row."""
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if dataset is None or round_id is None:
        return dataset, None
    return dataset, Batch.objects.filter(pk=round_id, dataset=dataset).order_by().first()


def metric_table(outputs: dict, methods: tuple[str, ...]) -> list[dict]:
    """The metrics page's correlation rows: per metric and level, one cell per method in the
    header's order (``methods``). A run's outputs come back from PostgreSQL's jsonb with their keys
    reordered (kendall, pearson, spearman), so the cells are looked up by name, never by position."""
    return [
        {"metric": metric, "level": level, "cells": [by_method.get(m, {}) for m in methods]}
        for metric, levels in (outputs.get("metrics") or {}).items()
        for level, by_method in levels.items()
    ]


def latest_of_kind(dataset, batch, kind: str) -> ScoringRun | None:
    """The scope's latest run of `kind` (power analysis, metric correlations), whatever its status."""
    return ScoringRun.objects.filter(dataset=dataset, batch=batch, kind=kind).order_by("-started_at", "-id").first()


def round_choices(dataset) -> list[dict]:
    """The round picker's rounds (`hits.selectors.label_rounds`, oldest first) as {pk, name, kind}."""
    return list(label_rounds(dataset.batches.all()).order_by("created_at", "pk").values("pk", "name", "kind"))


def pools_experts(rounds: list[dict]) -> bool:
    """Whether "All judgments" pools expert labels (imported or made here) with crowd rounds: the
    expert is then one more annotator in its alphas and scores, which the pages say."""
    kinds = {r["kind"] for r in rounds}
    return bool(kinds & set(Batch.EXPERT_KINDS)) and bool(kinds - set(Batch.EXPERT_KINDS))


def systems_page(run, documents: str, machine_scores: dict, marked: str = "holm") -> dict:
    """What the systems page shows of a run beyond the parts read with it (`SYSTEMS_HEAD`): the
    leaderboard and matrix (`leaderboard.systems_view`, its cells marked at the Holm-adjusted or
    the raw p: ``marked``), with each system's machine scores, their
    chart, the length scatter and normalization. Read and built only when the page's fragments of
    this run are not cached (templates/scoring/systems.html)."""
    rest = tuple(p for p in leaderboard.SYSTEMS_PARTS if p not in run.outputs)
    out = {**run.outputs, **run_parts(run.pk, rest)}
    view = leaderboard.systems_view(out, documents, marked, run.parameters.get("n_resamples"))
    return {
        **view,
        "systems": [(name, s, machine_scores.get(name, [])) for name, s in view["systems"]],
        "leaderboard_chart": charts.leaderboard(view["shown_systems"]) if view["shown_systems"] else None,
        "scatter_chart": charts.stored_length_scatter(out["length_scatter"]) if out.get("length_scatter") else None,
        "normalization": out.get("length_normalization"),
        "methods": leaderboard.methods(
            run.parameters, len(view["matrix_names"]), view["holm_pairs"], view["pair_resamples"]
        ),
    }


def worker_currencies(run) -> dict[str, str]:
    """{provider: currency} of the run's crowd batches (the round's, or the dataset's): a worker's
    effective rate is in the money their provider pays (a Prolific account's GBP reads "£")."""
    batches = [run.batch] if run.batch_id else Batch.objects.filter(dataset_id=run.dataset_id, kind=Batch.Kind.CROWD)
    return {b.provider: money_currency(b) for b in batches}


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
        paid_in = worker_currencies(run)
        rows = []
        for r in stored["rows"]:
            currency = paid_in.get(r.get("provider"), "USD")  # their rate's and their bonus's
            rows.append({**r, "shown": worker_pages.shown(r, currency), "currency": currency})
        return {**stored, "rows": rows}

    return caches["pages"].get_or_set(f"dashboard:workers:{run.pk}", table, RUN_CACHE_SECONDS)


def trend_chart(dataset, batch, run) -> dict:
    """The agreement trend chart of the scope (`alpha_trend` through `charts.alpha_trend`), cached
    by the scope's latest run: it changes when a newer run is the latest. (A run that finishes after
    a newer one started enters the chart with the next run.) The runs' times are the site's
    (TIME_ZONE), whose name the axis carries, as every other time a page shows."""

    def chart() -> dict:
        trend = [
            {**t, "at": timezone.localtime(datetime.fromisoformat(t["at"])).isoformat()}
            for t in alpha_trend(dataset, batch)
        ]
        return charts.alpha_trend(trend, ROSE_ALPHA, zone=timezone.get_current_timezone_name())

    return caches["pages"].get_or_set(
        f"dashboard:trend:{dataset.pk}:{batch.pk if batch else 0}:{run.pk if run else 0}",
        chart,
        RUN_CACHE_SECONDS,
    )


def overview(dataset, batch=None) -> dict:
    run, stale = scores_run(dataset, batch, parts=("alpha", "alpha_units"))
    alpha = run.outputs.get("alpha") if run else None
    progress, spends = figures.scope_figures(figures.scope_batches(dataset, batch))
    imported = batch is not None and batch.kind in (Batch.Kind.IMPORTED, Batch.Kind.IMPORTED_CROWD)
    return {
        # an imported round was worked elsewhere: what it holds, not crowd progress and money
        "imported": imported_round_counts(batch) if imported else None,
        "progress": progress,
        "spends": spends,
        "authoring": authoring_states(dataset),
        "alpha": alpha,
        "alpha_units": run.outputs.get("alpha_units") if run else None,
        "rose_alpha": ROSE_ALPHA,
        "trend_chart": trend_chart(dataset, batch, run),
        "run": run.pk if run else None,
        "run_at": run.finished_at.isoformat() if run and run.finished_at else None,
        "stale": stale,
        "freshness": freshness(dataset, batch, run, stale),
    }
