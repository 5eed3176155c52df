"""Reads of stored scoring runs: the latest run of a scope, the agreement trend, a run's large parts.

Selectors: they never write. Every page, API view, command and poll reads runs through here.
"""

from django.db.models import BigIntegerField, IntegerField, OuterRef, Subquery, Value
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast, Coalesce

from hits import versions
from scoring.models import ScoringRun, ScoringRunDetail


def _current_version(dataset, batch):
    """The scope's version of the counted judgments as an expression (`hits.versions.version_of` as
    a subquery), so the run and its staleness check cost one query."""
    version = versions.version_of(dataset.pk, batch.pk if batch else None)
    return Coalesce(Subquery(version, output_field=BigIntegerField()), Value(0))


def latest_run(
    dataset, batch=None, kind: str = ScoringRun.Kind.SCORES, parts: tuple[str, ...] | None = None
) -> ScoringRun | None:
    """The latest finished run of a scope that the pages show: majority aggregation (a Dawid-Skene
    run made with ``compute_scores --aggregation dawid-skene`` is kept, but the pages stay on
    majority). With `parts` only those top-level keys of its outputs are read into `run.outputs`
    (JSON key lookups, e.g. the overview's "alpha"; a large part, `ScoringRunDetail.PARTS`, from its detail
    row by primary key); `run.current_version` is the scope's version of the judgments now, read
    in the same query."""
    runs = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind=kind, status=ScoringRun.Status.DONE)
    if kind == ScoringRun.Kind.SCORES:
        runs = runs.exclude(parameters__aggregation="dawid-skene")
    # NOTE: the one latest run is found first (its id), then read: in the ordered query itself the
    # parts could be read of every run sorted.
    latest = ScoringRun.objects.filter(pk=Subquery(runs.values("pk")[:1]))
    latest = latest.annotate(current_version=_current_version(dataset, batch))
    if parts is not None:
        latest = _with_parts(latest, parts)
    run = latest.first()
    if run is not None and parts is not None:
        run.outputs = _parts_of(run, parts)
    return run


def _with_parts(runs, parts: tuple[str, ...]):
    """`runs` without their whole outputs, each of `parts` annotated as part_<name> (a JSON key
    lookup, or a large part's column of its detail row)."""
    detail = ScoringRunDetail.objects.filter(run_id=OuterRef("pk"))
    return runs.defer("outputs").annotate(
        **{
            f"part_{p}": Subquery(detail.values(p)) if p in ScoringRunDetail.PARTS else KeyTransform(p, "outputs")
            for p in parts
        }
    )


def _parts_of(run: ScoringRun, parts: tuple[str, ...]) -> dict:
    return {p: getattr(run, f"part_{p}") for p in parts if getattr(run, f"part_{p}") is not None}


def run_parts(run_id: int, parts: tuple[str, ...]) -> dict:
    """The `parts` of one run's outputs, as `latest_run(parts=...)` reads them into `run.outputs`
    (a page reads its small parts with the run and the others only when it renders them)."""
    run = _with_parts(ScoringRun.objects.filter(pk=run_id), parts).first()
    return _parts_of(run, parts) if run is not None else {}


def run_part(run: ScoringRun, part: str) -> dict:
    """One large part of a scores run (`ScoringRunDetail.PARTS`: "summaries", "workers", "length_scatter");
    empty for a run without it (another kind of run)."""
    values = ScoringRunDetail.objects.filter(run_id=run.pk).values_list(part, flat=True).first()
    return values or {}


def run_summaries(run: ScoringRun) -> dict:
    """The per-summary values of a scores run ({ids, acu, normalized_acu, words}, parallel lists);
    empty for a run without them (no judged summary, or another kind of run)."""
    return run_part(run, "summaries")


def alpha_trend(dataset, batch=None, limit: int = 200) -> list[dict]:
    """Both alphas of the scope's newest `limit` finished scores runs, oldest first, as {run, at,
    acu_level, summary_level, judgments}: each run's "alpha" read by one JSON key lookup.

    NOTE: PostgreSQL reads (fetches and decompresses) a run's whole outputs for each key looked up
    in it: one lookup per run, its two numbers picked here, not two in the query."""
    runs = ScoringRun.objects.filter(
        dataset=dataset, batch=batch, kind=ScoringRun.Kind.SCORES, status=ScoringRun.Status.DONE
    ).order_by("-started_at", "-pk")
    rows = runs.annotate(
        alpha=KeyTransform("alpha", "outputs"),
        judgments=Cast(KeyTextTransform("judgments", "inputs"), IntegerField()),
    ).values_list("pk", "started_at", "alpha", "judgments")[:limit]
    return [
        {
            "run": pk,
            "at": at.isoformat(),
            "acu_level": _number((alpha or {}).get("acu_level")),
            "summary_level": _number((alpha or {}).get("summary_level")),
            "judgments": n,
        }
        for pk, at, alpha, n in reversed(list(rows))
    ]


def _number(value) -> float | None:
    return None if value is None else float(value)
