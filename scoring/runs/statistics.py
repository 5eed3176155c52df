"""Heavy statistics as stored runs: power analysis and metric correlations with significance.

Each starts as a ScoringRun (status running, progress 0) that a Celery task fills in; the
dashboard polls the run's progress.
"""

import base64
import time
from itertools import combinations

import numpy as np
from django.db import transaction
from django.utils import timezone

from scoring.models import MetricScore, ScoringRun
from scoring.runs.services import SMALL_SAMPLE, json_safe, partial_matrix, summary_scores_arrays, system_matrix
from scoring.stats import correlation, metric_comparison, power

# Worker processes a split power analysis is planned for (docker-compose's worker runs with
# --concurrency 2): at RoSE's defaults ``power.power_plan`` splits n = 10,000 (72% of the work)
# in two parts of equal estimated cost and keeps every other size whole.
POWER_WORKERS = 2
POWER_DEFAULTS = {"sizes": list(power.ROSE_SIZES), "n_trials": 1000, "n_resamples": 100_000, "seed": 0}
POWER_ALPHA = 0.05  # the analysis' alpha (power.power_analysis's default), stored with its outputs
# The dashboard form's fields: (name on the page, lowest, highest).
POWER_LIMITS = {"n_trials": ("Trials", 10, 5000), "n_resamples": ("Resamples", 10, 100_000)}
METRIC_DEFAULTS = {"n_resamples": 1000, "n_permutations": 1000, "seed": 0, "method": "kendall"}
METHODS = ("pearson", "spearman", "kendall")


class PowerFormError(ValueError):
    """A power-analysis form value that is not a whole number in its range; the message says which."""


def power_parameters(form) -> dict:
    """The power analysis's parameters from the dashboard's form: POWER_DEFAULTS with the trials and
    resamples typed there (empty: the default; "1,000" reads as 1000). Raises PowerFormError naming
    the field and its range: a typo never starts a run of other figures than the lead asked for."""
    params = {**POWER_DEFAULTS}
    for key, (label, low, high) in POWER_LIMITS.items():
        typed = str(form.get(key, "")).strip()
        if not typed:
            continue
        digits = typed.replace(",", "").replace("_", "").replace(" ", "").replace("\u202f", "")
        if not (digits.isascii() and digits.isdecimal()) or not low <= int(digits) <= high:
            raise PowerFormError(
                f"{label} must be a whole number from {low:,} to {high:,}, not {typed[:20]!r}; no power analysis was started."
            )
        params[key] = int(digits)
    return params


def start(dataset, kind: str, parameters: dict, batch=None, trigger: str = "page") -> ScoringRun:
    return ScoringRun.objects.create(dataset=dataset, batch=batch, kind=kind, parameters=parameters, trigger=trigger)


def _finish(run: ScoringRun, started: float, outputs: dict = None, error: str = "") -> None:
    run.outputs = json_safe(outputs or {})
    run.error = error
    run.status = ScoringRun.Status.FAILED if error else ScoringRun.Status.DONE
    run.progress = 1.0
    run.finished_at, run.seconds = timezone.now(), time.perf_counter() - started
    run.save()


def human_matrix(dataset, batch=None):
    """(system names, document ids, documents x systems ACU scores) over complete documents."""
    table, _, pos, scores, _ = summary_scores_arrays(dataset, batch)
    if not len(pos):
        raise ValueError("no judgments to analyse yet")
    systems, docs, matrix = system_matrix(table, pos, scores)
    return [table.system_names[s] for s in systems.tolist()], docs, matrix


def human_matrix_partial(dataset, batch=None):
    """(system names, document ids, documents x systems ACU scores) over every judged document,
    NaN where a system was not judged there."""
    table, _, pos, scores, _ = summary_scores_arrays(dataset, batch)
    if not len(pos):
        raise ValueError("no judgments to analyse yet")
    systems, docs, matrix = partial_matrix(table, pos, scores)
    return [table.system_names[s] for s in systems.tolist()], docs, matrix


# Fewer documents than this behind a pair: its power is not computed (power.MIN_DOCUMENTS, the
# rule the protocol comparison reads too); fewer than SMALL_SAMPLE: computed and flagged.
MIN_POWER_DOCUMENTS = power.MIN_DOCUMENTS


def _needs_shared_documents(matrix) -> bool:
    """Whether the power analysis goes pair by pair on shared documents: some system misses a
    document, or there are too few documents for any pair (every pair then gets no power)."""
    return bool(np.isnan(matrix).any()) or len(matrix) < MIN_POWER_DOCUMENTS


def _power_outputs(result, names, docs, matrix) -> dict:
    buckets = power.bucket_rows(result)
    pair_n = result.pair_documents.tolist() if result.pair_documents is not None else [len(docs)] * len(result.pairs)
    # "shared" only when some system misses a document: too few documents alone also go pair by pair
    # (`_needs_shared_documents`), yet every system was judged on every one of them.
    coverage = "shared" if np.isnan(matrix).any() else "complete"
    pairs = list(zip(result.pairs.tolist(), pair_n, strict=True))
    small = [[names[a], names[b]] for (a, b), n in pairs if n < SMALL_SAMPLE]
    unpowered = [[names[a], names[b]] for (a, b), n in pairs if n < MIN_POWER_DOCUMENTS]
    return {
        "sizes": result.sizes.tolist(),
        "buckets": buckets,
        "documents": len(docs),
        # n behind each pair: every document (complete coverage) or the documents the pair shares;
        # pairs under SMALL_SAMPLE documents are flagged, under MIN_POWER_DOCUMENTS they get no power (null).
        "coverage": coverage,
        "pair_documents": pair_n,
        "small_sample": bool(small),
        "small_sample_pairs": small,
        "no_power_pairs": unpowered,
        "min_documents": MIN_POWER_DOCUMENTS,
        "systems": names,
        "pairs": [[names[a], names[b]] for a, b in result.pairs.tolist()],
        "pair_power": result.power.T.tolist(),
        "differences": result.differences.tolist(),
        "alpha": POWER_ALPHA,
        "score": "ACU score",  # what a pair's difference is a difference of (human_matrix_partial)
    }


def _power_matrix(run):
    """The matrix of the analysis: every judged document, NaN where a system was not judged (then
    analysed pair by pair on the documents each pair shares, `_needs_shared_documents`)."""
    names, docs, matrix = human_matrix_partial(run.dataset, run.batch)
    if len(names) < 2:
        raise ValueError("power analysis needs at least two systems")
    return names, docs, matrix


def run_power(run_id: int) -> ScoringRun:
    """The whole power analysis in this process (the embedded mode, and the reference the
    split run must equal)."""
    run = ScoringRun.objects.select_related("dataset", "batch").get(pk=run_id)
    started = time.perf_counter()
    p = {**POWER_DEFAULTS, **run.parameters}
    try:
        names, docs, matrix = _power_matrix(run)
        sizes = [int(n) for n in p["sizes"]]

        def progress(n, seconds):
            # A size costs about its number of documents: the share of that work done so far.
            done = sum(size for size in sizes if size <= n)
            ScoringRun.objects.filter(pk=run.pk).update(progress=done / sum(sizes))

        def pair_progress(done, total):
            ScoringRun.objects.filter(pk=run.pk).update(progress=done / total)

        if _needs_shared_documents(matrix):
            result = power.power_analysis_partial(
                matrix,
                sizes=sizes,
                n_trials=int(p["n_trials"]),
                n_resamples=int(p["n_resamples"]),
                alpha=POWER_ALPHA,
                rng=int(p["seed"]),
                min_documents=MIN_POWER_DOCUMENTS,
                progress=pair_progress,
            )
        else:
            result = power.power_analysis(
                matrix,
                sizes=sizes,
                n_trials=int(p["n_trials"]),
                n_resamples=int(p["n_resamples"]),
                alpha=POWER_ALPHA,
                rng=int(p["seed"]),
                progress=progress,
            )
        run.inputs = {"documents": len(docs), "systems": len(names)}
        _finish(run, started, _power_outputs(result, names, docs, matrix))
    except Exception as exc:  # noqa: BLE001 - stored on the run for the lead
        _finish(run, started, error=f"{type(exc).__name__}: {exc}")
    return run


# ---- the same analysis split into parts for several Celery worker processes -----------------


def _pack(array: np.ndarray, dtype: str) -> dict:
    """An array as base64 bytes: exact, compact, and read back without parsing JSON numbers."""
    array = np.ascontiguousarray(array, dtype=dtype)
    return {"shape": list(array.shape), "dtype": dtype, "b64": base64.b64encode(array.tobytes()).decode()}


def _unpack(packed: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(packed["b64"]), dtype=packed["dtype"]).reshape(packed["shape"])


def _stored_plan(inputs: dict) -> power.PowerPlan:
    parts = [(int(i), int(j)) for i, j in inputs["plan"]]
    return power.PowerPlan(parts, inputs["costs"], {int(i): _unpack(v) for i, v in inputs["labels"].items()})


def plan_power(run_id: int, workers: int = POWER_WORKERS) -> list[list[int]]:
    """Read the judgments once, store the score matrix and the plan on the run and return its
    parts ([size index, part number]), costliest first, for `power_part` tasks shared by
    ``workers`` processes."""
    run = ScoringRun.objects.select_related("dataset", "batch").get(pk=run_id)
    p = {**POWER_DEFAULTS, **run.parameters}
    try:
        names, docs, matrix = _power_matrix(run)
        if _needs_shared_documents(matrix):  # pair by pair on shared documents: one process
            run_power(run_id)
            return []
        sizes = [int(n) for n in p["sizes"]]
        plan = power.power_plan(
            matrix, sizes, int(p["n_trials"]), int(p["n_resamples"]), workers, alpha=POWER_ALPHA, seed=int(p["seed"])
        )
    except Exception as exc:  # noqa: BLE001 - stored on the run for the lead
        _finish(run, time.perf_counter(), error=f"{type(exc).__name__}: {exc}")
        return []
    run.inputs = {
        "documents": len(docs),
        "systems": len(names),
        "names": names,
        "document_ids": list(docs),
        "matrix": _pack(matrix, "<f8"),
        "plan": [list(part) for part in plan.parts],
        "costs": plan.costs,
        "labels": {str(i): _pack(labels, "u1") for i, labels in plan.labels.items()},
        "parts": {},
        "started": time.time(),
    }
    run.save(update_fields=["inputs"])
    return [list(part) for part in plan.parts]


def _part_key(part) -> str:
    return ",".join(str(int(x)) for x in part)


def _unpack_bits(value: dict) -> np.ndarray:
    bits = np.unpackbits(np.frombuffer(base64.b64decode(value["bits"]), dtype=np.uint8))
    return bits[: value["n"]].astype(bool)


def run_power_part(run_id: int, part: list[int]) -> bool:
    """Compute one part and store it on the run; the part that completes the plan combines
    them all and finishes the run. True when this call finished the run. Progress is the
    estimated share of the work done (parts weighted by their estimated cost)."""
    run = ScoringRun.objects.only("parameters", "inputs", "status").get(pk=run_id)
    if run.status != ScoringRun.Status.RUNNING or _part_key(part) not in map(_part_key, run.inputs.get("plan", [])):
        return False
    p = {**POWER_DEFAULTS, **run.parameters}
    sizes = [int(n) for n in p["sizes"]]
    index, number = int(part[0]), int(part[1])
    significant, used = power.power_part(
        _unpack(run.inputs["matrix"]),
        sizes,
        index,
        _stored_plan(run.inputs).columns((index, number)),
        n_trials=int(p["n_trials"]),
        n_resamples=int(p["n_resamples"]),
        alpha=POWER_ALPHA,
        seed=int(p["seed"]),
    )
    packed = {
        "bits": base64.b64encode(np.packbits(significant).tobytes()).decode(),
        "n": int(significant.size),
        "used": used,
    }
    with transaction.atomic():
        run = ScoringRun.objects.select_for_update().get(pk=run_id)
        if run.status != ScoringRun.Status.RUNNING:
            return False
        inputs = run.inputs
        inputs["parts"][_part_key(part)] = packed
        keys = [_part_key(q) for q in inputs["plan"]]
        if any(key not in inputs["parts"] for key in keys):
            done = sum(cost for key, cost in zip(keys, inputs["costs"], strict=True) if key in inputs["parts"])
            run.progress = done / sum(inputs["costs"])
            run.save(update_fields=["inputs", "progress"])
            return False
        plan = _stored_plan(inputs)
        stored = {key: (_unpack_bits(value), value["used"]) for key, value in inputs["parts"].items()}
        results = {q: stored[_part_key(q)] for q in plan.parts}
        matrix = _unpack(inputs["matrix"])
        result = power.combine_parts(matrix, sizes, plan, results, n_trials=int(p["n_trials"]))
        run.inputs = {"documents": inputs["documents"], "systems": inputs["systems"], "parts": len(results)}
        _finish(
            run,
            time.perf_counter() - (time.time() - inputs["started"]),
            _power_outputs(result, inputs["names"], inputs["document_ids"], matrix),
        )
    return True


def metric_matrices(dataset, names, docs, judged=None, left_out=None):
    """{metric: documents x systems} aligned with the human matrix; metrics missing a score where
    the humans judged (``judged``, a boolean matrix; default every cell) are left out, and
    ``left_out`` (a dict, if given) gets how many judged summaries each of them misses."""
    judged = np.ones((len(docs), len(names)), dtype=bool) if judged is None else judged
    system_ids = dict(dataset.systems.values_list("name", "pk"))
    column = {system_ids[n]: j for j, n in enumerate(names)}
    row = {d: i for i, d in enumerate(docs)}
    out = {}
    for metric in (
        MetricScore.objects.filter(dataset=dataset).values_list("metric", flat=True).distinct().order_by("metric")
    ):
        M = np.full((len(docs), len(names)), np.nan)
        for doc, system, value in MetricScore.objects.filter(dataset=dataset, metric=metric).values_list(
            "document_id", "system_id", "value"
        ):
            if doc in row and system in column:
                M[row[doc], column[system]] = value
        missing = int(np.isnan(M[judged]).sum())
        if not missing:
            out[metric] = M
        elif left_out is not None:
            left_out[metric] = missing
    return out


def metric_correlations(
    dataset,
    batch=None,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    seed: int = 0,
    significance: bool = True,
    method: str = "kendall",
) -> dict:
    """Correlations of every imported metric with the human ACU scores (three coefficients,
    both levels, bootstrap CIs) and, for every pair of metrics and level, which one is better
    with the permutation and the bootstrap p-value of that direction
    (``metric_comparison.compare_metrics``, RoSE's ``stat_test.py``) for ``method``."""
    if method not in METHODS:
        raise ValueError(f"unknown correlation {method!r}; use one of: {', '.join(METHODS)}")
    names, docs, H = human_matrix_partial(dataset, batch)
    judged = ~np.isnan(H)
    if judged.all():
        return _metric_correlations_complete(
            names, docs, H, dataset, n_resamples, n_permutations, seed, significance, method
        )
    # Partial coverage: each correlation on the documents its systems share (n reported); the
    # metric comparison tests on the documents judged for every system, when there are any.
    left_out: dict[str, int] = {}
    metrics = metric_matrices(dataset, names, docs, judged, left_out)
    rng = np.random.default_rng(seed)
    table, sizes = {}, []
    for metric, X in metrics.items():
        table[metric] = {}
        for level in ("summary", "system"):
            table[metric][level] = {}
            for m in METHODS:
                value, low, high, n = correlation.correlation_ci_partial(
                    H, X, granularity=level, method=m, n_resamples=n_resamples, rng=rng
                )
                table[metric][level][m] = {"value": value, "low": low, "high": high, "documents": n}
                sizes.append(n)
    complete = judged.all(axis=1)
    tests, note = [], ""
    if significance and metrics and complete.sum() >= 2:
        tests = _metric_tests(
            H[complete], {k: v[complete] for k, v in metrics.items()}, n_permutations, n_resamples, rng, method
        )
    elif significance and len(metrics) > 1:
        note = "no document is judged for every system: the metric comparison tests need such documents"
    return {
        "metrics": table,
        "significance": tests,
        "significance_note": note,
        "documents": len(docs),
        "complete_documents": int(complete.sum()),
        "coverage": "shared",
        "systems": names,
        "left_out": left_out,
        "method": method,
        "small_sample": bool((sizes and min(sizes) < SMALL_SAMPLE) or (tests and int(complete.sum()) < SMALL_SAMPLE)),
    }


def _metric_tests(H, metrics, n_permutations, n_resamples, rng, method) -> list[dict]:
    tests = []
    for a, b in combinations(sorted(metrics), 2):
        for level in ("summary", "system"):
            r = metric_comparison.compare_metrics(
                H,
                metrics[a],
                metrics[b],
                granularity=level,
                method=method,
                n_permutations=n_permutations,
                n_resamples=n_resamples,
                rng=rng,
            )
            better, worse = (b, a) if r.better else (a, b)
            tests.append(
                {
                    "better": better,
                    "worse": worse,
                    "level": level,
                    "method": method,
                    "corr_better": r.corr_y if r.better else r.corr_x,
                    "corr_worse": r.corr_x if r.better else r.corr_y,
                    "delta": r.delta,
                    "p_permutation": r.p_permutation,
                    "p_bootstrap": r.p_bootstrap,
                    "documents": r.documents,
                    "small_sample": bool(r.documents < SMALL_SAMPLE),
                    # Kept for readers of older runs: a is the better metric, p the permutation p.
                    "a": better,
                    "b": worse,
                    "p": r.p_permutation,
                }
            )
    return tests


def _metric_correlations_complete(names, docs, H, dataset, n_resamples, n_permutations, seed, significance, method):
    """Every system judged on every document: RoSE's computation on the whole matrix."""
    left_out: dict[str, int] = {}
    metrics = metric_matrices(dataset, names, docs, left_out=left_out)
    rng = np.random.default_rng(seed)
    table = {}
    for metric, X in metrics.items():
        table[metric] = {
            level: {
                m: dict(
                    zip(
                        ("value", "low", "high"),
                        correlation.correlation_ci(H, X, granularity=level, method=m, n_resamples=n_resamples, rng=rng),
                        strict=False,
                    )
                )
                for m in METHODS
            }
            for level in ("summary", "system")
        }
    tests = _metric_tests(H, metrics, n_permutations, n_resamples, rng, method) if significance else []
    return {
        "metrics": table,
        "significance": tests,
        "significance_note": "",
        "documents": len(docs),
        "complete_documents": len(docs),
        "coverage": "complete",
        "systems": names,
        "left_out": left_out,
        "method": method,
        "small_sample": len(docs) < SMALL_SAMPLE,
    }


def run_metric_correlations(run_id: int) -> ScoringRun:
    run = ScoringRun.objects.select_related("dataset", "batch").get(pk=run_id)
    started = time.perf_counter()
    p = {**METRIC_DEFAULTS, **run.parameters}
    try:
        outputs = metric_correlations(
            run.dataset,
            run.batch,
            n_resamples=int(p["n_resamples"]),
            n_permutations=int(p["n_permutations"]),
            seed=int(p["seed"]),
            method=str(p["method"]),
        )
        _finish(run, started, outputs)
    except Exception as exc:  # noqa: BLE001 - stored on the run for the lead
        _finish(run, started, error=f"{type(exc).__name__}: {exc}")
    return run
