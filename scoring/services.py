"""Scoring runs: read judgments, compute with the pure numerical core, store the run.

Definitions: shared/design/scoring.md. Each run records its inputs (round, excluded workers,
counts and the last judgment id read), parameters (seed, resamples) and outputs.
"""
import math
import time

import numpy as np
from django.db.models import Max
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from hits import versions
from hits.models import Worker

from .stats import agreement, bootstrap, normalization
from .stats.aggregation import acu_scores_by_summary, normalized_acu_score
from .data import load_judgments, load_summaries
from .judgments import counted_judgments
from .models import ScoringRun
from .workers import worker_table

DEFAULT_RESAMPLES = 10_000


def _clean(value):
    """JSON-safe numbers, recursively: NaN or infinity (an undefined alpha, say) becomes null."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def signature(dataset, batch=None) -> int:
    """The version of the counted judgments of the dataset (or one round): bumped in the same
    transaction as every submission, rejection, exclusion and provider confirmation
    (`hits.versions`), so reading it is one indexed row whatever the size of the database."""
    return versions.current(dataset.pk, batch.pk if batch else None)


def _inputs(dataset, batch, judgments, version: int) -> dict:
    last = counted_judgments(dataset, batch).aggregate(last=Max("pk"))["last"]
    return {
        "round": batch.pk if batch else None,
        "judgments": len(judgments),
        "last_judgment_id": last,
        "version": version,
        "excluded_workers": sorted(
            Worker.objects.filter(excluded=True, assignments__hit__batch__dataset=dataset).distinct().values_list("external_id", flat=True)
        ),
    }


def summary_scores_arrays(dataset, batch=None, judgments=None):
    """Per judged summary: positions in the summary table, ACU score and normalized score."""
    table = load_summaries(dataset)
    if judgments is None:
        judgments = load_judgments(dataset, batch)
    if len(judgments) == 0:
        return table, judgments, np.zeros(0, dtype=np.intp), np.zeros(0), np.zeros(0)
    rows = table.index(judgments.summary)
    summaries, scores = acu_scores_by_summary(
        judgments.summary, judgments.acu, judgments.present, acu_counts=table.acu_count[rows]
    )
    pos = table.index(summaries)
    normalized = normalized_acu_score(scores, table.words[pos], table.reference_words[pos], dataset.length_alpha)
    return table, judgments, pos, scores, normalized


def compute_scores(dataset, batch=None, *, seed: int = 0, n_resamples: int = DEFAULT_RESAMPLES, trigger: str = "") -> ScoringRun:
    """System ACU and normalized scores with bootstrap CIs, both alphas, paired tests."""
    started = time.perf_counter()
    run = ScoringRun.objects.create(
        dataset=dataset, batch=batch, kind=ScoringRun.Kind.SCORES, trigger=trigger,
        parameters={"seed": seed, "n_resamples": n_resamples, "length_alpha": dataset.length_alpha},
    )
    try:
        outputs, run.inputs = _scores(dataset, batch, seed, n_resamples)
        run.outputs = _clean(outputs)
        run.status = ScoringRun.Status.DONE
    except Exception as exc:  # noqa: BLE001 - the failure is stored on the run and re-raised
        run.status, run.error = ScoringRun.Status.FAILED, f"{type(exc).__name__}: {exc}"
        raise
    finally:
        run.finished_at, run.seconds, run.progress = timezone.now(), time.perf_counter() - started, 1.0
        run.save()
    return run


def _document_mean(table, pos, mine, values) -> float:
    """Mean of one system's summary values, summed in document order (reproducible to the bit)."""
    order = np.argsort([table.document_position[d] for d in table.document[pos][mine].tolist()], kind="stable")
    return float(np.mean(values[mine][order]))


def _system_matrix(table, pos, values):
    """documents x systems matrix over the documents every system was judged on."""
    systems = np.unique(table.system[pos])
    docs_per_system = [set(table.document[pos][table.system[pos] == s].tolist()) for s in systems]
    complete = sorted(set.intersection(*docs_per_system)) if docs_per_system else []
    index = {(d, s): i for i, (d, s) in enumerate(zip(table.document[pos].tolist(), table.system[pos].tolist()))}
    matrix = np.array([[values[index[(d, s)]] for s in systems.tolist()] for d in complete], dtype=float)
    return systems, complete, matrix.reshape(len(complete), len(systems))


def _scores(dataset, batch, seed: int, n_resamples: int):
    version = signature(dataset, batch)  # read first: a change after it makes this run stale, never lost
    everyone = load_judgments(dataset, batch, include_excluded=True)
    table, judgments, pos, scores, normalized = summary_scores_arrays(dataset, batch, everyone.subset(~everyone.excluded))
    inputs = _inputs(dataset, batch, judgments, version)
    rng = np.random.default_rng(seed)
    systems_out, pairwise = {}, None
    if len(pos):
        systems, complete_docs, acu_matrix = _system_matrix(table, pos, scores)
        _, _, norm_matrix = _system_matrix(table, pos, normalized)
        names = [table.system_names[s] for s in systems.tolist()]
        if complete_docs:
            _, acu_low, acu_high = bootstrap.system_cis(acu_matrix, n_resamples=n_resamples, rng=rng)
            _, norm_low, norm_high = bootstrap.system_cis(norm_matrix, n_resamples=n_resamples, rng=rng)
            if len(systems) > 1:
                pairwise = {"systems": names, "p": bootstrap.paired_bootstrap(acu_matrix, n_resamples=n_resamples, rng=rng).tolist()}
        for i, (sid, name) in enumerate(zip(systems.tolist(), names)):
            mine = table.system[pos] == sid
            systems_out[name] = {
                # Mean over the system's judged documents, in document order.
                "acu": _document_mean(table, pos, mine, scores),
                "normalized_acu": _document_mean(table, pos, mine, normalized),
                "acu_ci": [float(acu_low[i]), float(acu_high[i])] if complete_docs else None,
                "normalized_acu_ci": [float(norm_low[i]), float(norm_high[i])] if complete_docs else None,
                "length": float(np.mean(table.words[pos][mine])),
                "documents": int(mine.sum()),
            }
        best_alpha, correlations = normalization.choose_alpha(scores, table.words[pos], table.reference_words[pos])
        length_choice = {"chosen": dataset.length_alpha, "least_correlated": _clean(float(best_alpha)),
                         "correlations": [[a, _clean(float(c))] for a, c in zip(normalization.DEFAULT_GRID, correlations)]}
    else:
        complete_docs, length_choice = [], None
    rows = table.index(judgments.summary) if len(judgments) else np.zeros(0, dtype=np.intp)
    alphas = {
        "acu_level": _clean(agreement.acu_level_alpha(judgments.summary, judgments.acu, judgments.worker, judgments.present)) if len(judgments) else None,
        "summary_level": _clean(agreement.summary_level_alpha(
            judgments.summary, judgments.acu, judgments.worker, judgments.present, acu_counts=table.acu_count[rows]
        )) if len(judgments) else None,
    }
    counts = {
        "judgments": len(judgments),
        "summaries": int(len(pos)),
        "documents": int(len(np.unique(table.document[pos]))) if len(pos) else 0,
        "complete_documents": len(complete_docs),
        "systems": len(systems_out),
        "workers": int(len(np.unique(judgments.worker))) if len(judgments) else 0,
    }
    all_rows = table.index(everyone.summary) if len(everyone) else np.zeros(0, dtype=np.intp)
    outputs = {
        "workers": worker_table(dataset, batch, everyone, table.acu_count[all_rows]),
        "systems": systems_out,
        "alpha": alphas,
        "counts": counts,
        "pairwise": pairwise,
        "length_normalization": length_choice,
        # Per summary, for the length-vs-score scatter and the exports.
        "summaries": {
            "ids": table.ids[pos].tolist(),
            "acu": scores.tolist(),
            "normalized_acu": normalized.tolist(),
            "words": table.words[pos].tolist(),
        },
    }
    return outputs, inputs


def scores_json(run: ScoringRun) -> dict:
    """The compute_scores command's JSON: systems, alpha, counts and the run id."""
    out = run.outputs
    return {
        "systems": {
            name: {k: v for k, v in s.items() if k in ("acu", "acu_ci", "normalized_acu", "normalized_acu_ci", "length")}
            for name, s in out["systems"].items()
        },
        "alpha": out["alpha"],
        "counts": out["counts"],
        "run": run.pk,
    }


def latest_run(dataset, batch=None, kind=ScoringRun.Kind.SCORES, parts: tuple[str, ...] | None = None):
    """The latest finished run; with `parts` only those top-level keys of its outputs are read
    (JSON paths in the query, e.g. the 2 kB "alpha" instead of the 0.9 MB of a RoSE round)."""
    runs = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind=kind, status=ScoringRun.Status.DONE)
    if parts is None:
        return runs.first()
    run = runs.defer("outputs").annotate(**{f"part_{p}": KeyTransform(p, "outputs") for p in parts}).first()
    if run is not None:
        run.outputs = {p: getattr(run, f"part_{p}") for p in parts if getattr(run, f"part_{p}") is not None}
    return run


def is_stale(run: ScoringRun | None, dataset, batch=None) -> bool:
    """Whether the counted judgments (or exclusions) changed since the run read them."""
    return run is None or run.inputs.get("version") != signature(dataset, batch)


def current_scores(dataset, batch=None, trigger: str = "page") -> ScoringRun:
    """The latest run if still current, otherwise a fresh one."""
    run = latest_run(dataset, batch)
    return compute_scores(dataset, batch, trigger=trigger) if is_stale(run, dataset, batch) else run

