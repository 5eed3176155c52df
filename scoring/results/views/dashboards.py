"""The lead's dashboards: overview, systems, workers, metrics; live updates and exports.

Security behavior: leads only (role_required(LEAD)) on every view; every change is a POST.
Pages read stored runs (see scoring.results.dashboard) and never recompute a large dataset on load.
"""

import io
import secrets
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_POST

from config.dispatch import dispatch, dispatch_long, lost_in_background
from config.downloads import streamed_download
from config.limits import large_upload
from config.roles import LEAD, role_required
from hits import gold
from hits.models import Worker
from hits.selectors import alerted_tests, bonus_assignments, figures, quality_marks
from hits.services import review
from hits.services.money_budget import batch_money
from hits.views.bonus_form import keep_refused_bonus, refused_bonus
from scoring import tasks
from scoring.machine import pages as judge_pages
from scoring.machine import qc as machine_qc
from scoring.models import ScoringRun
from scoring.results import charts, dashboard, leaderboard, worker_pages
from scoring.results.exports.names import download_name
from scoring.results.exports.tables import iter_judgments_csv, write_scores_csv
from scoring.runs import metric_uploads, statistics
from scoring.runs.metrics import CSV_COLUMNS
from scoring.runs.pairs import posterior_labelled
from scoring.runs.recompute import request_recompute
from scoring.runs.services import SMALL_SAMPLE, compute_scores


def _scope(request, dataset_id):
    round_id = request.GET.get("round") or request.POST.get("round")
    asked = int(round_id) if round_id and str(round_id).isdecimal() and len(str(round_id)) < 19 else None
    dataset, batch = dashboard.scope_rows(dataset_id, asked)
    if dataset is None:
        raise Http404("No Dataset matches the given query.")
    if round_id and batch is None:
        raise Http404("No such round in this dataset.")
    return dataset, batch


def _base(dataset, batch, section):
    rounds = dashboard.round_choices(dataset)
    if batch is not None and all(r["pk"] != batch.pk for r in rounds):  # a draft asked by its address
        rounds.append({"pk": batch.pk, "name": batch.name, "kind": batch.kind})
    return {
        "dataset": dataset,
        "batch": batch,
        "section": section,
        "rounds": rounds,
        "round_query": f"?round={batch.pk}" if batch else "",
        "pooled_experts": batch is None and dashboard.pools_experts(rounds),
    }


@role_required(LEAD)
def overview(request, dataset_id: int):
    dataset, batch = _scope(request, dataset_id)
    context = {**_base(dataset, batch, "overview"), **dashboard.overview(dataset, batch)}
    context["test_alerts"] = alerted_tests(dataset)  # a qualification test's failure budget spent
    return render(request, "scoring/overview.html", context)


@role_required(LEAD)
def live(request, dataset_id: int):
    """JSON for live updates while a batch runs (polled every few seconds)."""
    dataset, batch = _scope(request, dataset_id)
    run, stale = dashboard.scores_run(dataset, batch, parts=("alpha",))
    progress = figures.progress(figures.scope_batches(dataset, batch))
    power = (
        ScoringRun.objects.filter(dataset=dataset, batch=batch, kind=ScoringRun.Kind.POWER)
        .values("pk", "status", "progress")
        .first()
    )
    return JsonResponse(
        {
            "progress": {**progress, "eta": progress["eta"].isoformat() if progress["eta"] else None},
            "alpha": run.outputs.get("alpha") if run else None,
            "run": run.pk if run else None,
            "stale": stale,
            "freshness": dashboard.freshness(dataset, batch, run, stale),
            "trend": dashboard.trend_chart(dataset, batch, run),
            "power": power,
        }
    )


def _marked_toggle(batch, documents: str, marked: str) -> str:
    """The query string of the systems page with the matrix marked the other way (Holm-adjusted
    or raw p), keeping the round and the documents shown."""
    query = {"round": batch.pk} if batch else {}
    if documents == "common":
        query["documents"] = "common"
    if marked == "holm":
        query["p"] = "raw"
    return f"?{urlencode(query)}" if query else ""


@role_required(LEAD)
def systems(request, dataset_id: int):
    dataset, batch = _scope(request, dataset_id)
    run, stale = dashboard.scores_run(dataset, batch, parts=leaderboard.SYSTEMS_HEAD)
    out = run.outputs if run else {}
    documents = "common" if request.GET.get("documents") == "common" else "own"
    marked = "raw" if request.GET.get("p") == "raw" else "holm"  # the matrix's colours: Holm-adjusted by default
    power = dashboard.latest_of_kind(dataset, batch, ScoringRun.Kind.POWER)
    machine = judge_pages.systems_context(dataset, out.get("systems", {}))
    context = {
        **_base(dataset, batch, "systems"),
        "run": run,
        "stale": stale,
        "freshness": dashboard.freshness(dataset, batch, run, stale),
        "has_systems": bool(out.get("systems")),
        # The run's tables and charts, cached as rendered by run, documents and machine columns.
        "page": SimpleLazyObject(lambda: dashboard.systems_page(run, documents, machine["machine_scores"], marked)),
        "documents": documents,
        "marked": marked,
        "marked_toggle": _marked_toggle(batch, documents, marked),
        "machine_key": "-".join(str(c["run"].pk) for c in machine["machine_columns"]),
        "cache_seconds": dashboard.RUN_CACHE_SECONDS,
        "small_threshold": SMALL_SAMPLE,
        "power": power,
        # A run left to a background thread of the embedded server that stopped mid-run never ends.
        "power_lost": bool(
            power and power.status == "running" and lost_in_background(tasks.run_power_analysis, power.pk)
        ),
        "power_chart": charts.power_curve(power.outputs) if power and power.status == "done" else None,
        "power_defaults": statistics.POWER_DEFAULTS,
        "power_limits": {key: f"{low:,}–{high:,}" for key, (_, low, high) in statistics.POWER_LIMITS.items()},
        **machine,
        "machine_decided": out.get("counts", {}).get("machine_decided"),
        "posterior_labels": posterior_labelled(batch),  # the crowd's label of a pair: its posterior, or the majority
    }
    return render(request, "scoring/systems.html", context)


@role_required(LEAD)
def workers(request, dataset_id: int):
    dataset, batch = _scope(request, dataset_id)
    run, stale = dashboard.scores_run(dataset, batch, parts=("alpha",))
    table = dashboard.workers_table(run)
    qc, qc_run = machine_qc.machine_flags(dataset, batch)
    # Expert labels are the gold, not a worker: no exclude, block or bonus for them.
    experts = [r for r in table.get("rows", []) if r.get("provider") == Worker.Provider.EXPERT]
    marks = quality_marks(dataset, batch)  # stops and collusion flags of adaptive batches
    rows = [
        {**r, "machine_qc": qc.get(r["worker_id"]), "marks": marks.get(r["worker_id"], [])}
        for r in table.get("rows", [])
        if r.get("provider") != Worker.Provider.EXPERT
    ]
    listing = worker_pages.table_page(rows, request.GET, batch.pk if batch else None)
    shown = worker_pages.with_actions(
        listing.pop("rows"),
        reverse("dashboard_workers", args=[dataset.pk]),
        listing["state_query"],
        secrets.token_urlsafe(16),
    )
    # The bonus form names the batch it pays in, and that batch's currency, before it is sent.
    paid_on = bonus_assignments([r["worker_id"] for r in shown], dataset, batch)
    shown = [worker_pages.with_bonus_batch(r, paid_on.get(r["worker_id"])) for r in shown]
    # A bonus form refused a moment ago comes back open, as typed (as the batch page's does).
    kept = refused_bonus(request, "worker", {r["worker_id"] for r in shown}.__contains__)
    has_gold = any(r.get("gold_accuracy") is not None for r in rows)
    context = {
        **_base(dataset, batch, "workers"),
        "run": run,
        "stale": stale,
        "freshness": dashboard.freshness(dataset, batch, run, stale),
        "rows": [{**r, "bonus_kept": kept} if r["worker_id"] == kept.get("worker") else r for r in shown],
        "table": listing,
        "experts": experts,
        "flagged": table.get("flagged", 0),
        "has_gold": has_gold,
        # without gold HITs here: whether the dataset has the expert labels gold HITs are drawn from
        "gold_summaries": None if has_gold else gold.gold_summary_count(dataset),
        "qc_run": qc_run,
        "qc": {
            "confidence": machine_qc.QC_CONFIDENCE,
            "low": round(1 - machine_qc.QC_CONFIDENCE, 2),
            "share": machine_qc.QC_DISAGREEMENT,
            "pairs": machine_qc.QC_MIN_PAIRS,
        },
        "alpha": run.outputs.get("alpha") if run else None,
        "alpha_without": table.get("alpha_without_flagged"),
    }
    return render(request, "scoring/workers.html", context)


SECTIONS = {"overview": "dashboard", "systems": "dashboard_systems", "workers": "dashboard_workers"}


@role_required(LEAD)
@require_POST
def recompute(request, dataset_id: int):
    """Security behavior: leads only. "Recompute now": ask for the scope's recompute (coalesced
    with one already queued); the pages only read the stored run."""
    dataset, batch = _scope(request, dataset_id)
    run, stale = dashboard.scores_run(dataset, batch, parts=())
    if dashboard.freshness(dataset, batch, run, stale) == "empty":
        messages.info(request, "No judgments yet: nothing to compute.")
    else:
        request_recompute(dataset.pk, batch.pk if batch else None)
        run, stale = dashboard.scores_run(dataset, batch, parts=())
        if stale:
            messages.info(request, "Recomputing the scores: this page shows them when they are ready.")
        else:
            messages.success(request, "Scores recomputed.")
    target = SECTIONS.get(request.POST.get("section", ""), "dashboard")
    return redirect(reverse(target, args=[dataset.pk]) + (f"?round={batch.pk}" if batch else ""))


@role_required(LEAD)
@require_POST
def worker_action(request, dataset_id: int, worker_id: int, action: str):
    """Exclude from or include in scoring (and recompute at once), block (with ``exclude=1``: and
    exclude, as the batch page's block form), or bonus."""
    dataset, batch = _scope(request, dataset_id)
    worker = Worker.objects.filter(pk=worker_id, assignments__hit__batch__dataset=dataset).distinct().first()
    if worker is None:
        raise Http404("No such worker in this dataset.")
    if worker.is_expert:
        messages.error(request, "These are expert labels, not a worker: they cannot be excluded, blocked or paid.")
        return redirect(reverse("dashboard_workers", args=[dataset.pk]) + worker_pages.back_query(request.GET))
    try:
        if action in ("exclude", "include"):
            review.set_excluded(worker_id=worker.pk, excluded=action == "exclude")
            messages.success(
                request,
                f"{worker.external_id} {'excluded from' if action == 'exclude' else 'counted again in'} "
                f"scoring; {_recomputed(dataset, batch)}.",
            )
        elif action == "block":
            # The batch page's block form's rule (hits.services.review.block_worker): "exclude" also
            # leaves all the worker's judgments out of scoring; recomputed at once, as Exclude is.
            exclude = request.POST.get("exclude") == "1"
            review.block_worker(
                worker_id=worker.pk, reason=request.POST.get("reason", ""), exclude_pending=exclude, by=request.user
            )
            messages.success(
                request,
                f"Blocked {worker.external_id} and left their judgments out of scoring; {_recomputed(dataset, batch)}."
                if exclude
                else f"Blocked {worker.external_id}.",
            )
        elif action == "bonus":
            # The latest work of the page's round (the dataset's on the dataset-wide page), as the form says.
            assignment = bonus_assignments([worker.pk], dataset, batch).get(worker.pk)
            if assignment is None:
                raise review.ReviewError("This worker has no submitted work to attach a bonus to.")
            entry, created = review.send_bonus_form(assignment_id=assignment.pk, form=request.POST, by=request.user)
            messages.success(
                request,
                # the dataset's page pays on the worker's latest batch: say which
                f"Bonus of {batch_money(entry.batch, entry.amount)} sent to {worker.external_id} "
                f"(batch “{entry.batch.name}”)."
                if created
                else "That bonus was already sent.",
            )
        else:
            messages.error(request, "Unknown action.")
    except (review.ReviewError, ArithmeticError, ValueError) as exc:
        messages.error(request, str(exc) or "Invalid input.")
        if action == "bonus":
            keep_refused_bonus(request, worker=worker.pk)
    return redirect(reverse("dashboard_workers", args=[dataset.pk]) + worker_pages.back_query(request.GET))


def _recomputed(dataset, batch) -> str:
    """Recompute the page's scope after an exclusion changed what counts; the message's tail."""
    alpha = compute_scores(dataset, batch, trigger="exclusion").outputs["alpha"]
    return f"scores recomputed (ACU-level α {alpha['acu_level']})"


def _metric_example(dataset) -> dict:
    """An example line of each format, with this dataset's first document and system."""
    import json

    document = dataset.documents.order_by("position").values_list("external_id", flat=True).first() or "doc1"
    system = dataset.systems.order_by("name").values_list("name", flat=True).first() or "system_a"
    return {
        "jsonl": json.dumps({"example_id": document, "my_metric": {system: 0.42}}),
        "csv": f"{document},{system},my_metric,0.42",
    }


def _upload_state(dataset) -> dict | None:
    """The latest metric upload, and whether its background thread was lost (a restarted server)."""
    upload = metric_uploads.latest(dataset)
    if upload is None:
        return None
    pending = upload.status in (upload.Status.QUEUED, upload.Status.RUNNING)
    return {
        "upload": upload,
        "pending": pending,
        "lost": pending and lost_in_background(tasks.import_metric_upload, upload.pk),
    }


@role_required(LEAD)
def metrics(request, dataset_id: int):
    dataset, batch = _scope(request, dataset_id)
    run = dashboard.latest_of_kind(dataset, batch, ScoringRun.Kind.METRICS)
    return render(
        request,
        "scoring/metrics.html",
        {
            **_base(dataset, batch, "metrics"),
            "run": run,
            "upload": _upload_state(dataset),
            "has_metrics": dataset.metric_scores.exists(),
            "metric_names": list(dataset.metric_scores.order_by().values_list("metric", flat=True).distinct()),
            "example": _metric_example(dataset),
            "csv_header": ",".join(CSV_COLUMNS),
            "methods": statistics.METHODS,
            "metric_rows": dashboard.metric_table(run.outputs, statistics.METHODS) if run else [],
            "method": (run.parameters.get("method") if run else None) or statistics.METRIC_DEFAULTS["method"],
        },
    )


METRIC_UPLOAD_MAX_BYTES = 50 * 1024 * 1024  # read into memory: far above a metric file's size


# More than REQUEST_MAX_BYTES, at most METRIC_UPLOAD_MAX_BYTES: the middleware refuses a larger
# request by its length, and the form carries the same bound (config.limits.view_limit).
@large_upload(command="import_metric_scores", max_bytes=METRIC_UPLOAD_MAX_BYTES)
@role_required(LEAD)
@require_POST
def metrics_upload(request, dataset_id: int):
    """Security behavior: leads only. Metric scores from a JSONL or CSV file, all or nothing."""
    dataset, batch = _scope(request, dataset_id)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a .jsonl or .csv file of metric scores.")
    elif upload.size > METRIC_UPLOAD_MAX_BYTES:  # a body sent without its length
        messages.error(
            request, f"Nothing was imported: a metric file is at most {filesizeformat(METRIC_UPLOAD_MAX_BYTES)}."
        )
    else:
        # Parsed by a task (a thread of the embedded server, or a worker): the page shows its progress.
        stored = metric_uploads.start(dataset, upload.read(), upload.name)
        ran, outcome = dispatch_long(tasks.import_metric_upload, stored.pk)
        _told(request, ran, outcome, f"Importing {stored.name} in the background: this page shows how far it is.")
    return redirect(reverse("dashboard_metrics", args=[dataset.pk]) + (f"?round={batch.pk}" if batch else ""))


def _told(request, ran: bool, outcome, queued: str) -> None:
    """The message of a metric task: queued, or its outcome (one that starts "Nothing" stored nothing)."""
    if not ran:
        messages.info(request, queued)
    elif str(outcome).startswith("Nothing"):
        messages.error(request, outcome)
    else:
        messages.success(request, outcome)


@role_required(LEAD)
@require_POST
def metrics_rouge(request, dataset_id: int):
    """Security behavior: leads only. Computes ROUGE for the dataset (a task; in process without a broker)."""
    dataset, batch = _scope(request, dataset_id)
    ran, outcome = dispatch(tasks.compute_rouge_scores, dataset.pk)
    _told(request, ran, outcome, "Computing ROUGE in the background: reload this page in a minute.")
    return redirect(reverse("dashboard_metrics", args=[dataset.pk]) + (f"?round={batch.pk}" if batch else ""))


@role_required(LEAD)
@require_POST
def start_statistics(request, dataset_id: int, kind: str):
    """Start a power analysis or a metric-correlation run as a Celery task."""
    dataset, batch = _scope(request, dataset_id)
    if kind == "power":
        try:
            params = statistics.power_parameters(request.POST)
        except statistics.PowerFormError as exc:
            messages.error(request, str(exc))
            return redirect(reverse("dashboard_systems", args=[dataset.pk]) + (f"?round={batch.pk}" if batch else ""))
        run = statistics.start(dataset, ScoringRun.Kind.POWER, params, batch)
        ran, _ = dispatch_long(tasks.run_power_analysis, run.pk)
        target = "dashboard_systems"
    elif kind == "metrics":
        params = dict(statistics.METRIC_DEFAULTS)
        if request.POST.get("method") in statistics.METHODS:
            params["method"] = request.POST["method"]
        run = statistics.start(dataset, ScoringRun.Kind.METRICS, params, batch)
        ran, _ = dispatch(tasks.run_metric_significance, run.pk)
        target = "dashboard_metrics"
    else:
        raise Http404("Unknown analysis.")
    messages.info(request, "Done." if ran else "Started; this page shows its progress.")
    return redirect(reverse(target, args=[dataset.pk]) + (f"?round={batch.pk}" if batch else ""))


@role_required(LEAD)
def export(request, dataset_id: int, what: str):
    """Downloads: raw judgments CSV, per-summary scores CSV (latest run)."""
    dataset, batch = _scope(request, dataset_id)
    stream = io.StringIO()
    if what == "judgments.csv":  # streamed from a server-side cursor
        return streamed_download(iter_judgments_csv(dataset, batch), download_name(dataset, batch, what), kind="csv")
    if what == "scores.csv":
        run, _ = dashboard.scores_run(dataset, batch, parts=())
        if run is None:
            raise Http404("No scores yet.")
        write_scores_csv(run, stream)
    else:
        raise Http404("Unknown export.")
    response = HttpResponse(stream.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, download_name(dataset, batch, what))
    return response
