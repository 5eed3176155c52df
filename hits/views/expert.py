"""Expert rounds in the browser: a lead opens one from the dataset page ("label N summaries as
gold"); authors and leads label its summaries on the crowd's task page (hits.services.expert).

Security behavior: opening and closing a round is for leads; the round page, the next summary
and the task page are for leads and authors (workers never see expert work, which holds the
answers); a task page opens and submits only for the signed-in expert whose assignment it is (the crowd's
token link refuses an expert round's task).
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation.models import Dataset
from config import ratelimit
from config.roles import AUTHOR, LEAD, role_required, user_roles
from hits import task_page
from hits.forms import ExpertRoundForm
from hits.models import Assignment, Batch
from hits.services import expert, handout
from hits.services.submission import SubmissionRefused, read_token, task_token
from hits.views.worker import submit_json, token_task_context


def _round(batch_id: int) -> Batch:
    return get_object_or_404(Batch.objects.select_related("dataset"), pk=batch_id, kind=Batch.Kind.EXPERT)


@role_required(LEAD)
@require_POST
def expert_new(request, dataset_id: int):
    """Label N summaries as gold: an expert round of summaries spread over documents and systems."""
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    form = ExpertRoundForm(request.POST)
    back = reverse("dataset_detail", args=[dataset.pk]) + "#gold"
    if not form.is_valid():
        problems = "; ".join(f"{form.fields[f].label}: {' '.join(e)}" for f, e in form.errors.items())
        messages.error(request, f"No expert round was made. {problems}")
        return redirect(back)
    try:
        batch = expert.create_round(
            dataset, count=form.cleaned_data["count"], experts=form.cleaned_data["experts"], by=request.user
        )
    except expert.ExpertError as exc:
        messages.error(request, f"No expert round was made. {exc}")
        return redirect(back)
    messages.success(
        request,
        f"Expert round with {batch.hits.count()} summaries opened: authors and leads label them from this page.",
    )
    return redirect("expert_round", batch_id=batch.pk)


@never_cache
@role_required(LEAD, AUTHOR)
def expert_round(request, batch_id: int):
    batch = _round(batch_id)
    return render(
        request,
        "hits/expert_round.html",
        {
            "batch": batch,
            "dataset": batch.dataset,
            "progress": expert.round_progress(batch, request.user),
            "to_review": expert.review_count(batch),
            "referee": expert.referee(batch),
            "may_review": expert.may_review(request.user, batch),
            "candidates": expert.referee_candidates(batch.dataset),
        },
    )


@role_required(LEAD)
@require_POST
def expert_referee(request, batch_id: int):
    """Name the round's third expert (an author of the dataset), or clear it."""
    batch = _round(batch_id)
    chosen = request.POST.get("referee", "")
    try:
        batch = expert.name_referee(batch, int(chosen) if chosen.isdecimal() else None)
    except expert.ExpertError as exc:
        messages.error(request, str(exc))
    else:
        named = expert.referee(batch)
        messages.success(
            request,
            f"{named.username} decides where this round's experts disagree (as a lead does)."
            if named
            else "Only leads decide where this round's experts disagree.",
        )
    return redirect("expert_round", batch_id=batch.pk)


@role_required(LEAD, AUTHOR)
@require_POST
def expert_next(request, batch_id: int):
    batch = _round(batch_id)
    try:
        assignment = expert.next_task(request.user, batch)
    except handout.NoWork as exc:
        messages.info(request, str(exc))
        return redirect("expert_round", batch_id=batch.pk)
    return redirect("expert_task", token=task_token(assignment))


@role_required(LEAD)
@require_POST
def expert_from_batch(request, batch_id: int):
    """Mark a draft crowd batch as an expert round (the summaries the lead chose on the batch form)."""
    batch = get_object_or_404(Batch, pk=batch_id)
    try:
        batch = expert.mark_expert(batch)
    except expert.ExpertError as exc:
        messages.error(request, str(exc))
        return redirect("batch_detail", batch_id=batch.pk)
    messages.success(
        request, f"{batch.name} is now an expert round of {batch.hits.count()} summaries: unpaid, no provider."
    )
    return redirect("expert_round", batch_id=batch.pk)


@role_required(LEAD)
@require_POST
def expert_stop(request, batch_id: int):
    batch = expert.stop_round(_round(batch_id))
    messages.success(request, f"{batch.name} is closed; the labels made stay gold.")
    return redirect("dataset_detail", dataset_id=batch.dataset_id)


@never_cache
@role_required(LEAD, AUTHOR)
def expert_review(request, batch_id: int):
    """Security behavior: leads and the round's third expert (an author the lead named); neither on
    summaries they labelled, except a lead where no second person could decide (expert.decides_alone). The round's summaries whose experts disagree: they pick the label
    of each split ACU (POST), and the summary becomes gold once all are decided."""
    batch = _round(batch_id)
    if not expert.may_review(request.user, batch):
        raise PermissionDenied("A lead or the round's third expert decides its disagreements.")
    if request.method == "POST":
        summary_id = request.POST.get("summary")
        labels = {
            int(key[4:]): value == "1"
            for key, value in request.POST.items()
            if key.startswith("acu-") and key[4:].isdecimal() and value in ("0", "1")
        }
        try:
            if not summary_id or not summary_id.isdecimal() or not labels:
                raise expert.ExpertError("Choose Present or Not present for the facts, then Decide.")
            done = expert.decide(batch, int(summary_id), labels, request.user)
        except expert.ExpertError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{done} fact{'s' if done != 1 else ''} decided.")
        return redirect("expert_review", batch_id=batch.pk)
    return render(
        request,
        "hits/expert_review.html",
        {
            "batch": batch,
            "dataset": batch.dataset,
            "items": expert.review_items(batch, request.user),
            "left_to_others": expert.left_to_others(batch, request.user),
        },
    )


@never_cache
@role_required(LEAD, AUTHOR)
def expert_task(request, token: str):
    """The crowd's task page for one summary of an expert round, for its expert's session only
    (submitting through expert_task_submit); afterwards "Next summary" takes the next one."""
    try:
        assignment_id, worker_id = read_token(token)
    except SubmissionRefused:
        return render(request, "hits/task_invalid.html", status=404)
    page = task_page.assignment_page(assignment_id, worker_id)
    if page is None or not expert.owns(request.user, page[0]):
        return render(request, "hits/task_invalid.html", status=404)
    assignment, context = page
    batch = Batch.objects.get(pk=assignment.hit.batch_id)
    context = token_task_context(
        context,
        assignment,
        token,
        submit_url=reverse("expert_task_submit", args=[token]),
        session_submit=True,
        expert_round=batch,
        work_url=reverse("expert_round", args=[batch.pk]),
        work_label="Expert round",
        next_action=reverse("expert_next", args=[batch.pk]),
    )
    return render(request, "hits/task.html", context)


@never_cache
@require_POST
@ratelimit.per_minute("submissions", account=ratelimit.task_link)
def expert_task_submit(request, token: str):
    """Security behavior: the signed-in expert the round's task was handed to, with the session's
    CSRF token (the link alone stores nothing: hits.services.submission asks expert.owns). JSON
    in and out, as the crowd's task_submit."""
    if not request.user.is_authenticated or not user_roles(request.user) & {LEAD, AUTHOR}:
        return JsonResponse(
            {"ok": False, "error": "Sign in as the expert of this task to submit it.", "final": True}, status=403
        )
    try:
        assignment_id, _ = read_token(token)
    except SubmissionRefused as exc:
        return JsonResponse({"ok": False, "error": str(exc), "final": True}, status=409)
    batch_id = Assignment.objects.filter(pk=assignment_id).values_list("hit__batch_id", flat=True).first()
    next_url = reverse("expert_round", args=[batch_id]) if batch_id else None
    return submit_json(request, token, expert_user=request.user, next_url=next_url)
