"""The task page as MTurk opens it (ExternalQuestion), inside MTurk's iframe.

MTurk adds `assignmentId`, `hitId`, `workerId` and `turkSubmitTo`. In preview
`assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE`: the task shows, submission is refused. On
submit the page stores the answers here first, then posts `assignmentId` to
`{turkSubmitTo}/mturk/externalSubmit`. Only MTurk's worker sites may frame the page, and
no session cookie is used (the assignment travels in a signed token).

MTurk's parameters can be typed by anyone, so an assignment row (which takes a place) is
written only once MTurk confirms the assignment for that worker and HIT
(`identity.confirm`, i.e. `get_assignment`, cached); anything else is refused with a
message and writes nothing. The qualification page proves identity the same way, and its
form posts a signed token instead of a worker id.
"""

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt

from config.security import allow_framing
from hits import gold
from hits.models import HIT, Assignment, Batch, Worker
from hits.providers import ProviderError
from hits.providers.mturk import identity
from hits.providers.mturk.config import config
from hits.providers.mturk.provider import ASSIGNMENT_NOT_AVAILABLE, MTurkProvider
from hits.services.submission import task_token
from hits.views.worker import _task_context


def _frame_policy(response):
    """Only MTurk's worker sites may frame these pages (config.security sets the whole policy)."""
    return allow_framing(response, settings.MTURK_WORKER_SITES)


def _error(request, message: str, status: int = 400):
    return _frame_policy(render(request, "hits/mturk_error.html", {"message": message}, status=status))


def _mturk_assignment(hit: HIT, worker_id: str, assignment_id: str) -> Assignment:
    """Our assignment for MTurk's: created when the worker first opens the accepted HIT."""
    worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.MTURK, external_id=worker_id)
    deadline = timezone.now() + timedelta(seconds=hit.batch.assignment_duration_seconds)
    with transaction.atomic():
        existing = Assignment.objects.select_for_update().filter(hit=hit, worker=worker).first()
        if existing is None:
            try:
                with transaction.atomic():
                    return Assignment.objects.create(
                        hit=hit, worker=worker, external_id=assignment_id, deadline=deadline, confirmed=False
                    )
            except IntegrityError:  # a second tab created it a moment ago
                return Assignment.objects.get(hit=hit, worker=worker)
        if existing.external_id != assignment_id and existing.status in (
            Assignment.Status.ASSIGNED,
            Assignment.Status.EXPIRED,
        ):
            # The worker returned the HIT and accepted it again: MTurk made a new assignment.
            existing.external_id, existing.status, existing.deadline = (
                assignment_id,
                Assignment.Status.ASSIGNED,
                deadline,
            )
            existing.save(update_fields=["external_id", "status", "deadline"])
        return existing


@xframe_options_exempt
def task(request):
    """Security behavior: anyone MTurk sends here; the HIT must be one of our published MTurk
    HITs, and answers can only be posted back to an MTurk worker site."""
    params = request.GET
    hit = (
        HIT.objects.select_related("summary__document__reference", "batch")
        .filter(external_id=params.get("hitId", ""), batch__provider=Worker.Provider.MTURK)
        .first()
    )
    if hit is None:
        return _error(request, "This HIT is not known here. Return it and contact the requester.", 404)
    context = _task_context(hit)
    assignment_id = params.get("assignmentId", "")
    if not assignment_id or assignment_id == ASSIGNMENT_NOT_AVAILABLE:
        context.update(preview=True, done=False, accept_hint=True)
        return _frame_policy(render(request, "hits/mturk_task.html", context))

    submit_to = params.get("turkSubmitTo", "").rstrip("/")
    if submit_to not in settings.MTURK_WORKER_SITES:
        return _error(request, "This page was opened with an unknown turkSubmitTo; open the HIT from MTurk.")
    worker_id = params.get("workerId", "")
    if not worker_id:
        return _error(request, "MTurk did not say which worker you are; reload the HIT.")
    if hit.batch.status not in (Batch.Status.PUBLISHED, Batch.Status.STOPPED):
        return _error(request, "This batch is closed. Please return the HIT.")
    known = Assignment.objects.filter(
        hit=hit, worker__provider=Worker.Provider.MTURK, worker__external_id=worker_id, external_id=assignment_id
    ).exists()
    if not known and not identity.confirm(
        MTurkProvider(),
        sandbox=config(hit.batch)["sandbox"],
        assignment_id=assignment_id,
        worker_id=worker_id,
        hit_id=hit.external_id,
    ):
        return _error(
            request,
            "MTurk has not confirmed this assignment for you. Reload the HIT in a minute; "
            "if this message stays, return the HIT.",
            403,
        )
    assignment = _mturk_assignment(hit, worker_id, assignment_id)
    token = task_token(assignment)
    context.update(
        assignment=assignment,
        preview=False,
        done=assignment.status not in (Assignment.Status.ASSIGNED, Assignment.Status.EXPIRED),
        submit_url=reverse("task_submit", args=[token]),
        storage_key=f"mturk-{assignment_id}",
        external_submit=f"{submit_to}/mturk/externalSubmit",
        mturk_assignment_id=assignment_id,
        after_submit="mturk",
    )
    return _frame_policy(render(request, "hits/mturk_task.html", context))


def _qualification_batch(test_id: int):
    """A published MTurk batch whose test runs on our pages (any other test id is refused)."""
    for batch in Batch.objects.filter(provider=Worker.Provider.MTURK, qualification_test_id=test_id).order_by("-pk"):
        if config(batch)["qualification_mode"] == "our_pages":
            return batch
    return None


@xframe_options_exempt
@csrf_exempt  # no session inside MTurk's frame: the post carries a signed token bound to the worker MTurk confirmed
def qualification(request, test_id: int):
    """Security behavior: an MTurk worker taking our qualification test on our pages (the
    lead's choice "our_pages"), opened from an MTurk HIT: MTurk must confirm the worker's
    assignment (`get_assignment`); the form then posts a signed token naming that worker, so
    nobody can take or burn an attempt as someone else. Passing grants the MTurk qualification."""
    from hits.models import QualificationTest
    from hits.services import qualification as quals

    test = QualificationTest.objects.filter(pk=test_id).first()
    batch = _qualification_batch(test_id) if test else None
    if test is None or batch is None:
        return _error(request, "This qualification test is not open here.", 404)
    if request.method == "POST":
        proof = identity.read_qualification_token(request.POST.get("token", ""), test.pk)
        if proof is None:
            return _error(
                request, "This test form has expired or was not opened from MTurk; open it again from the HIT.", 403
            )
        worker_id, sandbox = proof
    else:
        params = request.GET
        worker_id = params.get("workerId", "").strip()
        assignment_id, hit_id = params.get("assignmentId", "").strip(), params.get("hitId", "").strip()
        if not (worker_id and assignment_id and hit_id) or assignment_id == ASSIGNMENT_NOT_AVAILABLE:
            return _error(
                request, "Accept the HIT on MTurk, then open this test from its link (it carries your ids).", 400
            )
        hit_batch = Batch.objects.filter(provider=Worker.Provider.MTURK, hits__external_id=hit_id).first()
        sandbox = config(hit_batch or batch)["sandbox"]
        if hit_batch is None or not identity.confirm(
            MTurkProvider(), sandbox=sandbox, assignment_id=assignment_id, worker_id=worker_id, hit_id=hit_id
        ):
            return _error(
                request, "MTurk has not confirmed your assignment. Reload in a minute, or return the HIT.", 403
            )
    worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.MTURK, external_id=worker_id)
    context = {
        "test": test,
        "items": gold.test_items(test),
        "mturk_worker": worker_id,
        "mturk_token": identity.qualification_token(test.pk, worker_id, sandbox),
        "env": "sandbox" if sandbox else "production",
        "embedded": True,
    }
    if request.method == "POST":
        answers = {k[4:]: v == "1" for k, v in request.POST.items() if k.startswith("ans-") and v in ("0", "1")}
        try:
            attempt = quals.submit_attempt(test=test, worker=worker, answers=answers)
            if attempt.passed:
                MTurkProvider().grant_qualification(test, worker, attempt.score, sandbox=sandbox)
        except (quals.QualificationError, ProviderError) as exc:
            context["result"] = str(exc)
        else:
            context["result"] = (
                f"Passed with {attempt.score:.0%}: the qualification is granted on MTurk."
                if attempt.passed
                else f"Not passed: {attempt.score:.0%} correct, {test.pass_score:.0%} needed."
            )
    return _frame_policy(render(request, "hits/qualification.html", context))
