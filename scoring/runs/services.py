"""Scoring runs: read judgments, compute with the pure numerical core, store the run.

Definitions: shared/design/scoring.md. Each run records its inputs (round, excluded workers,
counts and the last judgment id read), parameters (seed, resamples, length alpha, aggregation)
and outputs. A system's score, its CI and its ``documents`` come from the documents that system
was judged on; a paired test uses the documents both systems share and stores that n; when
systems were judged on different documents the run also holds the comparison on the documents
judged for every system (``common``). Labels are the majority vote (RoSE) or Dawid-Skene;
every run also stores the system scores under the other aggregation for comparison. A round of an
adaptive or `pairs` batch is labelled by its pairs' posteriors (scoring.runs.pairs).
"""

import logging
import math
import time

import numpy as np
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from hits import versions
from hits.models import Worker
from hits.selectors import counted_judgments
from scoring.models import ScoringRun, ScoringRunDetail
from scoring.runs.data import load_judgments, load_summaries
from scoring.runs.pairs import posterior_labelled, with_posterior_labels
from scoring.runs.selectors import latest_run
from scoring.runs.workers import worker_table
from scoring.stats import agreement, bootstrap, dawid_skene, normalization
from scoring.stats.aggregation import acu_labels, acu_scores_by_summary, normalized_acu_score
from scoring.stats.multiple_testing import family_resamples

DEFAULT_RESAMPLES = 10_000
AGGREGATIONS = ("majority", "dawid-skene")
SMALL_SAMPLE = 30  # fewer documents than this behind a comparison: the pages warn
ROUNDING = 1e-12  # a score this close outside its interval is summation order, not statistics
SCATTER_SAMPLE = 1500  # points of the score-against-length scatter (of 22,000 summaries of a RoSE round)
SCATTER_DIGITS = 4  # a score on the chart's 0-1 axis to 1/10,000: far below a pixel, a third of the bytes

logger = logging.getLogger(__name__)


def json_safe(value):
    """JSON-safe numbers, recursively: NaN or infinity (an undefined alpha, say) becomes null."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def signature(dataset, batch=None) -> int:
    """The version of the counted judgments of the dataset (or one round): bumped in the same
    transaction as every submission, rejection, exclusion and provider confirmation
    (`hits.versions`), so reading it is one indexed row whatever the size of the database."""
    return versions.current(dataset.pk, batch.pk if batch else None)


def _inputs(dataset, batch, judgments, version: int) -> dict:
    if judgments.ids is not None:
        last = int(judgments.ids.max()) if len(judgments) else None
    else:
        last = counted_judgments(dataset, batch).aggregate(last=Max("pk"))["last"]
    # Sorted in Python: code points, not the database's collation.
    excluded = sorted(
        Worker.objects.filter(excluded=True, assignments__hit__batch__dataset=dataset)
        .order_by()
        .distinct()
        .values_list("external_id", flat=True)
    )
    return {
        "round": batch.pk if batch else None,
        "judgments": len(judgments),
        "last_judgment_id": last,
        "version": version,
        "excluded_workers": excluded,
    }


def scored_judgments(batch, judgments):
    """The votes a round's labels are read from: an adaptive or `pairs` round's, each pair's posterior
    label (scoring.runs.pairs.posterior_labelled); a triage round's, the machine's label where the machine
    decided; any other's, the judgments themselves (the alphas always read the human ones)."""
    scored = judgments
    if posterior_labelled(batch) and len(judgments):
        scored = with_posterior_labels(batch, judgments)
    if batch is not None and batch.machine_decides:
        from scoring.runs.triage import with_machine_labels

        scored = with_machine_labels(batch, scored)
    return scored


def summary_scores_arrays(dataset, batch=None, judgments=None, aggregation: str = "majority"):
    """Per judged summary: positions in the summary table, ACU score and normalized score.

    ``aggregation`` turns the judgments into ACU labels: "majority" (a tie is not present, RoSE)
    or "dawid-skene" (``scoring.dawid_skene``). An adaptive or `pairs` round's labels are its pairs'
    posteriors (scoring.runs.pairs), a triage round's the machine's where it decided (scoring.runs.triage)."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {aggregation!r}; use one of: {', '.join(AGGREGATIONS)}")
    table = load_summaries(dataset)
    if judgments is None:
        judgments = load_judgments(dataset, batch)
    pos, scores, normalized = _scored_arrays(dataset, table, scored_judgments(batch, judgments), aggregation)
    return table, judgments, pos, scores, normalized


def _scored_arrays(dataset, table, scored, aggregation: str):
    """(positions, ACU scores, normalized scores) of the summaries ``scored`` (the round's votes,
    ``scored_judgments``) labels under ``aggregation``."""
    if len(scored) == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0), np.zeros(0)
    rows = table.index(scored.summary)
    if aggregation == "dawid-skene":
        summaries, scores = dawid_skene.acu_scores_by_summary(
            scored.summary, scored.acu, scored.worker, scored.present, table.acu_count[rows]
        )
    else:
        summaries, scores = acu_scores_by_summary(
            scored.summary, scored.acu, scored.present, acu_counts=table.acu_count[rows]
        )
    pos = table.index(summaries)
    normalized = normalized_acu_score(scores, table.words[pos], table.reference_words[pos], dataset.length_alpha)
    return pos, scores, normalized


def compute_scores(
    dataset,
    batch=None,
    *,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    trigger: str = "",
    aggregation: str = "majority",
) -> ScoringRun:
    """System ACU and normalized scores with bootstrap CIs, both alphas, paired tests."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {aggregation!r}; use one of: {', '.join(AGGREGATIONS)}")
    started = time.perf_counter()
    run = ScoringRun.objects.create(
        dataset=dataset,
        batch=batch,
        kind=ScoringRun.Kind.SCORES,
        trigger=trigger,
        parameters={
            "seed": seed,
            "n_resamples": n_resamples,
            "length_alpha": dataset.length_alpha,
            "aggregation": aggregation,
        },
    )
    try:
        outputs, run.inputs = _scores(dataset, batch, seed, n_resamples, aggregation)
        outputs = json_safe(outputs)
        detail = ScoringRunDetail(**{part: outputs.pop(part) for part in ScoringRunDetail.PARTS})
        run.outputs = outputs
        run.status = ScoringRun.Status.DONE
    except Exception as exc:
        run.status, run.error = ScoringRun.Status.FAILED, f"{type(exc).__name__}: {exc}"
        raise
    finally:
        run.finished_at, run.seconds, run.progress = timezone.now(), time.perf_counter() - started, 1.0
        with transaction.atomic():  # a finished run is never seen without its large parts
            if run.status == ScoringRun.Status.DONE:
                detail.run = run
                detail.save(force_insert=True)
            run.save()
    return run


def scatter_step(n: int, sample: int = SCATTER_SAMPLE) -> int:
    """Every step-th summary is drawn (about `sample` of them)."""
    return max(1, n // sample)


def scatter_sample(words: list, acu: list, normalized: list, sample: int = SCATTER_SAMPLE) -> dict:
    """The summaries the systems page's scatter draws (every `scatter_step`-th), scores rounded to
    `SCATTER_DIGITS`: what a scores run stores as its small "length_scatter" part (a page never
    reads the per-summary values)."""
    step = scatter_step(len(words), sample)

    def rounded(values):
        return [None if v is None else round(v, SCATTER_DIGITS) for v in values[::step]]

    return {"words": list(words[::step]), "acu": rounded(acu), "normalized_acu": rounded(normalized)}


def document_mean(table, pos, mine, values) -> float:
    """Mean of one system's summary values, summed in document order (reproducible to the bit)."""
    order = np.argsort([table.document_position[d] for d in table.document[pos][mine].tolist()], kind="stable")
    return float(np.mean(values[mine][order]))


def system_matrix(table, pos, values):
    """documents x systems matrix over the documents every system was judged on."""
    systems, docs, matrix = partial_matrix(table, pos, values)
    keep = ~np.isnan(matrix).any(axis=1)
    return systems, [d for d, k in zip(docs, keep.tolist(), strict=False) if k], matrix[keep]


def partial_matrix(table, pos, values):
    """(systems, documents, documents x systems matrix) over every judged document, NaN where
    a system was not judged; documents and systems sorted by id."""
    system_of, document_of = table.system[pos], table.document[pos]
    systems = np.unique(system_of)
    docs = np.unique(document_of)
    matrix = np.full((len(docs), len(systems)), np.nan)
    matrix[np.searchsorted(docs, document_of), np.searchsorted(systems, system_of)] = values
    return systems, docs.tolist(), matrix


def _interval(low, high, score):
    """[low, high] as floats, widened by at most ``ROUNDING`` to hold ``score`` (the score is
    summed in document order, the resamples by a matrix product: the last bit may differ)."""
    if np.isnan(low) or np.isnan(high):
        return None
    low, high = float(low), float(high)
    if low - ROUNDING <= score < low:
        low = score
    if high < score <= high + ROUNDING:
        high = score
    return [low, high]


def _length_choice(dataset, scores, words, reference_words):
    """The grid search for alpha, and whether its best value is at the grid's edge."""
    grid = normalization.DEFAULT_GRID
    try:
        best_alpha, correlations = normalization.choose_alpha(scores, words, reference_words, grid)
    except ValueError as exc:
        return {
            "chosen": dataset.length_alpha,
            "least_correlated": None,
            "correlations": [],
            "at_grid_edge": None,
            "note": str(exc),
        }
    edge = normalization.grid_edge(best_alpha, grid)
    if edge:
        logger.info(
            "dataset %s: the least length-correlated alpha %s is at the %s edge of the grid %s",
            dataset.pk,
            best_alpha,
            edge,
            grid,
        )
    return {
        "chosen": dataset.length_alpha,
        "least_correlated": json_safe(float(best_alpha)),
        "correlations": [[a, json_safe(float(c))] for a, c in zip(grid, correlations, strict=False)],
        "at_grid_edge": edge,
        "grid": list(grid),
    }


def _system_rows(names, means, low, high, norm_means, norm_low, norm_high):
    return {
        name: {
            "acu": float(means[i]),
            "acu_ci": _interval(low[i], high[i], float(means[i])),
            "normalized_acu": float(norm_means[i]),
            "normalized_acu_ci": _interval(norm_low[i], norm_high[i], float(norm_means[i])),
        }
        for i, name in enumerate(names)
    }


def _other_aggregation(table, judgments, primary: str, systems_out: dict) -> dict:
    """System scores under both aggregations (majority and Dawid-Skene), their difference and
    how many (summary, ACU) labels the two disagree on. ``judgments`` are the votes the round's
    labels are read from (``scored_judgments``: a triage round's machine labels, an adaptive or
    pairs round's posteriors), so the primary aggregation's column is the leaderboard's score."""
    summaries, _, majority, _, _ = acu_labels(judgments.summary, judgments.acu, judgments.present)
    _, _, ds_labels, fit = dawid_skene.pair_labels(
        judgments.summary, judgments.acu, judgments.worker, judgments.present
    )
    pair_summary, keys = np.unique(summaries, return_inverse=True)[1], np.unique(summaries)
    pos = table.index(keys)
    by_aggregation = {}
    for name, labels in (("majority", majority), ("dawid-skene", ds_labels)):
        present = np.bincount(pair_summary.ravel(), weights=labels.astype(float), minlength=len(keys))
        scores = present / table.acu_count[pos]
        by_aggregation[name] = {
            table.system_names[sid]: document_mean(table, pos, table.system[pos] == sid, scores)
            for sid in np.unique(table.system[pos]).tolist()
        }
    rows = {}
    for name in systems_out:
        m, d = by_aggregation["majority"].get(name), by_aggregation["dawid-skene"].get(name)
        rows[name] = {"majority": m, "dawid-skene": d, "difference": None if m is None or d is None else d - m}
    return {
        "primary": primary,
        "systems": rows,
        "labels": int(len(majority)),
        "labels_changed": int(np.count_nonzero(majority != ds_labels)),
        "iterations": fit.iterations,
        "converged": fit.converged,
    }


def system_figures(table, pos, scores, normalized, n_resamples: int, rng) -> dict:
    """Each system's scores with their CIs on its own judged documents, the paired tests on the
    documents each pair shares, and the comparison on the documents judged for every system
    when coverage differs (``common``)."""
    systems, docs, acu_matrix = partial_matrix(table, pos, scores)
    _, _, norm_matrix = partial_matrix(table, pos, normalized)
    names = [table.system_names[s] for s in systems.tolist()]
    # Each system on its own judged documents: score, CI and n agree.
    _, acu_low, acu_high, n = bootstrap.system_cis_partial(acu_matrix, n_resamples=n_resamples, rng=rng)
    _, norm_low, norm_high, _ = bootstrap.system_cis_partial(norm_matrix, n_resamples=n_resamples, rng=rng)
    pairwise = None
    # The paired tests draw enough resamples for the Holm-adjusted matrix to resolve its family.
    pair_resamples = family_resamples(len(systems) * (len(systems) - 1) // 2, n_resamples)
    if len(systems) > 1:
        p, pair_n = bootstrap.paired_bootstrap_partial(acu_matrix, n_resamples=pair_resamples, rng=rng)
        pairwise = {
            "systems": names,
            "p": p.tolist(),
            "n": pair_n.tolist(),
            "documents": "shared",
            "resamples": pair_resamples,
        }
    complete = ~np.isnan(acu_matrix).any(axis=1)
    complete_docs = [d for d, k in zip(docs, complete.tolist(), strict=False) if k]
    documents_differ = bool((n != len(complete_docs)).any())
    systems_out = {}
    for i, (sid, name) in enumerate(zip(systems.tolist(), names, strict=False)):
        mine = table.system[pos] == sid
        acu = document_mean(table, pos, mine, scores)  # in document order, reproducible to the bit
        norm = document_mean(table, pos, mine, normalized)
        systems_out[name] = {
            "acu": acu,
            "normalized_acu": norm,
            "acu_ci": _interval(acu_low[i], acu_high[i], acu),
            "normalized_acu_ci": _interval(norm_low[i], norm_high[i], norm),
            "length": float(np.mean(table.words[pos][mine])),
            "documents": int(n[i]),
        }
    common = None
    if documents_differ and complete_docs:
        common = _common_comparison(
            names, acu_matrix[complete], norm_matrix[complete], n_resamples, pair_resamples, rng
        )
    return {
        "systems": systems_out,
        "pairwise": pairwise,
        "common": common,
        "complete_documents": len(complete_docs),
        "documents_differ": documents_differ,
    }


def _common_comparison(names, sub, norm_sub, n_resamples: int, pair_resamples: int, rng) -> dict:
    """The comparison on the documents judged for every system, offered beside the partial one."""
    means, low, high = bootstrap.system_cis(sub, n_resamples=n_resamples, rng=rng)
    nmeans, nlow, nhigh = bootstrap.system_cis(norm_sub, n_resamples=n_resamples, rng=rng)
    common = {"documents": len(sub), "systems": _system_rows(names, means, low, high, nmeans, nlow, nhigh)}
    if len(names) > 1:
        common["pairwise"] = {
            "systems": names,
            "p": bootstrap.paired_bootstrap(sub, n_resamples=pair_resamples, rng=rng).tolist(),
            "resamples": pair_resamples,
        }
    return common


def _alpha_units(table, judgments) -> dict:
    """The n of each alpha: (summary, ACU) pairs judged twice or more, summaries with two or more
    workers' scores (0 without judgments)."""
    if not len(judgments):
        return {"acu_level": 0, "summary_level": 0}
    rows = table.index(judgments.summary)
    return {
        "acu_level": agreement.acu_level_units(judgments.summary, judgments.acu),
        "summary_level": agreement.summary_level_units(
            judgments.summary, judgments.acu, judgments.worker, judgments.present, acu_counts=table.acu_count[rows]
        ),
    }


def _alphas(table, judgments) -> dict:
    """Both alphas over the counted judgments (None without judgments)."""
    if not len(judgments):
        return {"acu_level": None, "summary_level": None}
    rows = table.index(judgments.summary)
    return {
        "acu_level": json_safe(
            agreement.acu_level_alpha(judgments.summary, judgments.acu, judgments.worker, judgments.present)
        ),
        "summary_level": json_safe(
            agreement.summary_level_alpha(
                judgments.summary, judgments.acu, judgments.worker, judgments.present, acu_counts=table.acu_count[rows]
            )
        ),
    }


def _counts(table, pos, judgments, figures: dict, batch) -> dict:
    per_system = [s["documents"] for s in figures["systems"].values()]
    counts = {
        "judgments": len(judgments),
        "summaries": int(len(pos)),
        "documents": int(len(np.unique(table.document[pos]))) if len(pos) else 0,
        "complete_documents": figures["complete_documents"],
        "documents_differ": figures["documents_differ"],
        "fewest_documents": min(per_system) if per_system else 0,
        "small_sample": bool(per_system) and min(per_system) < SMALL_SAMPLE,
        "systems": len(figures["systems"]),
        "workers": int(len(np.unique(judgments.worker))) if len(judgments) else 0,
    }
    if batch is not None and batch.machine_decides:
        from scoring.runs.triage import decided_share

        counts["machine_decided"] = decided_share(batch)
    return counts


def _scores(dataset, batch, seed: int, n_resamples: int, aggregation: str = "majority"):
    version = signature(dataset, batch)  # read first: a change after it makes this run stale, never lost
    everyone = load_judgments(dataset, batch, include_excluded=True)
    judgments = everyone.subset(~everyone.excluded)
    table = load_summaries(dataset)
    scored = scored_judgments(batch, judgments)
    pos, scores, normalized = _scored_arrays(dataset, table, scored, aggregation)
    inputs = _inputs(dataset, batch, judgments, version)
    rng = np.random.default_rng(seed)
    figures = {"systems": {}, "pairwise": None, "common": None, "complete_documents": 0, "documents_differ": False}
    length_choice, comparison = None, None
    if len(pos):
        figures = system_figures(table, pos, scores, normalized, n_resamples, rng)
        length_choice = _length_choice(dataset, scores, table.words[pos], table.reference_words[pos])
        comparison = _other_aggregation(table, scored, aggregation, figures["systems"])
    alphas = _alphas(table, judgments)
    summaries = {
        "ids": table.ids[pos].tolist(),
        "acu": scores.tolist(),
        "normalized_acu": normalized.tolist(),
        "words": table.words[pos].tolist(),
    }
    all_rows = table.index(everyone.summary) if len(everyone) else np.zeros(0, dtype=np.intp)
    outputs = {
        "workers": worker_table(dataset, batch, everyone, table.acu_count[all_rows], counted_alpha=alphas),
        "aggregation": aggregation,
        "systems": figures["systems"],
        "alpha": alphas,
        "alpha_units": _alpha_units(table, judgments),
        "counts": _counts(table, pos, judgments, figures, batch),
        "pairwise": figures["pairwise"],
        "common": figures["common"],
        "aggregations": comparison,
        "length_normalization": length_choice,
        # Per summary, for the exports (0.9 MB at 22,000 summaries): stored in ScoringRunDetail.
        "summaries": summaries,
        # The few thousand of them the systems page draws (a page never samples the 0.9 MB).
        "length_scatter": scatter_sample(summaries["words"], summaries["acu"], summaries["normalized_acu"]),
    }
    return outputs, inputs


def is_stale(run: ScoringRun | None, dataset, batch=None, current: int | None = None) -> bool:
    """Whether the counted judgments (or exclusions) or the dataset's alpha changed since the run.
    `current`: the scope's version of the judgments if just read (with the run: `selectors.latest_run`)."""
    if run is None or run.parameters.get("length_alpha", dataset.length_alpha) != dataset.length_alpha:
        return True
    return run.inputs.get("version") != (signature(dataset, batch) if current is None else current)


def current_scores(dataset, batch=None, trigger: str = "page", parts: tuple[str, ...] | None = None) -> ScoringRun:
    """The latest run if still current (with `parts`: only those of its outputs read), otherwise
    a fresh one."""
    run = latest_run(dataset, batch, parts=parts)
    if is_stale(run, dataset, batch, current=run.current_version if run else None):
        return compute_scores(dataset, batch, trigger=trigger)
    return run
