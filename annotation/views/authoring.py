"""Authoring pages: the author's queue, the ACU writing page with its JSON autosave, the
review page, and the lead's authoring overview with assignment and guidelines."""

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from config import extras
from config.json_body import JSONBodyError, read_json_body
from config.roles import AUTHOR, LEAD, role_required

from .. import lead_review, tasks
from ..drafting import DEFAULT_DRAFTER, DrafterError, available_drafters
from ..drafting import service as drafting
from ..guidelines import guidelines_for
from ..llm import LLMError
from ..models import AuthoringTime, Dataset, DraftJob, Reference
from ..services import authoring, authoring_progress
from ..text import refuse_control_characters
from .after_sign_in import get_goes_back


def _json_body(request) -> dict:
    try:
        return read_json_body(request)
    except JSONBodyError as exc:
        raise authoring.AuthoringError(str(exc)) from None


def _whole_number(value, what: str) -> int:
    """A JSON id or version: an integer (or its digits as a string), else a message; a float such as
    1e400 (infinity once parsed) or NaN is refused, never converted."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise authoring.AuthoringError(f"{what} must be a whole number.")
    try:
        return int(value)
    except ValueError:
        raise authoring.AuthoringError(f"{what} must be a whole number.") from None


def _sentences(value) -> list:
    """The editor's sentences in the shape the save reads ([{"id", "acus": [{"id", "text", "draft"}]}]), else a
    message: a body of another shape is never read as one (a list stored as the text "['a']")."""
    malformed = authoring.AuthoringError("The change sent is not in the editor's form; reload the page.")
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise malformed
    for entry in value:
        acus = entry.get("acus", [])
        if not isinstance(acus, list) or not all(
            isinstance(a, dict) and isinstance(a.get("text", ""), str) for a in acus
        ):
            raise malformed
    return value


@never_cache  # Back after a submission or decision: the current state, not the page before it
@role_required(AUTHOR)
def queue(request):
    """Security behavior: authors; shows only their own references and reviews."""
    return render(
        request,
        "annotation/authoring_queue.html",
        {
            "queue": authoring.author_queue(request.user),
            "reviews": authoring.review_queue(request.user),
            "reviewed": list(authoring.reviewed_by(request.user)),
        },
    )


@never_cache  # Back after a submission or decision: the current state, not the page before it
@role_required(AUTHOR, LEAD)
def write(request, reference_id: int):
    """Security behavior: the reference's writer edits; leads and other authors get a
    read-only view; workers are refused."""
    reference = get_object_or_404(Reference.objects.select_related("document__dataset"), pk=reference_id)
    editable = reference.writer_id == request.user.pk and reference.status in Reference.EDITABLE
    return render(
        request,
        "annotation/write.html",
        {
            "reference": reference,
            "document": reference.document,
            "state": authoring.reference_state(reference),
            "editable": editable,
            "guidelines": guidelines_for(reference.document.dataset),
            "drafters": available_drafters(),
        },
    )


@role_required(AUTHOR)
@require_POST
def save(request, reference_id: int):
    """Security behavior: only the writer, while the reference is editable. JSON in, JSON
    out: 200 with the new state, 409 on a version conflict, 400 on a refused change (an ACU refused:
    its sentence id and index in that sentence's list as sent, for the editor to mark it)."""
    try:
        body = _json_body(request)
        state = authoring.save_reference(
            reference_id=reference_id,
            user=request.user,
            base_version=_whole_number(body.get("version", -1), "The version"),
            sentences=_sentences(body.get("sentences") or []),
            dismissed=[_whole_number(d, "A dismissed draft id") for d in body.get("dismissed") or []],
        )
    except authoring.VersionConflict as exc:
        return JsonResponse({"error": str(exc), "conflict": True, "version": exc.reference.version}, status=409)
    except authoring.RefusedAcu as exc:  # the editor marks the ACU at fault
        return JsonResponse({"error": str(exc), "sentence": exc.sentence_id, "acu": exc.index}, status=400)
    except (authoring.AuthoringError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        return JsonResponse({"error": str(exc) or "The change could not be saved."}, status=400)
    except Reference.DoesNotExist:
        return JsonResponse({"error": "No such reference."}, status=404)
    return JsonResponse(state)


@role_required(AUTHOR)
@require_POST
def suggest(request, reference_id: int):
    """Security behavior: only the writer, while the reference is editable. JSON in
    ({"drafter": "parsed"|"rules"|"llm", "sentence": id or null for the whole reference}), JSON out:
    the new state with the drafts; 400 with a message when the drafter cannot run."""
    try:
        body = _json_body(request)
        sentence = body.get("sentence")
        made = drafting.suggest(
            reference_id=reference_id,
            user=request.user,
            drafter=str(body.get("drafter") or DEFAULT_DRAFTER),
            sentence_id=_whole_number(sentence, "The sentence") if sentence not in (None, "") else None,
        )
    except (authoring.AuthoringError, DrafterError, LLMError, TypeError, ValueError) as exc:
        return JsonResponse({"error": str(exc) or "No drafts could be made."}, status=400)
    except Reference.DoesNotExist:
        return JsonResponse({"error": "No such reference."}, status=404)
    state = authoring.reference_state(Reference.objects.select_related("document").get(pk=reference_id))
    return JsonResponse({**state, "made": made})


@role_required(AUTHOR)
@require_POST
def record_time(request, reference_id: int):
    """Security behavior: authors working on (writing or reviewing) this reference; the
    page reports active seconds, idle time already left out."""
    reference = Reference.objects.filter(pk=reference_id).first()
    if reference is None:  # the page's script reads JSON, as `save` answers
        return JsonResponse({"error": "No such reference."}, status=404)
    kind = request.POST.get("kind", AuthoringTime.Kind.WRITING)
    allowed = reference.writer_id if kind == AuthoringTime.Kind.WRITING else reference.reviewer_id
    if allowed != request.user.pk:
        return JsonResponse({"error": "Not your reference."}, status=403)
    try:
        seconds = float(request.POST.get("seconds", 0))
    except ValueError:
        return JsonResponse({"error": "seconds must be a number"}, status=400)
    authoring.record_time(reference_id=reference_id, user=request.user, seconds=seconds, kind=kind)
    return JsonResponse({"ok": True})


@role_required(AUTHOR)
@get_goes_back("authoring_write", "Nothing was sent yet: check the ACUs, then press Done again.")
def submit(request, reference_id: int):
    """Security behavior: only the writer; sends the reference to another author's review (the
    version the page showed, refused when it changed since). A GET (the sign-in page's way back
    after a session ended on *Done*) sends nothing and opens the reference."""
    seen = request.POST.get("version", "")
    try:
        reference = authoring.submit_for_review(
            reference_id=reference_id, user=request.user, base_version=int(seen) if seen.isdecimal() else None
        )
    except authoring.AlreadyDone as exc:  # Done pressed again (a double click, a second tab): not an error
        messages.info(request, str(exc))
        return redirect("authoring_write", reference_id=reference_id)
    except authoring.AuthoringError as exc:
        messages.error(request, str(exc))
        return redirect("authoring_write", reference_id=reference_id)
    except Reference.DoesNotExist:
        raise Http404("No such reference.") from None
    if reference.reviewer:
        messages.success(request, f"Sent to review ({reference.reviewer.username}).")
    else:
        messages.warning(
            request,
            "Sent to review, but no other author can review it: a lead must add an author "
            "(People page), assign a reviewer, or approve it.",
        )
    return redirect("authoring_queue")


@never_cache  # Back after a submission or decision: the current state, not the page before it
@role_required(AUTHOR, LEAD)
def review(request, reference_id: int):
    """Security behavior: the assigned reviewer (or any author but the writer, who claims
    it by commenting or deciding); the writer and workers are refused; leads read."""
    reference = get_object_or_404(Reference.objects.select_related("document__dataset", "writer"), pk=reference_id)
    if reference.writer_id == request.user.pk:
        messages.error(request, "You wrote this reference; another author must review it.")
        return redirect("authoring_queue")
    # The buttons only for whom the service lets decide: the reviewer, or (unclaimed) an author of the dataset.
    claimants = authoring.dataset_authors(reference.document.dataset) if reference.reviewer_id is None else None
    can_review = (
        reference.status == Reference.Status.IN_REVIEW
        and reference.reviewer_id in (None, request.user.pk)
        and request.user.groups.filter(name=AUTHOR).exists()
        and (claimants is None or claimants.filter(pk=request.user.pk).exists())
    )
    sentences = list(reference.sentences.prefetch_related("acus", "acus__comments"))
    hints = _hints_by_id(authoring.reference_state(reference))
    for sentence in sentences:  # the atomicity hints the writer saw, for the reviewer too
        sentence.hint_list = hints.get(f"s{sentence.pk}", [])
        for acu in sentence.acus.all():
            acu.hint_list = hints.get(f"a{acu.pk}", [])
    return render(
        request,
        "annotation/review.html",
        {
            "reference": reference,
            "document": reference.document,
            "sentences": sentences,
            # on the whole reference, or on an ACU deleted since (its text kept): not under any ACU
            "reference_comments": reference.comments.filter(acu__isnull=True).select_related("author"),
            "can_review": can_review,
            "guidelines": guidelines_for(reference.document.dataset),
            "reviewers": lead_review.possible_reviewers(reference),
        },
    )


@role_required(AUTHOR)
@get_goes_back("authoring_review", "Nothing was saved or decided yet: do it again.")
def review_action(request, reference_id: int, action: str):
    """Security behavior: the reviewer (never the writer). Actions: comment, changes, approve
    (a decision names the version the page showed, refused when the reference changed since).
    A GET (the sign-in page's way back after a session ended) decides nothing."""
    seen = request.POST.get("version", "")
    seen = int(seen) if seen.isdecimal() else None
    try:
        if action == "comment":
            acu_id = request.POST.get("acu", "")
            authoring.add_comment(
                reference_id=reference_id,
                user=request.user,
                text=request.POST.get("text", ""),
                acu_id=_whole_number(acu_id, "The ACU") if acu_id else None,
            )
            messages.success(request, "Comment saved.")
            return redirect("authoring_review", reference_id=reference_id)
        if action == "changes":
            authoring.request_changes(reference_id=reference_id, user=request.user, base_version=seen)
            messages.success(request, "Sent back to the writer with your comments.")
        elif action == "approve":
            authoring.approve(reference_id=reference_id, user=request.user, base_version=seen)
            messages.success(request, "Approved: its ACUs can now be used in crowd tasks.")
        else:
            messages.error(request, "Unknown action.")
            return redirect("authoring_review", reference_id=reference_id)
    except authoring.AlreadyDone as exc:  # the same decision again (a second tab, Back): not an error
        messages.info(request, str(exc))
        return redirect("authoring_review", reference_id=reference_id)
    except authoring.AuthoringError as exc:
        messages.error(request, str(exc))
        return redirect("authoring_review", reference_id=reference_id)
    except Reference.DoesNotExist:
        raise Http404("No such reference.") from None
    return redirect("authoring_queue")


@role_required(LEAD)
def overview(request, dataset_id: int):
    """Security behavior: leads only. Authoring progress per author, assignment of
    references and the guideline text."""
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    if request.method == "POST":
        try:
            if "guidelines" in request.POST:
                refuse_control_characters(request.POST["guidelines"], "The guidelines")
                dataset.guidelines = request.POST["guidelines"]
                dataset.save(update_fields=["guidelines"])
                messages.success(request, "Guidelines saved.")
            elif "predraft" in request.POST:
                drafter = request.POST.get("drafter", DEFAULT_DRAFTER)
                if drafter not in available_drafters():
                    raise authoring.AuthoringError(f"The {drafter} drafter is not available here.")
                job = DraftJob.objects.create(dataset=dataset, drafter=drafter, created_by=request.user)
                tasks.start_predraft(job.pk)
                messages.success(request, f"Pre-drafting with {drafter} started.")
            else:
                given = authoring.assign_references(dataset=dataset, **_assignment(request.POST))
                if not any(given.values()):
                    raise authoring.AuthoringError(
                        "No reference is left to assign (each has a writer or is approved): nothing was assigned."
                    )
                messages.success(request, "Assigned: " + ", ".join(f"{u} {n}" for u, n in given.items()))
        except (authoring.AuthoringError, ValueError) as exc:
            messages.error(request, str(exc) or "Invalid input.")
        return redirect("authoring_overview", dataset_id=dataset.pk)
    references = (
        Reference.objects.filter(document__dataset=dataset)
        .select_related("document", "writer", "reviewer")
        .order_by("document__position")
    )
    missing = extras.missing_features()
    return render(
        request,
        "annotation/authoring_overview.html",
        {
            "dataset": dataset,
            "overview": authoring_progress.authoring_overview(dataset),
            "authors": authoring.authors(),
            "references": references,
            "guidelines": guidelines_for(dataset),
            "drafters": available_drafters(),
            "draft_job": drafting.job_progress(dataset.draft_jobs.filter(kind=DraftJob.Kind.PREDRAFT).first()),
            "budget_job": drafting.job_progress(dataset.draft_jobs.filter(kind=DraftJob.Kind.BUDGET).first()),
            "judges": [(j, missing.get(j, "")) for j in _judge_names()],
            "extras_missing": missing,
            "extras_install": extras.INSTALL,
        },
    )


def _assignment(form) -> dict:
    """The assignment form's authors, count and reviewer as ids and a number, else a message saying so."""
    count, reviewer = form.get("count", "").strip(), form.get("reviewer", "").strip()
    try:
        return {
            "author_ids": [int(x) for x in form.getlist("authors")],
            "count": int(count) if count else None,
            "reviewer_id": int(reviewer) if reviewer else None,
        }
    except ValueError:
        raise authoring.AuthoringError(
            "Authors, count and reviewer must be chosen from the form's lists and numbers."
        ) from None


def _hints_by_id(state: dict) -> dict:
    """The atomicity hints of a reference keyed "s<sentence id>" and "a<ACU id>", for the review page."""
    hints = {}
    for sentence in state["sentences"]:
        hints[f"s{sentence['id']}"] = sentence["hints"]
        for acu in sentence["acus"]:
            hints[f"a{acu['id']}"] = acu["hints"]
    return hints


BUDGET_JUDGES = ["lexical", "embedding"]  # the scoring side says so clearly when one cannot run here


def _judge_names() -> list[str]:
    """Judges the human-unit budget can use (annotation does not import scoring, which runs them)."""
    return list(BUDGET_JUDGES)


@role_required(LEAD)
def draft_job(request, dataset_id: int, job_id: int):
    """Security behavior: leads only. The pre-drafting job's progress as JSON (polled)."""
    job = get_object_or_404(DraftJob, pk=job_id, dataset_id=dataset_id)
    return JsonResponse(drafting.job_progress(job))
