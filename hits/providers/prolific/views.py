"""Prolific pages: the participant's way through a session, the screening test, the hook
endpoint, and the lead's study and review actions.

Participants arrive from Prolific with PROLIFIC_PID, STUDY_ID and SESSION_ID. They have no
account and need no cookie: the session and each task travel in signed tokens. Whatever a
participant does here counts only once Prolific reports that submission for that participant
(hits/providers/prolific/sync.py).
"""

import logging
import secrets
from decimal import InvalidOperation

from django.conf import settings
from django.contrib import messages
from django.db import DatabaseError
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from config import ratelimit
from config.roles import LEAD, role_required
from config.security import framable_by
from hits import gold, sheets
from hits.models import Batch, Worker
from hits.money import CENT, MoneyError, parse_money
from hits.provider_interface import ProviderError
from hits.providers.prolific import bonuses as prolific_bonuses
from hits.providers.prolific import sessions
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.config import config
from hits.providers.prolific.decisions import REJECTION_CATEGORIES, outcome_unknown
from hits.providers.prolific.models import ProlificGroupMember, ProlificSession, ProlificStudy
from hits.providers.prolific.provider import ProlificProvider, completion_url
from hits.services import qualification
from hits.services.submission import task_token
from hits.task_page import session_assignment, session_task_context

logger = logging.getLogger(__name__)


def _message(request, message: str, status: int = 400, link: str = ""):
    return render(
        request, "hits/prolific_message.html", {"message": message, "link": link, "embedded": True}, status=status
    )


def _ids(params) -> tuple[str, str, str]:
    return (params.get("PROLIFIC_PID", ""), params.get("STUDY_ID", ""), params.get("SESSION_ID", ""))


@framable_by("PROLIFIC_FRAME_SITES")
def start(request, batch_id: int):
    """Security behavior: anyone Prolific sends here with its three parameters. A session is
    created (or resumed) for that SESSION_ID only; its work counts only after Prolific confirms
    the submission for that participant."""
    batch = Batch.objects.filter(pk=batch_id, provider="prolific").first()
    if batch is None:
        return _message(request, "This study is not known here. Please return it on Prolific.", 404)
    pid, study_id, session_id = _ids(request.GET)
    try:
        session = sessions.start_session(
            batch=batch,
            participant_id=pid,
            study_id=study_id,
            session_id=session_id,
            address=ratelimit.client_address(request),
        )
    except sessions.BadParameters as exc:
        return _message(request, str(exc), 400)
    except sessions.SessionRefused as exc:
        return _message(request, str(exc), 409)
    return redirect("prolific_next", token=sessions.session_token(session))


@framable_by("PROLIFIC_FRAME_SITES")
def session_next(request, token: str):
    """Security behavior: whoever holds the signed session link (its participant). Sends them to
    the next unanswered task, or back to Prolific with the completion code once all are done
    (a page that redirects at once and also shows the code, should the redirect be blocked)."""
    try:
        session = sessions.read_session_token(token)
    except sessions.SessionRefused as exc:
        return _message(request, str(exc), 404)
    if sessions.finish_if_done(session):
        code = session.batch.prolific_studies.get(kind=ProlificStudy.Kind.MAIN).completion_code
        context = {"code": code, "link": completion_url(code), "embedded": True}
        return render(request, "hits/prolific_complete.html", context)
    over = session.status == ProlificSession.Status.ABANDONED or session.deadline <= timezone.now()
    assignment = None if over else sessions.next_assignment(session)
    if assignment is None:  # time ran out, or its tasks were taken back (e.g. a blocked participant)
        sessions.release(session)
        if session.worker.blocked:
            return _message(request, sessions.BLOCKED, 410)
        return _message(
            request,
            "The time for this session ran out and its tasks went to others. Please return the study on Prolific.",
            410,
        )
    return redirect("prolific_task", token=task_token(assignment))


@framable_by("PROLIFIC_FRAME_SITES")
def task(request, token: str):
    """Security behavior: whoever holds the signed task link of a session's assignment (its
    participant); the same task page as in-house workers, with the session's progress."""
    assignment, session = session_assignment(token, Worker.Provider.PROLIFIC, ProlificSession, "session_id")
    if session is None:
        return _message(request, "This task link is not valid. Open the study again from Prolific.", 404)
    next_url = reverse("prolific_next", args=[sessions.session_token(session)])
    context = session_task_context(
        assignment, token, provider="prolific", progress=sessions.progress(session), continue_url=next_url
    )
    return render(request, "hits/prolific_task.html", context)


@framable_by("PROLIFIC_FRAME_SITES")
@csrf_exempt  # no session cookie: the participant is named by Prolific's parameters
def screening(request, batch_id: int):
    """Security behavior: a Prolific participant taking the qualification test on our pages.
    The ids are checked first (nothing is written for a malformed or made-up link); a
    participant gets one attempt, each screening submission (SESSION_ID) one attempt, and at most
    PROLIFIC_SESSIONS_PER_ADDRESS attempts per study come from one address (a sheet after a not
    decided one continues its attempt: not counted again); the result is pass, fail or not
    decided yet (one more sheet), never a score, so attempts cannot be used to read the answers.
    Passing records them for the participant group the main study requires; they are added only
    after Prolific confirms that screening submission is theirs. The form carries the sheet's
    number: a second post of one sheet (a double click) shows the first one's result."""
    batch = Batch.objects.filter(pk=batch_id, provider="prolific", qualification_test__isnull=False).first()
    study = (
        ProlificStudy.objects.filter(batch_id=batch_id, kind=ProlificStudy.Kind.SCREENING).exclude(study_id="").first()
    )
    if batch is None or study is None:
        return _message(request, "This test is not open here. Please return the study on Prolific.", 404)
    try:
        pid, study_id, session_id = sessions.check_ids(*_ids(request.POST if request.method == "POST" else request.GET))
    except sessions.BadParameters as exc:
        return _message(request, str(exc), 400)
    if study_id != study.study_id:
        return _message(request, "Open this test from Prolific (the link carries your participant id).")
    test, link = batch.qualification_test, completion_url(study.completion_code)
    assert test is not None  # filtered on qualification_test above
    net = sheets.network(ratelimit.client_address(request))  # made-up ids: the sheet is the network's
    sheet = sheets.sheet(test, Worker.Provider.PROLIFIC, pid, net)
    context = {
        "test": test,
        "items": gold.test_items(test, sheet=sheet),
        "pid": pid,
        "study_id": study_id,
        "session_id": session_id,
        "embedded": True,
        "link": link,
    }
    # No Worker row for a participant who has not made an attempt (made-up ids write nothing).
    worker = Worker.objects.filter(provider=Worker.Provider.PROLIFIC, external_id=pid).first()
    status = qualification.attempt_status(worker, test, max_attempts=PANEL_ATTEMPTS)
    context["sheet_number"] = qualification.sheet_number(worker, test)  # the form carries it
    if status["used"] or not status["can_try"]:
        if request.method == "POST" and qualification.posted_sheet(request.POST.get("sheet", "")) is not None:
            return _screen(request, batch, study, context, net)  # a sheet sent again: the service tells (AlreadyGraded)
        result = _panel_result(status["passed"], again=True) if status["used"] else status["message"]
        context.update(result=result, finished=True)
        return render(request, "hits/prolific_screening.html", context)
    context["result"] = status["message"]  # not decided yet: one more sheet
    if request.method != "POST":
        return render(request, "hits/prolific_screening.html", context)
    if not status["pending"] and _over_address_bound(request, study):  # a sheet after an undecided one is not new
        return _message(
            request, "Too many attempts at this test came from your network. Please return the study on Prolific.", 429
        )
    return _screen(request, batch, study, context, net)


def _over_address_bound(request, study) -> bool:
    """Counts a new attempt from the request's address: past PROLIFIC_SESSIONS_PER_ADDRESS in the window?"""
    address = ratelimit.client_address(request)
    window = settings.PROLIFIC_ADDRESS_WINDOW
    return bool(address) and (
        ratelimit.count("prolific-screening", f"{study.pk}|{address}", window) > settings.PROLIFIC_SESSIONS_PER_ADDRESS
    )


def _screen(request, batch, study, context: dict, net: str):
    """Grades the posted sheet: passed (recorded for the group), failed, not decided yet (a fresh
    sheet at once, no attempt used), refused, or incomplete (the sheet back as it was)."""
    test, pid, session_id = context["test"], context["pid"], context["session_id"]
    answers = {k[4:]: v == "1" for k, v in request.POST.items() if k.startswith("ans-") and v in ("0", "1")}
    worker = sessions.accepted_worker(pid)
    try:
        attempt = qualification.submit_attempt(
            test=test,
            worker=worker,
            answers=answers,
            max_attempts=PANEL_ATTEMPTS,
            external_id=session_id,
            network=net,
            sheet=qualification.posted_sheet(request.POST.get("sheet", "")),
        )
    except qualification.AlreadyGraded as exc:  # sent again (a double click): the result it had
        attempt = exc.attempt
    except qualification.IncompleteSheet as exc:  # not graded: the sheet comes back as it was
        context.update(
            result=str(exc), items=gold.test_items(test, answers, qualification.worker_sheet(test, worker, net))
        )
        return render(request, "hits/prolific_screening.html", context, status=400)
    except qualification.QualificationError as exc:
        context.update(result=str(exc), finished=True)
        return render(request, "hits/prolific_screening.html", context)
    else:
        if attempt.passed:
            _join_group(batch, study, worker, session_id)
    if not attempt.decided:  # no attempt used: a fresh sheet at once
        sheet = qualification.worker_sheet(test, worker, net)
        context.update(
            result=qualification.UNDECIDED,
            items=gold.test_items(test, sheet=sheet),
            sheet_number=qualification.sheet_number(worker, test),
        )
        return render(request, "hits/prolific_screening.html", context)
    context.update(result=_panel_result(attempt.passed), finished=True)
    return render(request, "hits/prolific_screening.html", context)


# A panel participant's identity cannot be checked before the attempt: one attempt each.
PANEL_ATTEMPTS = 1


def _panel_result(passed: bool, again: bool = False) -> str:
    """Pass or fail only: a score per attempt would let made-up participants read the answers."""
    if passed:
        return ("You passed this test" if again else "Passed") + ": you will be invited to the paid tasks."
    return ("You have taken this test" if again else "Not passed") + ". Thank you for taking part."


def _join_group(batch, study, worker, submission_id: str) -> None:
    ProlificGroupMember.objects.get_or_create(
        group_id=study.participant_group_id, worker=worker, defaults={"batch": batch, "submission_id": submission_id}
    )
    prolific_sync.push_group_members(batch)  # never raises: what failed is kept for the lead and the sync


@csrf_exempt  # Prolific's hooks are authenticated by their HMAC signature, not a cookie
@require_POST
def hook(request):
    """Security behavior: anyone may post; only a body signed with PROLIFIC_WEBHOOK_SECRET
    (fresh timestamp) changes anything."""
    status, outcome = prolific_sync.handle_hook(
        request.body,
        request.headers.get("X-Prolific-Request-Timestamp", ""),
        request.headers.get("X-Prolific-Request-Signature", ""),
    )
    return JsonResponse({"ok": status == 200, "outcome": outcome}, status=status)


# ---- lead ---------------------------------------------------------------------------------


def panel(batch) -> dict:
    """What the batch page shows for a Prolific batch: plan, cost, studies, sessions."""
    provider = ProlificProvider()
    studies = {s.kind: s for s in batch.prolific_studies.all()}
    if batch.status in (Batch.Status.DRAFT, Batch.Status.PUBLISHING):
        cost = provider.cost(batch)
    else:
        from hits.providers.prolific.plans import session_plan

        cost = {"plan": session_plan(batch, config(batch), studies.get("main")), "total": None, "error": ""}
    rows = []
    for s in batch.prolific_sessions.select_related("worker").order_by("-created_at")[:300]:
        done, total = sessions.progress(s)
        rows.append({"session": s, "done": done, "total": total})
    return {
        "cost": cost,
        "main": studies.get("main"),
        "screening": studies.get("screening"),
        "sessions": rows,
        "categories": REJECTION_CATEGORIES,
        "token": secrets.token_urlsafe(16),
        "pending_members": ProlificGroupMember.objects.filter(batch=batch, added_at=None, error="").count(),
        "refused_members": list(
            ProlificGroupMember.objects.filter(batch=batch, added_at=None)
            .exclude(error="")
            .select_related("worker")
            .order_by("-pk")[:50]
        ),
        "hook_url": settings.PUBLIC_BASE_URL.rstrip("/") + reverse("prolific_hook"),
        "unknown_bonuses": outcome_unknown(provider, batch),
    }


@role_required(LEAD)
@require_POST
def study_action(request, batch_id: int, action: str):
    """Security behavior: leads; a POST that creates, pauses, restarts the study or adds places."""
    batch = get_object_or_404(Batch, pk=batch_id, provider="prolific")
    provider = ProlificProvider()
    try:
        if action == "draft":
            if batch.status not in (Batch.Status.DRAFT, Batch.Status.PUBLISHING):
                raise ProviderError("The study is already published.")
            main, plan, created = provider.create_draft(batch)
            messages.success(
                request,
                f"Draft study {main.study_id} {'created' if created else 'exists'} at Prolific: "
                f"{plan.places} places of {plan.hits_per_session} HITs for {plan.reward} each.",
            )
        elif action == "pause":
            provider.pause(batch)
            messages.success(request, "Paused at Prolific: no new participants start.")
        elif action == "resume":
            provider.resume(batch)
            messages.success(request, "Running again at Prolific.")
        elif action == "places":
            total = provider.add_places(batch, int(request.POST.get("places", "0")))
            messages.success(request, f"The study now has {total} places.")
        else:
            messages.error(request, "Unknown action.")
    except (ProviderError, ValueError) as exc:
        Batch.objects.filter(pk=batch.pk).update(last_error=f"Prolific: {exc}")
        messages.error(request, str(exc))
    return redirect("batch_detail", batch_id=batch.pk)


@role_required(LEAD)
@require_POST
def settle_bonus(request, batch_id: int, bonus_id: int):
    """Security behavior: leads; a POST that settles a bonus of unknown outcome of this batch as the
    lead found it at Prolific: paid (recorded in the ledger once) or not paid (no longer counted)."""
    batch = get_object_or_404(Batch, pk=batch_id, provider="prolific")
    outcome = request.POST.get("outcome")
    if outcome not in ("paid", "not_paid"):
        messages.error(request, "Say whether Prolific paid the bonus: paid or not paid.")
        return redirect("batch_detail", batch_id=batch.pk)
    paid = outcome == "paid"
    try:
        bonus, now = prolific_bonuses.settle_unknown_bonus(batch, bonus_id, paid=paid, by=request.user)
    except ProviderError as exc:
        messages.error(request, str(exc))
        return redirect("batch_detail", batch_id=batch.pk)
    name = f"Bulk bonus {bonus.bulk_id}"
    if not now:
        who = bonus.settled_by.get_username() if bonus.settled_by else "a lead"
        when = timezone.localtime(bonus.settled_at).strftime("%Y-%m-%d %H:%M %Z")
        messages.info(request, f"{name} was already settled as {'paid' if paid else 'not paid'} by {who} at {when}.")
    elif paid:
        messages.success(request, f"{name} recorded as paid on Prolific: its bonuses and fees are in the ledger.")
    else:
        messages.success(
            request, f"{name} marked not paid: it no longer counts against the budget, and its form may be sent again."
        )
    return redirect("batch_detail", batch_id=batch.pk)


@role_required(LEAD)
@require_POST
def review_sessions(request, batch_id: int):
    """Security behavior: leads; approve, reject or bonus the ticked sessions of this batch."""
    batch = get_object_or_404(Batch, pk=batch_id, provider="prolific")
    ids = [int(x) for x in request.POST.getlist("session") if x.isdecimal()]
    action = request.POST.get("action")
    if not ids:
        messages.error(request, "Tick at least one session.")
        return redirect("batch_detail", batch_id=batch.pk)
    try:
        errors = _review(request, batch, ids, action)
    except DatabaseError:  # the steps record their own failures; this is a read or a bonus row
        logger.exception("database error on the Prolific sessions' %s of batch %s", action, batch.pk)
        errors = [NOT_RECORDED]
    for error in errors[:10]:
        messages.error(request, error)
    return redirect("batch_detail", batch_id=batch.pk)


NOT_RECORDED = (
    "The database could not record this just now, so it was not finished here. Nothing is paid twice: what Prolific "
    "did is recorded once by the next sync, and the same bonus form sent again is never paid again. Open the page "
    "again to see where each session stands."
)


def _review(request, batch, ids: list[int], action) -> list[str]:
    """The sessions' approve, reject or bonus; returns the error messages (successes are said here)."""
    if action == "approve":
        done, errors = prolific_sync.approve_sessions(batch, ids, by=request.user)
        messages.success(request, f"Approved {done} session(s) at Prolific.")
    elif action == "reject":
        done, errors = prolific_sync.reject_sessions(
            batch,
            ids,
            category=request.POST.get("category", ""),
            message=request.POST.get("message", ""),
            by=request.user,
        )
        if done:
            messages.success(request, f"Rejected {done} session(s) at Prolific.")
    elif action == "bonus":
        errors = []
        try:
            if not request.POST.get("token"):
                raise ProviderError("The bonus form has expired; open the page again.")
            try:  # the one parser of amounts: exact cents, no NaN, exponent or underscore
                amount = parse_money(request.POST.get("amount", ""), what="The bonus", minimum=CENT)
            except MoneyError as exc:
                raise ProviderError(str(exc)) from None
            chosen = list(batch.prolific_sessions.filter(pk__in=ids).select_related("worker"))
            prolific_bonuses.pay_bonus(
                batch,
                dict.fromkeys(chosen, amount),
                request.POST.get("reason", ""),
                key=f"form:{request.POST.get('token', '')}",
                by=request.user,
                over_budget=request.POST.get("over_budget") == "1",
            )
            messages.success(request, f"Bonus of {amount} sent to {len(chosen)} participant(s) (once).")
        except (InvalidOperation, ProviderError) as exc:
            errors = [str(exc) or "Invalid amount."]
    else:
        errors = ["Unknown action."]
    return errors
