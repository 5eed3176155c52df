"""The lead's human-unit budget, posted from the authoring page.

Security behavior: leads only; a POST that starts the budget as a Celery task (its progress
and result show on the dataset's authoring page, where this returns).
"""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation.drafting import DEFAULT_DRAFTER, available_drafters
from annotation.models import Dataset, DraftJob
from config.dispatch import dispatch
from config.roles import LEAD, role_required
from scoring.drafts import tasks
from scoring.drafts.quality import CRITERIA
from scoring.drafts.report import default_judge_name
from scoring.machine.judges import JUDGE_NAMES, get_judge


@role_required(LEAD)
@require_POST
def budget(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    try:
        share = float(request.POST.get("percent", "")) / 100
        authors = [int(x) for x in request.POST.getlist("authors")]
    except ValueError:
        messages.error(request, "Give the budget as a percentage of sentences, e.g. 40.")
        return redirect("authoring_overview", dataset_id=dataset.pk)
    drafter = request.POST.get("drafter", DEFAULT_DRAFTER)
    judge = request.POST.get("judge") or default_judge_name()
    criterion = request.POST.get("criterion", "abs")
    if not 0 <= share <= 1:
        messages.error(request, "The budget is a share of sentences between 0% and 100%.")
    elif drafter not in available_drafters() or judge not in JUDGE_NAMES or criterion not in CRITERIA:
        messages.error(request, "Choose an available drafter and judge.")
    elif not (ready := get_judge(judge).available())[0]:
        messages.error(request, f"Nothing started: {ready[1]}")
    else:
        job = DraftJob.objects.create(
            dataset=dataset,
            kind=DraftJob.Kind.BUDGET,
            drafter=drafter,
            created_by=request.user,
            params={"share": share, "authors": authors, "judge": judge, "criterion": criterion},
        )
        dispatch(tasks.apply_budget, job.pk)
        messages.success(request, f"Budget {share:.0%} started ({drafter} drafts, {judge} judge).")
    return redirect("authoring_overview", dataset_id=dataset.pk)
