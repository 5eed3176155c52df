"""Machine-judge pages for leads: start a judge run (from the dataset page), its progress as
JSON, and the triage batch made from a run.

Security behavior: leads only (role_required(LEAD)); starting and triage are POSTs.
"""

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Dataset
from config.roles import LEAD, role_required
from hits.forms import TriageBatchForm
from hits.models import Batch, JudgeRun
from hits.triage import ranking_verdict
from scoring.machine.answers import usage_json
from scoring.machine.background import lost, start_or_resume, start_run
from scoring.machine.judges import judge_availability, judge_options, keeps_answers
from scoring.machine.reports import run_identity
from scoring.machine.runs import JudgeRunError


def _next(request, fallback: str) -> str:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return fallback


def run_row(run: JudgeRun) -> dict:
    """One run as the dataset page's progress table shows it. A run left to a background thread
    of the embedded server that stopped mid-run never ends: it reads "stopped", to start again."""
    expert = (run.figures.get("classification") or {}).get(run.figures.get("target") or "", {})
    status, status_display = run.status, run.get_status_display()
    if lost(run):
        status = "stopped"
        status_display = f"Stopped at {run.progress:.0%}: the server stopped during the run; start it again"
    return {
        **run_identity(run),
        "status": status,
        "status_display": status_display,
        "progress": run.progress,
        "pairs": run.pairs_total,
        "pairs_done": run.pairs_done,
        "error": run.error,
        "target": run.figures.get("target"),
        "accuracy": expert.get("accuracy"),
        "auc": expert.get("auc"),
        "kappa": expert.get("kappa"),
        "ranking": ranking_verdict(run.figures),
        "llm": usage_json(run),
        # An llm run stored before its usage was recorded (hits 0028): "usage not recorded", not a blank.
        "llm_unrecorded": not run.llm_usage and keeps_answers(run.judge),
        "systems_url": reverse("dashboard_systems", args=[run.batch.dataset_id]) + f"#machine-{run.pk}",
    }


@role_required(LEAD)
@require_POST
def start(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    back = _next(request, reverse("dataset_detail", args=[dataset.pk]) + "#machine-judges")
    label_round = None
    round_id = request.POST.get("round", "")
    if round_id:
        label_round = Batch.objects.filter(pk=round_id, dataset=dataset).first() if round_id.isdecimal() else None
        if label_round is None:
            messages.error(request, "No such round in this dataset.")
            return redirect(back)
    judge = request.POST.get("judge", "")
    given = {
        "model_dir": request.POST.get("model_dir", "").strip(),
        "device": request.POST.get("device", "cpu"),
        "model_from": request.POST.get("model_from", "").strip(),
        "cross_encoder": bool(request.POST.get("cross_encoder")),
        "fresh_answers": bool(request.POST.get("fresh_answers")),
    }
    options, _ = judge_options(judge, given)  # each judge takes its own; the others' fields are left out
    if "model_from" in options:
        if not options["model_from"].isdecimal():
            messages.error(request, "Model from run takes a judge run number.")
            return redirect(back)
        options["model_from"] = int(options["model_from"])
    try:
        run, resume = start_or_resume(dataset, judge, options=options, label_round=label_round, user=request.user)
    except JudgeRunError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    if resume is not None:
        messages.info(request, resume.message() + ".")
    ran = start_run(run)
    run.refresh_from_db()
    if ran and run.status == JudgeRun.Status.FAILED:
        messages.error(request, f"Judge run {run.pk} failed: {run.error}")
    elif ran:
        messages.success(request, f"Judge run {run.pk} ({run.judge}) finished: {run.pairs_total} pairs judged.")
    else:
        messages.info(request, f"Judge run {run.pk} ({run.judge}) started; its progress shows below.")
    return redirect(back)


@role_required(LEAD)
@require_GET
def runs_json(request, dataset_id: int):
    """The dataset's judge runs with their progress, and which judges can run here."""
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    runs = JudgeRun.objects.filter(batch__dataset=dataset).select_related("batch").order_by("-created_at", "-pk")[:20]
    return JsonResponse({"runs": [run_row(r) for r in runs], "judges": judge_availability()})


@role_required(LEAD)
@require_POST
def triage_batch(request, dataset_id: int, run_id: int):
    """Create a draft crowd batch of the pairs this run was unsure of at confidence c (its values
    read as the batch form reads them: hits.forms.TriageBatchForm)."""
    from hits.services.batches import BatchError
    from hits.services.triage import create_triage_batch

    dataset = get_object_or_404(Dataset, pk=dataset_id)
    run = JudgeRun.objects.filter(pk=run_id, batch__dataset=dataset).first()
    if run is None:
        raise Http404("No such judge run in this dataset.")
    back = reverse("dashboard_systems", args=[dataset.pk]) + "#triage"
    form = TriageBatchForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.refusal())
        return redirect(back)
    try:
        batch = create_triage_batch(
            run,
            confidence=form.cleaned_data["confidence"],
            assignments=form.cleaned_data["assignments"],
            user=request.user,
            allow_not_for_ranking=form.cleaned_data["override"],
        )
    except BatchError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    messages.success(
        request, f"Draft triage batch {batch.pk} created: {batch.hits.count()} HITs carry the uncertain ACUs."
    )
    return redirect("batch_detail", batch.pk)
