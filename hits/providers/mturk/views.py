"""The task page as MTurk opens it (ExternalQuestion), inside MTurk's iframe.

MTurk adds `assignmentId`, `hitId`, `workerId` and `turkSubmitTo`. In preview
`assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE`: the task shows, submission is refused. On
submit the page stores the answers here first, then posts `assignmentId` to
`{turkSubmitTo}/mturk/externalSubmit`. Only MTurk's worker sites may frame the page, and
no session cookie is used.

MTurk's parameters can be typed by anyone, and MTurk offers no way to confirm an assignment
that was only accepted (GetAssignment answers only for Submitted, Approved or Rejected ones).
So the page trusts them for display only: opening it calls no AWS API and writes nothing. The
answers it posts are held (`MTurkHeldSubmission`, keyed by HIT, assignmentId and workerId):
they take no place, write no Worker or Assignment row and cannot block the real worker; they
become an Assignment with judgments, and count, only once a sync finds that worker's submitted
assignment in ListAssignmentsForHIT (hits/providers/mturk/sync.py). The qualification page
likewise calls no AWS API: an attempt is held until MTurk reports the worker's assignment of the
HIT the test was opened from, and only then graded and granted.
"""

import re
from typing import NamedTuple

from django.conf import settings
from django.core import signing
from django.db import IntegrityError, transaction
from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from config import ratelimit
from config.json_body import JSONBodyError, read_json_body
from config.security import allow_framing
from hits import gold, sheets
from hits.models import HIT, Assignment, Batch, Worker
from hits.providers.mturk.config import config
from hits.providers.mturk.models import MTurkHeldSubmission
from hits.providers.mturk.provider import ASSIGNMENT_NOT_AVAILABLE
from hits.services.submission import SubmissionRefused, checked_answers, clamped_active_seconds, clean_comment
from hits.task_page import task_context

# MTurk's AssignmentId, WorkerId and HITId: upper-case letters and digits, at most 64.
MTURK_ID = re.compile(r"[A-Z0-9]{1,64}")
HELD_SALT = "hits.mturk.held"
# Held answers per HIT and worker id (each a different assignmentId): only one can be real.
MAX_HELD_PER_WORKER = 3
# Held answers per HIT, over all worker ids: at most this many per place MTurk can fill (made-up
# worker ids cannot store rows without bound; the stale ones are dropped by the sync).
HELD_PER_PLACE = 5
TOO_MANY_HELD = "Too many submissions of this HIT under your worker id; return the HIT."
HIT_FULL = "This HIT holds too many submissions waiting for MTurk; return the HIT, or try again in an hour."


def held_cap(hit: HIT) -> int:
    return HELD_PER_PLACE * max(hit.max_assignments, hit.provider_places or 0, 1)


def store_held(hit: HIT, worker_id: str, **fields) -> None:
    """Hold answers of (hit, worker_id) within both bounds; SubmissionRefused when either is
    reached. The HIT's row is locked while counting, so simultaneous posts cannot overshoot."""
    with transaction.atomic():
        list(HIT.objects.select_for_update().filter(pk=hit.pk).values_list("pk", flat=True))
        held = MTurkHeldSubmission.objects.filter(hit=hit)
        if held.filter(worker_id=worker_id).count() >= MAX_HELD_PER_WORKER:
            raise SubmissionRefused(TOO_MANY_HELD)
        if held.count() >= held_cap(hit):
            raise SubmissionRefused(HIT_FULL)
        MTurkHeldSubmission.objects.create(hit=hit, worker_id=worker_id, **fields)


def _frame_policy(response):
    """Only MTurk's worker sites may frame these pages (config.security sets the whole policy)."""
    return allow_framing(response, settings.MTURK_WORKER_SITES)


def _error(request, message: str, status: int = 400):
    return _frame_policy(render(request, "hits/mturk_error.html", {"message": message}, status=status))


def _held_token(hit: HIT, assignment_id: str, worker_id: str) -> str:
    return signing.dumps({"h": hit.pk, "a": assignment_id, "w": worker_id}, salt=HELD_SALT, compress=True)


@xframe_options_exempt
def task(request):
    """Security behavior: anyone MTurk sends here; the HIT must be one of our published MTurk
    HITs, and answers can only be posted back to an MTurk worker site. Display only: no AWS
    call and no row is written for a page view."""
    params = request.GET
    hit_id = params.get("hitId", "")
    hit = (  # an id MTurk never gives (a NUL, punctuation) is not looked up: the database refuses some
        HIT.objects.select_related("summary__document__reference", "batch")
        .filter(external_id=hit_id, batch__provider=Worker.Provider.MTURK)
        .first()
        if MTURK_ID.fullmatch(hit_id)
        else None
    )
    if hit is None:
        return _error(request, "This HIT is not known here. Return it and contact the requester.", 404)
    context = task_context(hit, params.get("workerId", "")[:64])  # a rating HIT: the order of this worker
    context["embedded"] = True  # inside MTurk's frame: no link to our work page, which is for in-house accounts
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
    if not (MTURK_ID.fullmatch(worker_id) and MTURK_ID.fullmatch(assignment_id)):
        return _error(
            request, "The workerId or assignmentId in this link is not one MTurk gives; open the HIT from MTurk."
        )
    if hit.batch.status not in (Batch.Status.PUBLISHED, Batch.Status.STOPPED):
        return _error(request, "This batch is closed. Please return the HIT.")
    ours = Assignment.objects.filter(
        hit=hit, worker__provider=Worker.Provider.MTURK, worker__external_id=worker_id, external_id=assignment_id
    ).first()
    held = MTurkHeldSubmission.objects.filter(
        hit=hit, assignment_id=assignment_id, worker_id=worker_id, kind=MTurkHeldSubmission.Kind.TASK
    ).exists()
    reported = ours is not None and ours.status not in (Assignment.Status.ASSIGNED, Assignment.Status.EXPIRED)
    context.update(
        assignment=ours,
        preview=False,
        done=held or reported,
        # Stored here but not reported by MTurk: the hand-back to MTurk may not have happened (the
        # tab closed, the connection dropped); the page offers it again, or the HIT is never submitted.
        hand_back=held and not reported,
        submit_url=reverse("mturk_submit", args=[_held_token(hit, assignment_id, worker_id)]),
        storage_key=f"mturk-{assignment_id}",
        external_submit=f"{submit_to}/mturk/externalSubmit",
        mturk_assignment_id=assignment_id,
        after_submit="mturk",
    )
    return _frame_policy(render(request, "hits/mturk_task.html", context))


@csrf_exempt  # inside MTurk's frame: no session; the link's signed token names the HIT and assignment
@xframe_options_exempt
@require_POST
@ratelimit.per_minute("submissions", account=ratelimit.task_link)
def submit(request, token: str):
    """Security behavior: anyone holding the page's link; the answers are checked and held
    for that (HIT, assignmentId, workerId), counted only once MTurk reports that worker's
    submitted assignment (a sync). The same answers again get the same reply."""
    try:
        data = signing.loads(token, salt=HELD_SALT, max_age=settings.TASK_TOKEN_MAX_AGE)
        hit_id, assignment_id, worker_id = int(data["h"]), str(data["a"]), str(data["w"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return JsonResponse({"ok": False, "error": "This task link is not valid; open the HIT again."}, status=404)
    hit = HIT.objects.select_related("batch").filter(pk=hit_id, batch__provider=Worker.Provider.MTURK).first()
    if hit is None:
        return JsonResponse({"ok": False, "error": "This HIT is not known here."}, status=404)
    try:
        body = read_json_body(request)
        result = hold(
            hit, assignment_id, worker_id, body.get("answers") or {}, body.get("comment"), body.get("active_seconds")
        )
    except JSONBodyError as exc:
        return JsonResponse({"ok": False, "error": f"The submission was not understood: {exc}"}, status=400)
    except SubmissionRefused as exc:
        return JsonResponse({"ok": False, "error": str(exc), "final": exc.final}, status=409)
    return JsonResponse(
        {
            "ok": True,
            "repeated": not result,
            "message": "Thank you: your answers are saved. They count once MTurk reports your submission.",
        }
    )


def hold(hit: HIT, assignment_id: str, worker_id: str, answers, comment=None, active_seconds=None) -> bool:
    """Check the answers against the HIT and hold them; True when stored now, False for an
    identical repeat; SubmissionRefused for anything else."""
    parsed = checked_answers(hit, answers)
    if hit.batch.status not in (Batch.Status.PUBLISHED, Batch.Status.STOPPED):
        raise SubmissionRefused("This batch is closed. Please return the HIT.")
    stored = {str(k): v for k, v in sorted(parsed.items())}
    existing = MTurkHeldSubmission.objects.filter(
        hit=hit, assignment_id=assignment_id, worker_id=worker_id, kind=MTurkHeldSubmission.Kind.TASK
    ).first()
    if existing is not None:
        if existing.answers == stored:
            return False
        raise SubmissionRefused("This task was already submitted with other answers; it cannot be changed.")
    confirmed = Assignment.objects.filter(
        hit=hit, worker__provider=Worker.Provider.MTURK, worker__external_id=worker_id
    ).exclude(status__in=[Assignment.Status.ASSIGNED, Assignment.Status.EXPIRED])
    if confirmed.filter(confirmed=True).exists():
        raise SubmissionRefused("MTurk already reported your submission of this HIT.")
    try:
        store_held(
            hit,
            worker_id,
            assignment_id=assignment_id,
            answers=stored,
            comment=clean_comment(comment),
            active_seconds=clamped_active_seconds(active_seconds, hit.batch.assignment_duration_seconds),
        )
    except IntegrityError:  # a second tab stored it a moment ago
        return hold(hit, assignment_id, worker_id, answers, comment, active_seconds)
    return True


def _qualification_batch(test_id: int):
    """A published MTurk batch whose test runs on our pages (any other test id is refused)."""
    for batch in Batch.objects.filter(provider=Worker.Provider.MTURK, qualification_test_id=test_id).order_by("-pk"):
        if config(batch)["qualification_mode"] == "our_pages":
            return batch
    return None


@xframe_options_exempt
@csrf_exempt  # no session inside MTurk's frame: the post carries a signed token naming the HIT and assignment
def qualification(request, test_id: int):
    """Security behavior: an MTurk worker taking our qualification test on our pages (the
    lead's choice "our_pages"), opened from an MTurk HIT with its assignmentId, hitId and
    workerId. No AWS call per request: the answers are held for that assignment and graded (and
    the qualification granted) only once a sync finds that worker's submitted assignment of
    that HIT at MTurk, so nobody can take or burn an attempt as someone else."""
    from hits.models import QualificationTest
    from hits.services import qualification as quals

    test = QualificationTest.objects.filter(pk=test_id).first()
    batch = _qualification_batch(test_id) if test else None
    if test is None or batch is None:
        return _error(request, "This qualification test is not open here.", 404)
    ids = _posted_ids(request, test) if request.method == "POST" else _link_ids(request)
    if isinstance(ids, _Refused):
        return _error(request, ids.message, ids.status)
    hit, assignment_id, worker_id = ids
    known = Worker.objects.filter(provider=Worker.Provider.MTURK, external_id=worker_id).first()
    token = signing.dumps(
        {"t": test.pk, "h": hit.pk, "a": assignment_id, "w": worker_id}, salt=QUAL_SALT, compress=True
    )
    context = {
        "test": test,
        "items": gold.test_items(test, sheet=sheets.sheet(test, Worker.Provider.MTURK, worker_id)),
        "mturk_worker": worker_id,
        "mturk_token": token,
        "env": "sandbox" if config(hit.batch)["sandbox"] else "production",
        "embedded": True,
    }
    held = MTurkHeldSubmission.objects.filter(
        hit=hit, assignment_id=assignment_id, worker_id=worker_id, kind=MTurkHeldSubmission.Kind.QUALIFICATION
    ).exists()
    status = quals.attempt_status(known, test)
    attempt_id = MTurkHeldSubmission.attempt_id(assignment_id)
    if held:
        context["result"] = HELD_MESSAGE
    elif not status["can_try"]:
        context["result"] = status["message"]
    elif any(a.external_id == attempt_id for a in status["attempts"]):  # one sheet per assignment
        context["result"] = f"{status['message']} {GRADED_MESSAGE}".strip()
    elif request.method == "POST":
        answers = {k[4:]: v == "1" for k, v in request.POST.items() if k.startswith("ans-") and v in ("0", "1")}
        try:
            sheet = sheets.sheet(test, Worker.Provider.MTURK, worker_id)
            answers = quals.check_complete(sheet, answers)  # the sheet's facts only: held as they are
        except quals.IncompleteSheet as exc:  # not held, not graded: the sheet comes back as it was
            context.update(error=str(exc), items=gold.test_items(test, answers, sheet))
            return _frame_policy(render(request, "hits/qualification.html", context, status=400))
        context["result"] = _hold_test_answers(hit, test, assignment_id, worker_id, answers)
    else:
        context["note"] = status["message"]  # not decided yet: one more sheet
    return _frame_policy(render(request, "hits/qualification.html", context))


class _Refused(NamedTuple):
    message: str
    status: int


def _posted_ids(request, test) -> tuple[HIT, str, str] | _Refused:
    """The HIT, assignment and worker of a posted test form, from its signed token; else the refusal."""
    try:
        data = signing.loads(request.POST.get("token", ""), salt=QUAL_SALT, max_age=4 * 3600)
        if int(data["t"]) != test.pk:
            raise ValueError
        hit = HIT.objects.get(pk=int(data["h"]), batch__provider=Worker.Provider.MTURK)
        return hit, str(data["a"]), str(data["w"])
    except (signing.BadSignature, KeyError, TypeError, ValueError, HIT.DoesNotExist):
        return _Refused("This test form has expired or was not opened from MTurk; open it again from the HIT.", 403)


def _link_ids(request) -> tuple[HIT, str, str] | _Refused:
    """The HIT, assignment and worker named by the ids of the link MTurk opened; else the refusal."""
    params = request.GET
    worker_id = params.get("workerId", "").strip()
    assignment_id, hit_id = params.get("assignmentId", "").strip(), params.get("hitId", "").strip()
    if not (worker_id and assignment_id and hit_id) or assignment_id == ASSIGNMENT_NOT_AVAILABLE:
        return _Refused("Accept the HIT on MTurk, then open this test from its link (it carries your ids).", 400)
    if not all(MTURK_ID.fullmatch(v) for v in (worker_id, assignment_id, hit_id)):
        return _Refused("The ids in this link are not ones MTurk gives; open the test from the HIT.", 400)
    hit = HIT.objects.filter(external_id=hit_id, batch__provider=Worker.Provider.MTURK).first()
    if hit is None:
        return _Refused("This HIT is not known here; open the test from our HIT on MTurk.", 404)
    return hit, assignment_id, worker_id


def _hold_test_answers(hit: HIT, test, assignment_id: str, worker_id: str, answers: dict) -> str:
    """The answers held for the assignment (graded once MTurk reports it): what the page says."""
    try:
        store_held(
            hit,
            worker_id,
            kind=MTurkHeldSubmission.Kind.QUALIFICATION,
            test=test,
            assignment_id=assignment_id,
            answers=answers,
        )
    except IntegrityError:  # the same form posted twice
        pass
    except SubmissionRefused as exc:
        return str(exc)
    return HELD_MESSAGE


QUAL_SALT = "hits.mturk.qualification"
# An assignment whose sheet was graded not decided yet: the next sheet is answered in another HIT.
GRADED_MESSAGE = "The answers of this HIT were graded. Open the test again from a new HIT."
HELD_MESSAGE = (
    "Your answers are saved. Submit the HIT on MTurk: the test is graded, and the qualification granted "
    "if you pass, once MTurk reports your submitted assignment (within minutes)."
)
