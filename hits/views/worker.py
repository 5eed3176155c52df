"""Worker pages: the work page, the task page (token-authorized) and the qualification test."""

from django.contrib import messages
from django.db.models import Sum
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from config import ratelimit
from config.db_retry import retry_on_reconnect
from config.json_body import JSONBodyError, read_json_body
from config.roles import LEAD, WORKER, role_required
from hits import gold, sheets, task_page
from hits.services import expert, handout, qualification
from hits.services.people import inhouse_worker
from hits.services.submission import (
    TAKEN_BACK,
    TAKEN_BACK_LINK,
    SubmissionRefused,
    link_refusal,
    read_token,
    submit_assignment,
    task_token,
)

from ..models import HIT, Assignment, Batch, LedgerEntry, Worker


@never_cache  # back to it after a task: the current state, not the page before the submission
@role_required(WORKER)
def work(request):
    """Security behavior: workers; shows only their own assignments, earnings and tests."""
    worker = inhouse_worker(request.user)
    tests = qualification.offered_tests(Worker.Provider.INHOUSE)
    open_tests = [
        {"test": t, "sheet_size": sheets.sheet_size(t), **qualification.attempt_status(worker, t)} for t in tests
    ]
    recent = task_page.recent_tasks(worker)
    current = handout.open_assignment(worker)
    stale = handout.held_in_stopped_batch(worker)
    return render(
        request,
        "hits/work.html",
        {
            "worker": worker,
            "tests": open_tests,
            "current": None if stale else current,
            "stale": stale,
            "stale_token": task_token(stale) if stale else "",
            "insider": handout.insider_open_batches(worker),
            "recent": recent,
            "bonuses": worker.ledger.filter(kind=LedgerEntry.Kind.BONUS)
            .select_related("assignment__hit__summary__document")
            .order_by("-created_at")[:20],
            "earned": worker.ledger.aggregate(total=Sum("amount"))["total"] or 0,
        },
    )


@retry_on_reconnect  # resumes the worker's open assignment: repeating it is harmless
@role_required(WORKER)
@ratelimit.per_minute("requests for a new task", account=ratelimit.signed_in_user)
def start_next(request):
    """Security behavior: workers; hands out (or resumes) one assignment for the caller. A GET
    (the sign-in page's way back after the session ended on *Next task*) hands out nothing and
    opens the work page, whose button continues."""
    if request.method != "POST":
        messages.info(request, "No task was handed out yet: press the button on this page to go on.")
        return redirect("work")
    try:
        assignment = handout.next_assignment(inhouse_worker(request.user))
    except handout.NoWork as exc:
        messages.info(request, str(exc))
        return redirect("work")
    return redirect("task", token=task_token(assignment))


@never_cache  # back after submitting: the server says "already submitted", not a blank copy
def task(request, token: str):
    """Security behavior: whoever holds the signed token of an assignment (its worker); no
    session needed, so the page also works inside a provider's iframe."""
    try:
        assignment_id, worker_id = read_token(token)
    except SubmissionRefused as refused:  # expired (410: it says what happened) or not a link of ours
        exc = link_refusal(refused, TAKEN_BACK_LINK)  # given back before its deadline: says so
        context = {"message": str(exc), "expired": exc.final}
        return render(request, "hits/task_invalid.html", context, status=410 if exc.final else 404)
    page = task_page.assignment_page(assignment_id, worker_id)
    if page is None:
        return render(request, "hits/task_invalid.html", status=404)
    assignment, context = page
    if assignment.hit.batch.kind == Batch.Kind.EXPERT:
        # Gold in the making: only its expert's session opens it, on the expert round's page.
        if expert.owns(request.user, assignment):
            return redirect("expert_task", token=token)
        return render(request, "hits/task_invalid.html", status=404)
    give_back = reverse("task_give_back", args=[token]) if not assignment.external_id else ""
    return render(request, "hits/task.html", token_task_context(context, assignment, token, give_back_url=give_back))


@csrf_exempt  # authorized by the signed token in the URL, which no other site can know
@require_POST
@ratelimit.per_minute("submissions", account=ratelimit.task_link)
def task_give_back(request, token: str):
    """Security behavior: the token's worker only (in-house work); gives their open task back, unpaid,
    and opens the work page, which says so; a task no longer open is left as it is and its page says why."""
    try:
        assignment_id, worker_id = read_token(token)
    except SubmissionRefused as refused:
        exc = link_refusal(refused, TAKEN_BACK_LINK)
        return render(request, "hits/task_invalid.html", {"message": str(exc), "expired": exc.final}, status=410)
    if not handout.give_back(assignment_id=assignment_id, worker_id=worker_id):
        return redirect("task", token=token)
    messages.info(request, "You gave the task back: it goes to another worker and is not paid.")
    return redirect("work")


def token_task_context(
    context: dict, assignment: Assignment, token: str, submit_url: str | None = None, **extra
) -> dict:
    """The task page of an assignment opened by its signed token (in-house and expert rounds):
    `context` from hits.task_page.assignment_page, with the submit link (`submit_url`, the
    token's by default); `extra` adds the round's own links."""
    context.update(
        assignment=assignment,
        preview=False,
        submit_url=submit_url or reverse("task_submit", args=[token]),
        done=task_page.closed(assignment),
        storage_key=f"task-{assignment.pk}",
        **extra,
    )
    return context


@role_required(LEAD)
def preview(request, hit_id: int):
    """Security behavior: leads; the task as workers see it, without a way to submit."""
    hit = get_object_or_404(HIT.objects.select_related("summary", "batch"), pk=hit_id)
    return render(request, "hits/task.html", {**task_page.task_context(hit), "preview": True, "done": False})


@retry_on_reconnect  # the same answers again give the same result
@csrf_exempt  # authorized by the signed token in the URL, which no other site can know
@xframe_options_exempt
@require_POST
@ratelimit.per_minute("submissions", account=ratelimit.task_link)
def task_submit(request, token: str):
    """Security behavior: the token's worker only (an expert round's task is refused here: it
    submits through expert_task_submit, for its expert's session). JSON in and out; the answers
    are stored before the reply says so, and a repeated identical submission gets the same reply."""
    return submit_json(request, token)


def submit_json(request, token: str, *, expert_user=None, next_url: str | None = None) -> JsonResponse:
    """Store the posted answers of the token's assignment (`expert_user`: the signed-in expert of
    an expert round's task) and say so in JSON, or say in JSON why not."""
    try:
        assignment_id, worker_id = read_token(token)
        body = read_json_body(request)
        result = submit_assignment(
            assignment_id=assignment_id,
            worker_id=worker_id,
            answers=body.get("answers") or {},
            comment=str(body.get("comment") or ""),
            active_seconds=body.get("active_seconds"),
            expert=expert_user,
        )
    except JSONBodyError as exc:
        return JsonResponse({"ok": False, "error": f"The submission was not understood: {exc}"}, status=400)
    except (ValueError, UnicodeDecodeError):
        return JsonResponse({"ok": False, "error": "The submission was not understood; try again."}, status=400)
    except SubmissionRefused as refused:
        exc = link_refusal(refused, TAKEN_BACK)  # an expired link of a task given back: says so
        return JsonResponse({"ok": False, "error": str(exc), "final": exc.final}, status=409)
    return JsonResponse(
        {
            "ok": True,
            "assignment": result.assignment.pk,
            "repeated": not result.created,
            "message": "Thank you: your answers are saved.",
            "next_url": next_url or reverse("work"),
        }
    )


@role_required(WORKER)
def take_test(request, test_id: int):
    """Security behavior: workers; only a test offered to in-house workers (one of a published
    in-house batch); grades their own attempt; answers are never shown. The form carries the
    sheet's number: a second post of one sheet (a double click) shows the first one's result."""
    test = get_object_or_404(qualification.offered_tests(Worker.Provider.INHOUSE), pk=test_id)
    worker = inhouse_worker(request.user)
    if request.method == "POST":
        answers = {
            key[4:]: value == "1"
            for key, value in request.POST.items()
            if key.startswith("ans-") and value in ("0", "1")
        }
        sheet = qualification.posted_sheet(request.POST.get("sheet", ""))
        try:
            attempt = qualification.submit_attempt(test=test, worker=worker, answers=answers, sheet=sheet)
        except qualification.AlreadyGraded as exc:  # sent again: the result it had, told once
            return _attempt_result(request, test, exc.attempt, again=True)
        except qualification.IncompleteSheet as exc:  # not graded: the sheet comes back as it was
            context = {
                "test": test,
                "items": gold.test_items(test, answers, qualification.worker_sheet(test, worker)),
                "sheet_number": qualification.sheet_number(worker, test),
                "error": str(exc),
            }
            return render(request, "hits/qualification.html", context, status=400)
        except qualification.QualificationError as exc:
            messages.error(request, str(exc))
            return redirect("work")
        return _attempt_result(request, test, attempt)
    status = qualification.attempt_status(worker, test)
    if not status["can_try"]:
        messages.info(request, status["message"])
        return redirect("work")
    items = gold.test_items(test, sheet=qualification.worker_sheet(test, worker))
    context = {"test": test, "items": items, "note": status["message"], "sheet_number": len(status["attempts"])}
    return render(request, "hits/qualification.html", context)


def _attempt_result(request, test, attempt, *, again: bool = False):
    """Where a graded sheet leads: a sheet not decided yet to a fresh one at once (no attempt
    used; the page says why), a decided one to the work page with its result. `again`: the sheet
    was posted a second time; its result is added only if the first post's is not still waiting
    to be shown (the browser dropped the first answer for the second)."""
    if not attempt.decided:
        return redirect("take_test", test.pk)
    score = qualification.percent_text(attempt.score)
    needed = qualification.percent_text(test.pass_score, pass_mark=True)
    if attempt.passed:
        level, text = messages.SUCCESS, f"You passed the qualification test ({score}). You can now take tasks."
        if attempt.score < test.pass_score:  # undecided at the last sheet: the benefit of the doubt
            text = (
                f"You passed the qualification test: your sheets ({score}) did not show that you are below "
                f"the {needed} needed. You can now take tasks."
            )
    else:
        level = messages.ERROR
        text = (
            f"Not passed: {score} (the mean of the shares right on present and on not-present facts), {needed} needed."
        )
    if again:
        storage = messages.get_messages(request)
        waiting = [m.message for m in storage]
        storage.used = False  # read, not shown: they stay for the next page
        if text in waiting:
            return redirect("work")
    messages.add_message(request, level, text)
    return redirect("work")
