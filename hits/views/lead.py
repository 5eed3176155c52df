"""Lead pages: batches (create, price, publish, stop), review and pay, workers, qualification.

Security behavior: every view here is for leads only; every change is a POST.
"""

import secrets

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_POST

from annotation.models import Dataset
from config.dispatch import dispatch
from config.downloads import streamed_download
from config.roles import LEAD, role_required
from hits import gold, selectors, sheets, tasks
from hits.allocation import service as allocation
from hits.allocation.policy import ADAPTIVE_KINDS
from hits.assignment_answers import assignment_answers
from hits.batch_fields import BatchSpec
from hits.calibration import calibration
from hits.forms import BatchForm, BucketsForm, QualificationForm
from hits.models import Assignment, Batch, QualificationTest, Worker
from hits.money import format_money
from hits.provider_interface import Capability, ProviderError, get_provider, money_currency
from hits.providers import sync as provider_sync
from hits.providers.mturk import bonuses as mturk_bonuses
from hits.providers.prolific import views as prolific_views
from hits.ratings import PROTOCOLS
from hits.selectors import ledger_export
from hits.selectors.figures import batch_figures, batch_progress, batch_spend
from hits.selectors.waiting import refresh_waiting
from hits.services import batches, estimate, money_budget, qualification, review, triage_when
from hits.stages import batch_stage, batch_stages
from hits.triage import ranking_verdict
from hits.views.bonus_form import keep_refused_bonus, refused_bonus


@role_required(LEAD)
def batch_list(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    crowd = list(dataset.batches.filter(kind=Batch.Kind.CROWD))
    progress = batch_figures(crowd)
    stages = batch_stages(crowd, progress)  # a few queries whatever the number of batches
    rows = [{"batch": b, "progress": progress[b.pk], "stage": stages[b.pk]} for b in crowd]
    return render(
        request,
        "hits/batch_list.html",
        {
            "dataset": dataset,
            "rows": rows,
            "tests": dataset.qualification_tests.all(),
            "alerts": selectors.alerted_tests(dataset),
            "gold": gold.gold_summary_count(dataset),
        },
    )


@role_required(LEAD)
def batch_new(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    form = BatchForm(request.POST or None, dataset=dataset)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            choice = _chosen(dataset, data)
            batch = batches.create_batch(
                dataset=dataset,
                spec=BatchSpec.from_data(data, provider_config=form.provider_config()),
                systems=list(data["systems"]) or None,
                qualification_test=data["qualification_test"],
                created_by=request.user,
                **choice,
            )
        except (batches.BatchError, estimate.SampleError) as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Draft batch created. Check the cost, then publish.")
            return redirect("batch_detail", batch_id=batch.pk)
    return render(
        request, "hits/batch_new.html", {"dataset": dataset, "form": form}, status=400 if form.errors else 200
    )


def _chosen(dataset, data) -> dict:
    """The form's document choice: a rating batch's documents (hits.ratings: no approved reference
    needed), an ACU batch's approved references."""
    count, ids = data.get("documents"), data.get("document_ids") or ""
    if data.get("protocol") in PROTOCOLS:
        return {"documents": estimate.chosen_documents(dataset, documents=count, document_ids=ids)}
    return {"references": estimate.chosen_references(dataset, documents=count, document_ids=ids)}


@role_required(LEAD)
def batch_estimate(request, dataset_id: int):
    """The new batch form's live count: HITs, assignments and cost for the choices so far, the figures the
    draft will have (hits.services.estimate; GET, writes nothing), or why creating it would be refused.
    Security behavior: leads only."""
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    form = BatchForm(request.GET, dataset=dataset)
    form.is_valid()  # partial input still gives a count: fields with errors fall back to their defaults
    data = {**form.cleaned_data, "provider": form.cleaned_data.get("provider") or "inhouse"}
    # the provider's options when they are valid so far (the currency they pay in), else its defaults
    try:  # a rule between the choices (BatchSpec's checks) is told as the draft would refuse it
        spec = BatchSpec.from_data(data, provider_config=form.provider_options)
        figures = estimate.estimate(
            dataset,
            spec,
            systems=list(data.get("systems") or []) or None,
            qualification_test=data.get("qualification_test"),
            **_chosen(dataset, data),
        )
    except (batches.BatchError, estimate.SampleError) as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    currency = money_currency(spec)  # as the draft's pages will show it
    figures.update({k: format_money(figures[k], currency) for k in ("rewards", "fees", "total")})
    figures["extras"] = [  # the batch page's lines below the buckets (a Prolific screening study)
        {
            "label": e.label,
            "places": e.places,
            **{k: format_money(getattr(e, k), currency) for k in ("reward", "fee", "total")},
        }
        for e in figures["extras"]
    ]
    figures["budget"] = format_money(data.get("budget"), currency) if data.get("budget") is not None else None
    return JsonResponse(figures)


def _reopens(batch: Batch) -> bool:
    """Whether extending the batch opens it again (stopped, or run out of time): its button reads
    "Reopen for 24 h" and the confirmation "Reopened for", never "Extend" as if it were still open."""
    if batch.status == Batch.Status.STOPPED:
        return True
    return batch.expires_at is not None and batch.expires_at <= timezone.now()


@role_required(LEAD)
def batch_detail(request, batch_id: int):
    batch = get_object_or_404(Batch.objects.select_related("dataset", "qualification_test"), pk=batch_id)
    if batch.kind == Batch.Kind.EXPERT:  # no provider, no pay: its own page (hits/views/expert.py)
        return redirect("expert_round", batch_id=batch.pk)
    if batch.kind in (Batch.Kind.IMPORTED, Batch.Kind.IMPORTED_CROWD):  # read-only labels, listed on the dataset page
        return redirect("dataset_detail", dataset_id=batch.dataset_id)
    status = request.GET.get("status", "submitted")
    assignments = (
        Assignment.objects.filter(hit__batch=batch)
        .select_related("worker", "hit__summary__system", "hit__summary__document")
        .order_by("-submitted_at", "-pk")
    )
    if status != "all":
        assignments = assignments.filter(status=status)
    bucket_text = "\n".join(
        f"{b.min_acus}{'-' + str(b.max_acus) if b.max_acus is not None else '+'} {b.reward}"
        for b in batch.buckets.all()
    )
    provider = get_provider(batch.provider)
    cost = batches.cost_estimate(batch)
    # counted afresh: the reasons its places wait; the stage, the progress and the other pages read it then
    waiting = refresh_waiting(batch)
    stage = batch_stage(batch)
    balance = balance_error = None
    live = batch.status != Batch.Status.DRAFT
    bonus_spend = money_budget.bonus_spend(batch) if batch.budget is not None and live else None
    if batch.status in (Batch.Status.DRAFT, Batch.Status.PUBLISHING) and provider.supports(Capability.BALANCE):
        try:
            balance = provider.balance(batch)
        except ProviderError as exc:
            balance_error = str(exc)
    return render(
        request,
        "hits/batch_detail.html",
        {
            "batch": batch,
            "provider": provider,
            "balance": balance,
            "balance_error": balance_error,
            "publishing": batches.publish_progress(batch),
            "calls": batch.provider_calls.all()[:20],
            "flagged": Assignment.objects.filter(hit__batch=batch).exclude(flag="").select_related("worker")[:100],
            "cost": cost,
            "progress": batch_progress(batch),
            "allocation": allocation.figures(batch),
            "stops": allocation.stopped_workers(batch) if batch.stop_after else None,
            "collusion": allocation.collusion_flags(batch) if batch.allocation in ADAPTIVE_KINDS else None,
            "spend": batch_spend(batch),
            "calibration": calibration(batch),
            "triage_verdict": ranking_verdict(batch.triage_run.figures) if batch.triage_run_id else None,
            "triage_state": triage_when.state_text(batch),
            "assignments": assignments[:500],
            "status_filter": status,
            "statuses": ["submitted", "approved", "rejected", "assigned", "expired", "all"],
            "buckets_form": BucketsForm(initial={"buckets": bucket_text}),
            "bonus_token": secrets.token_urlsafe(16),
            "bonus_kept": refused_bonus(
                request, "assignment", lambda pk: Assignment.objects.filter(hit__batch=batch, pk=pk).exists()
            ),
            "workers": Worker.objects.filter(assignments__hit__batch=batch).distinct().order_by("external_id"),
            "prolific": prolific_views.panel(batch) if provider.supports(Capability.SESSIONS) else None,
            "provider_section": provider.section(batch, request.build_absolute_uri("/")),
            "can_sync": provider_sync.can_sync(batch),
            "stage": stage,
            # stopped (or finished) before its end time: "was open until" next week read wrong
            "closed_early": batch.status != Batch.Status.PUBLISHED
            and batch.expires_at is not None
            and batch.expires_at > timezone.now(),
            "reopens": _reopens(batch),
            "waiting": waiting,
            "shared": selectors.workers_shared_with(batch) if batch.provider == Worker.Provider.INHOUSE else None,
            "bonusable": Assignment.objects.filter(hit__batch=batch, status__in=Assignment.COUNTED)
            .select_related("worker", "hit__summary__system", "hit__summary__document")
            .order_by("-submitted_at", "-pk")[:500],
            "currency": money_currency(batch),
            "over_budget": money_budget.over_budget_message(batch, cost["total"])
            if batch.status == Batch.Status.DRAFT
            else None,
            "bonus_spend": bonus_spend,
            # with or without a budget: money that may have left must never go unsaid
            "unsettled": money_budget.unsettled_bonuses(batch, bonus_spend) if live else "",
        },
    )


@role_required(LEAD)
@require_POST
def batch_action(request, batch_id: int, action: str):
    batch = get_object_or_404(Batch, pk=batch_id)
    try:
        if action == "publish":
            if refused := batches.publish_refusal(batch):
                raise batches.BatchError(refused)
            ran, outcome = dispatch(tasks.publish_batch, batch.pk)
            if not ran:
                messages.info(request, "Publishing in the background; this page shows its progress.")
            elif outcome != "published":
                raise batches.BatchError(outcome)
            else:
                messages.success(request, "Published: workers can take its HITs now.")
        elif action == "sync":
            messages.success(request, provider_sync.sync_batch(batch)["summary"])
        elif action == "extend":
            hours = _hours(request.POST.get("hours", "24"))
            if hours is None or not 0 < hours <= 24 * 365:
                raise batches.BatchError("Extend by 1 hour to 1 year.")
            done = "Reopened for" if _reopens(batch) else "Extended by"
            batch = batches.extend_batch(batch, hours)
            messages.success(request, f"{done} {hours:g} hours: open until {_when(batch.expires_at)}.")
        elif action == "stop":
            batches.stop_batch(batch)
            messages.success(request, "Stopped: no new HITs are handed out.")
        elif action == "priority":
            batch = batches.set_priority(batch, request.POST.get("priority", ""))
            messages.success(request, f"Priority set to {batch.priority}.")
        elif action == "budget":
            batch = money_budget.set_budget(batch, request.POST.get("budget", ""), by=request.user)
            estimate = batches.cost_estimate(batch)["total"] if batch.status == Batch.Status.DRAFT else None
            said, warned = money_budget.budget_confirmation(batch, estimate)
            (messages.warning if warned else messages.success)(request, said)
        elif action == "buckets":
            form = BucketsForm(request.POST, currency=money_currency(batch))
            if not form.is_valid():
                raise batches.BatchError(" ".join(form.errors["buckets"]))
            batches.set_buckets(batch, form.cleaned_data["buckets"])
            messages.success(request, "Rewards updated.")
        else:
            messages.error(request, "Unknown action.")
    except (batches.BatchError, money_budget.BudgetError, ProviderError, ValueError) as exc:
        messages.error(request, str(exc))
    return redirect("batch_detail", batch_id=batch.pk)


@role_required(LEAD)
def assignment_review(request, assignment_id: int):
    """One assignment as its worker answered it, next to the majority and the expert labels, with
    approve, reject and bonus. Security behavior: leads only; the actions are POSTs to the batch's review views."""
    assignment = get_object_or_404(
        Assignment.objects.select_related(
            "worker", "hit__batch__dataset", "hit__summary__system", "hit__summary__document"
        ),
        pk=assignment_id,
    )
    batch = assignment.hit.batch
    return render(
        request,
        "hits/assignment_review.html",
        {
            "assignment": assignment,
            "batch": batch,
            "currency": money_currency(batch),
            "answers": assignment_answers(assignment),
            "auto_approve_at": review.auto_approve_at(assignment),
            "bonus_token": secrets.token_urlsafe(16),
            "bonus_kept": refused_bonus(request, "assignment", lambda pk: pk == assignment.pk),
            "here": request.path,
        },
    )


def _back(request, batch) -> str:
    """Where a review action returns: the page it came from when that is a path of this site, else the batch."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return reverse("batch_detail", args=[batch.pk])


@role_required(LEAD)
@require_POST
def review_assignments(request, batch_id: int):
    """Approve or reject the ticked assignments (one or many)."""
    batch = get_object_or_404(Batch, pk=batch_id)
    ids = [int(x) for x in request.POST.getlist("assignment") if x.isdecimal()]
    ids = list(Assignment.objects.filter(hit__batch=batch, pk__in=ids).values_list("pk", flat=True))
    if not ids:
        messages.error(request, "Tick at least one assignment.")
    elif request.POST.get("action") in ("approve", "reject"):
        approving = request.POST.get("action") == "approve"
        if approving:
            done, errors = review.bulk(review.approve, ids, by=request.user)
        else:
            done, errors = review.bulk(review.reject, ids, feedback=request.POST.get("feedback", ""), by=request.user)
        _say_reviewed(request, "approved" if approving else "rejected", done, len(ids) - done - len(errors), errors)
    if request.POST.get("next"):
        return redirect(_back(request, batch))
    shown = urlencode({"status": request.POST.get("status_filter", "submitted")})  # back to the list it came from
    return redirect(f"{reverse('batch_detail', args=[batch.pk])}?{shown}")


def _say_reviewed(request, decided: str, done: int, already: int, errors: list[str]) -> None:
    """What a bulk approve or reject did: how many changed, how many were so already (a stale page
    or a second click: nothing paid or recorded twice), and the first refusals."""
    if done:
        messages.success(request, f"{decided.capitalize()} {done} assignment{'s' if done != 1 else ''}.")
    if already:
        messages.info(
            request,
            f"{already} assignment{'s were' if already != 1 else ' was'} {decided} already: nothing changed "
            "and nothing was paid or recorded twice.",
        )
    for e in errors[:5]:
        messages.error(request, e)
    if len(errors) > 5:
        messages.error(request, f"…and {len(errors) - 5} more not {decided}.")


@role_required(LEAD)
@require_POST
def bonus(request, batch_id: int):
    """Pay a bonus on an assignment of this batch, once per form (its one-time token)."""
    batch = get_object_or_404(Batch, pk=batch_id)
    assignment = (
        Assignment.objects.filter(hit__batch=batch, pk=_int(request.POST.get("assignment")))
        .select_related("worker")
        .first()
    )
    if assignment is None:
        messages.error(request, "No such assignment in this batch.")
        return redirect("batch_detail", batch_id=batch.pk)
    try:
        entry, created = review.send_bonus_form(assignment_id=assignment.pk, form=request.POST, by=request.user)
    except (review.ReviewError, ArithmeticError, ValueError) as exc:
        messages.error(request, str(exc) or "Invalid amount.")
        keep_refused_bonus(request, assignment=assignment.pk)
    else:
        if created:
            amount = money_budget.batch_money(batch, entry.amount)
            messages.success(request, f"Bonus of {amount} sent to {assignment.worker.external_id}.")
        else:
            messages.info(request, "That bonus was already sent; nothing was paid twice.")
    return redirect(_back(request, batch))


@role_required(LEAD)
@require_POST
def worker_action(request, batch_id: int, action: str):
    """Block a worker of this batch, leave them out of (or back in) scoring, lift the batch's
    stop at chance of them (`lift`) or a collusion flag of theirs (`lift-flag`, the flag's id in `flag`)."""
    batch = get_object_or_404(Batch, pk=batch_id)
    worker = (
        Worker.objects.filter(assignments__hit__batch=batch, pk=_int(request.POST.get("worker"))).distinct().first()
    )
    if worker is None:
        messages.error(request, "No such worker in this batch.")
        return redirect("batch_detail", batch_id=batch.pk)
    try:
        if action == "block":
            review.block_worker(
                worker_id=worker.pk,
                reason=request.POST.get("reason", ""),
                exclude_pending=request.POST.get("exclude") == "1",
                by=request.user,
            )
            messages.success(request, f"Blocked {worker.external_id}.")
        elif action == "lift":
            if allocation.lift_stop(batch, worker.pk, by=request.user):
                messages.success(request, f"{worker.external_id} gets this batch's work again and counts in it.")
            else:
                messages.error(request, f"{worker.external_id} is not stopped in this batch.")
        elif action == "lift-flag":
            if allocation.lift_flag(batch, _int(request.POST.get("flag")), by=request.user):
                messages.success(request, "The collusion flag is lifted; the pair is not flagged again in this batch.")
            else:
                messages.error(request, "No such open collusion flag in this batch.")
        elif action in ("exclude", "include"):
            review.set_excluded(worker_id=worker.pk, excluded=action == "exclude")
            messages.success(
                request, f"{worker.external_id} is {'left out of' if action == 'exclude' else 'counted in'} scoring."
            )
        else:
            messages.error(request, "Unknown action.")
    except review.ReviewError as exc:
        messages.error(request, str(exc))
    return redirect("batch_detail", batch_id=batch.pk)


def _when(moment) -> str:
    """A moment as the pages write it, in the site's time zone and naming it."""
    return date_format(timezone.localtime(moment), "Y-m-d H:i T")


def _hours(value) -> float | None:
    """A number of hours from a form (None when it is not one: "abc", "nan")."""
    try:
        hours = float(value)
    except (TypeError, ValueError):
        return None
    return hours if hours == hours else None


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


LEDGER_PAGE_SIZE = 100


@role_required(LEAD)
def ledger(request, batch_id: int):
    batch = get_object_or_404(Batch.objects.select_related("dataset"), pk=batch_id)
    # Oldest first, as a ledger reads (the model's order); the totals are the batch's, over every row.
    entries = batch.ledger.select_related("worker", "assignment", "created_by").order_by("created_at", "pk")
    page = Paginator(entries, LEDGER_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"batch": batch, "page": page, "spend": batch_spend(batch)}
    # MTurk bonuses counted as spent for a day and more with no ledger row: the lead checks them.
    stale = mturk_bonuses.stale_bonuses(batch) if batch.provider == "mturk" else []
    return render(request, "hits/ledger.html", {**context, "currency": money_currency(batch), "stale_bonuses": stale})


@role_required(LEAD)
@require_POST
def mturk_bonus_recheck(request, batch_id: int, bonus_id: int):
    """Security behavior: leads; a POST that asks MTurk again whether one bonus of the batch was paid
    (`mturk_bonuses.recheck_bonus`): listed, its ledger row is written once; not listed, it stays."""
    batch = get_object_or_404(Batch, pk=batch_id, provider="mturk")
    back = reverse("batch_ledger", args=[batch.pk]) + "#mturk-unsettled"
    try:
        bonus = mturk_bonuses.recheck_bonus(batch, bonus_id)
    except ProviderError as exc:
        messages.error(request, f"MTurk could not be asked: {exc} The bonus still counts as spent.")
        return redirect(back)
    name = f"The bonus of {format_money(bonus.amount, money_currency(batch))} to {bonus.assignment.worker.external_id}"
    if bonus.state == bonus.State.NOT_PAID:
        messages.info(request, f"{name} was refused by MTurk: nothing was paid and it is not counted.")
    elif bonus.state == bonus.State.SENT:
        when = date_format(timezone.localtime(bonus.checked_at), "Y-m-d H:i T") if bonus.checked_at else "now"
        messages.warning(
            request,
            f"{name} is not listed paid by MTurk (asked {when}): it stays counted as spent. Look it up on "
            "the MTurk requester site; its form sent again pays it at most once.",
        )
    else:
        messages.success(request, f"{name} is paid at MTurk: it is in the ledger, once.")
    return redirect(back)


@role_required(LEAD)
def ledger_csv(request, batch_id: int):
    """The batch's ledger as a CSV download (hits.selectors.ledger_export), streamed."""
    batch = get_object_or_404(Batch, pk=batch_id)
    return streamed_download(ledger_export.batch_ledger_csv(batch), f"ledger-batch-{batch.pk}.csv", kind="csv")


@role_required(LEAD)
def ledger_csv_all(request):
    """Every batch's ledger in one CSV download, streamed."""
    return streamed_download(ledger_export.all_ledgers_csv(), "ledger-all-batches.csv", kind="csv")


@role_required(LEAD)
def qualification_new(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    form = QualificationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            test = qualification.build_test(dataset=dataset, **form.cleaned_data)
        except qualification.QualificationError as exc:
            form.add_error(None, str(exc))
        else:
            present, absent = qualification.test_balance(test)
            messages.success(
                request,
                f"Qualification test “{test.name}” created: each attempt shows {sheets.sheet_size(test)}"
                f" of {test.items.count()} gold items, {present} facts present and {absent} not present in all "
                "(scored by balanced accuracy).",
            )
            return redirect("batch_list", dataset_id=dataset.pk)
    context = {
        "dataset": dataset,
        "form": form,
        "gold": gold.gold_summary_count(dataset),
        "gold_wanted": gold.GOLD_WANTED,
        "balance": qualification.class_balance(dataset),
        "min_per_class": qualification.MIN_PER_CLASS,
    }
    return render(request, "hits/qualification_new.html", context)


@role_required(LEAD)
@require_POST
def qualification_alert_seen(request, test_id: int):
    """The lead dismisses a test's alert about its budget of failed attempts."""
    test = get_object_or_404(QualificationTest, pk=test_id)
    qualification.dismiss_alert(test)
    messages.success(request, f"The alert about “{test.name}” is dismissed.")
    return redirect("batch_list", dataset_id=test.dataset_id)


@role_required(LEAD)
@require_POST
def qualification_rotate(request, test_id: int):
    """Draw new gold for a test whose answer sheet leaked (the page's `rotate_qualification`)."""
    test = get_object_or_404(QualificationTest, pk=test_id)
    try:
        test = qualification.rotate_gold(test)
    except qualification.QualificationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"“{test.name}” has new gold: {test.items.count()} items drawn afresh. Passes already earned stay.",
        )
    return redirect("batch_list", dataset_id=test.dataset_id)


@role_required(LEAD)
@require_POST
def qualification_shared(request, test_id: int):
    """Offer a test to the batches of other datasets (or stop offering it)."""
    test = get_object_or_404(QualificationTest, pk=test_id)
    test = qualification.set_shared(test, request.POST.get("shared") == "1")
    messages.success(
        request,
        f"“{test.name}” is {'now offered to' if test.shared else 'no longer offered to new'} batches of other datasets.",
    )
    return redirect("batch_list", dataset_id=test.dataset_id)
