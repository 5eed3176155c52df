"""Panel pages: the participant's way from the study link to the completion code, and the
lead's lists.

Participants have no account and need no cookie: the study link carries the per-study entry
token, and every later page the participant token made for their id (hits.providers.panel.tokens).
Opening a link writes nothing and takes no place; a place is taken when a task starts (a POST:
*Start*, *Continue*, or the task page's own post after an answer is stored).
"""

import logging
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from config import ratelimit
from config.limits import file_bound
from config.roles import LEAD, role_required
from hits import gold, sheets
from hits.models import Assignment, Batch, Worker
from hits.money import format_money
from hits.providers.panel import admission, idle, payouts, sessions, tokens
from hits.providers.panel.config import completion_code, completion_url, config
from hits.providers.panel.models import PanelSession
from hits.services import qualification
from hits.services.submission import task_token
from hits.task_page import session_assignment, session_task_context

logger = logging.getLogger(__name__)


def _batch(batch_id: int) -> Batch | None:
    return Batch.objects.filter(pk=batch_id, provider="panel").first()


def _message(request, message: str, status: int = 400, link: str = "", link_text: str = ""):
    context = {"message": message, "link": link, "link_text": link_text, "embedded": True}
    return render(request, "hits/panel_message.html", context, status=status)


def session_url(batch: Batch, participant_id: str) -> str:
    """The participant's own link: the same one resumes their session."""
    query = urlencode({"pid": participant_id, "t": tokens.participant_token(batch.pk, participant_id)})
    return reverse("panel_session", args=[batch.pk]) + "?" + query


def entry(request, batch_id: int):
    """Security behavior: anyone with the study link (its per-study entry token) and a
    participant id in the panel's parameter, signed by the panel and on the lead's list where the
    study asks for either (hits.providers.panel.admission); writes nothing, only sends them to their own link."""
    batch = _batch(batch_id)
    if batch is None:
        return _message(request, "This study is not known here.", 404)
    try:
        tokens.check_entry(batch.pk, request.GET.get("e", ""))
        pid = tokens.check_participant_id(request.GET.get(config(batch)["id_parameter"], ""))
        admission.check_entry(batch, pid, request.GET)
    except tokens.TokenRefused as exc:
        logger.warning("panel batch %s: entry refused from %s: %s", batch.pk, ratelimit.client_address(request), exc)
        return _message(request, str(exc), 403)
    return redirect(session_url(batch, pid))


def _complete(request, batch: Batch, pid: str):
    link = completion_url(batch, pid)
    context = {
        "code": completion_code(batch, pid),
        "link": link,
        "panel": config(batch)["panel_name"],
        "embedded": True,
    }
    return render(request, "hits/panel_complete.html", context)


def _to_task(assignment: Assignment | None, request, batch: Batch, pid: str):
    if assignment is None:
        return _complete(request, batch, pid)
    return redirect("panel_task", token=task_token(assignment))


@csrf_exempt  # no session cookie: the participant is named by the signed participant token
def session_page(request, batch_id: int):
    """Security behavior: whoever holds a participant's link (the token made for that id in this
    study). GET shows the welcome, the screening test, the next task or the completion code;
    POST starts a task (taking a place) or submits the screening test."""
    batch = _batch(batch_id)
    if batch is None:
        return _message(request, "This study is not known here.", 404)
    params = request.POST if request.method == "POST" else request.GET
    try:
        pid = tokens.check_participant(batch.pk, params.get("pid", ""), params.get("t", ""))
        admission.check_listed(batch, pid)
    except tokens.TokenRefused as exc:
        logger.warning(
            "panel batch %s: session link refused from %s: %s", batch.pk, ratelimit.client_address(request), exc
        )
        return _message(request, str(exc), 403)
    cfg = config(batch)
    address = ratelimit.client_address(request)
    context = {
        "batch": batch,
        "pid": pid,
        "t": params.get("t", ""),
        "cfg": cfg,
        "embedded": True,
        "size": int(cfg["tasks_per_session"]),
    }
    session = sessions.session_of(batch, pid)
    try:
        if request.method == "POST" and request.POST.get("action") == "screen":
            return _screen(request, batch, pid, address, context)
        if request.method == "POST":
            assignment = sessions.start_task(batch=batch, participant_id=pid, address=address)
            return _to_task(assignment, request, batch, pid)
        if session is not None:
            if sessions.finish_if_done(session):
                return _complete(request, batch, pid)
            current = sessions.held(session)
            if current is not None:  # back to the task they hold (opening a link takes no new place)
                return redirect("panel_task", token=task_token(current))
            context["done"], context["size"] = sessions.progress(session)
            return render(request, "hits/panel_welcome.html", context)
    except sessions.SessionRefused as exc:
        return _message(request, str(exc), 409)
    if sessions.needs_screening(batch, pid):
        return _screening_form(request, batch, pid, context)
    return render(request, "hits/panel_welcome.html", context)


def _screening_form(request, batch, pid, context, result: str = "", status: int = 200, given=None):
    test = batch.qualification_test
    worker = sessions.worker_of(pid)
    net = sheets.network(ratelimit.client_address(request))  # made-up ids: the sheet is the network's
    sheet = sheets.sheet(test, Worker.Provider.PANEL, pid, net)
    context.update(
        test=test,
        items=gold.test_items(test, given, sheet),
        result=result,
        sheet_number=qualification.sheet_number(worker, test),  # the form carries it: a double post is known
    )
    if worker is not None and not result:
        state = qualification.attempt_status(worker, test, max_attempts=sessions.ATTEMPTS)
        if not state["can_try"]:
            context.update(result=state["message"], finished=True, link=config(batch)["screened_out_url"])
        else:
            context["result"] = state["message"]  # not decided yet: one more sheet
    return render(request, "hits/panel_screening.html", context, status=status)


def _screen(request, batch, pid, address, context):
    answers = {k[4:]: v == "1" for k, v in request.POST.items() if k.startswith("ans-") and v in ("0", "1")}
    sheet = qualification.posted_sheet(request.POST.get("sheet", ""))
    try:
        attempt = sessions.screen(batch=batch, participant_id=pid, answers=answers, address=address, sheet=sheet)
    except qualification.AlreadyGraded as exc:  # sent again (a double click): the result it had
        attempt = exc.attempt
    except qualification.IncompleteSheet as exc:  # not graded: the sheet comes back as it was
        return _screening_form(request, batch, pid, context, result=str(exc), status=400, given=answers)
    except qualification.QualificationError as exc:
        return _screening_form(request, batch, pid, context, result=str(exc), status=409)
    if not attempt.decided:  # no attempt used: a fresh sheet at once
        return _screening_form(request, batch, pid, context, result=qualification.UNDECIDED)
    if attempt.passed:
        context["passed"] = True
        return render(request, "hits/panel_welcome.html", context)
    context.update(
        test=batch.qualification_test,
        result="Not passed. Thank you for taking part.",
        finished=True,
        link=config(batch)["screened_out_url"],
    )
    return render(request, "hits/panel_screening.html", context)


def task(request, token: str):
    """Security behavior: whoever holds the signed task link of a panel session's assignment (its
    participant); the in-house task page with the session's progress and the panel's links."""
    assignment, session = session_assignment(token, Worker.Provider.PANEL, PanelSession, "key")
    if session is None:
        return _message(request, "This task link is not valid. Open the study again from your panel.", 404)
    pid = session.worker.external_id
    context = session_task_context(
        assignment,
        token,
        provider="panel",
        progress=sessions.progress(session),
        continue_url=session_url(session.batch, pid),
        next_action=reverse("panel_session", args=[session.batch_id]),
        pid=pid,
        t=tokens.participant_token(session.batch_id, pid),
        submit_by=idle.given_back_at(assignment),  # no panel shows a task's time: the page says it
    )
    return render(request, "hits/panel_task.html", context)


# ---- lead ---------------------------------------------------------------------------------


@role_required(LEAD)
def payout_list(request, batch_id: int, kind: str):
    """Security behavior: leads; the approval list (one id per line) or the bonus list
    (id,amount CSV) of the rows named by the page's signed token (GET, writes nothing)."""
    batch = get_object_or_404(Batch, pk=batch_id, provider="panel")
    if kind not in ("approvals", "bonuses"):
        raise Http404("No such list.")
    try:
        result = payouts.lists(batch, request.GET.get("rows", ""))
    except payouts.PayoutError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    if kind == "approvals":
        body, name, ctype = payouts.approval_text(result), "approvals", "text/plain; charset=utf-8"
    else:
        body, name, ctype = payouts.bonus_csv(result), "bonuses", "text/csv; charset=utf-8"
    response = HttpResponse(body, content_type=ctype)
    suffix = "txt" if kind == "approvals" else "csv"
    response["Content-Disposition"] = f'attachment; filename="batch-{batch.pk}-{name}.{suffix}"'
    return response


@role_required(LEAD)
@require_POST
def mark_paid(request, batch_id: int):
    """Security behavior: leads; marks the rows of the downloaded lists paid at the panel, once."""
    batch = get_object_or_404(Batch, pk=batch_id, provider="panel")
    try:
        count, amount = payouts.mark_paid(
            batch, request.POST.get("rows", ""), by=request.user, codes=request.POST.get("codes", "")
        )
    except payouts.PayoutError as exc:
        messages.error(request, str(exc))
    else:
        if count:
            messages.success(request, f"Marked {count} ledger row(s), {format_money(amount)}, paid at the panel.")
        else:
            messages.info(request, "These lists were marked paid already: nothing more recorded.")
    return redirect("batch_detail", batch_id=batch.pk)


@file_bound(admission.LIST_FILE_MAX_BYTES, holds=admission.LIST_FILE_HOLDS)  # the form checks it too
@role_required(LEAD)
@require_POST
def participant_list(request, batch_id: int):
    """Security behavior: leads; stores the study's list of participant ids (empty: no list)."""
    batch = get_object_or_404(Batch, pk=batch_id, provider="panel")
    try:
        count = admission.set_listed(
            batch, admission.read_upload(request.FILES.get("file")) or request.POST.get("ids", "")
        )
    except admission.ListRefused as exc:
        messages.error(request, f"The list was not stored: {exc}")
    else:
        if count:
            messages.success(request, f"Only the {count} listed participant id(s) can start a session now.")
        else:
            messages.info(request, "No list: any participant id with the study link can start a session.")
    return redirect("batch_detail", batch_id=batch.pk)
