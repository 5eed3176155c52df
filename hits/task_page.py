"""What a task page shows (reads only): the assignment, its HIT's summary, the reference's
sentences and the ACUs the HIT asks about, and the context of the task page a provider's session
shows (Prolific, panel, MTurk). The HTML is templates/hits/task.html and its partials."""

from django.db.models import Sum
from django.urls import reverse
from django.utils import timezone

from annotation.models import ReferenceSentence
from hits.models import HIT, Assignment, LedgerEntry
from hits.ratings import page as rating_page
from hits.services.submission import SubmissionRefused, read_token, taken_back


def content(hit: HIT, seed: str = "") -> dict:
    """The task page's content for `hit` (its summary loaded): the summary, the reference's
    sentences (texts, in order) and the ACUs asked about (a triage HIT: only its own), read by
    the summary's document, so the document and reference rows are not loaded. A rating HIT:
    its example's summaries in the order of `seed` (the worker) and what its protocol shows."""
    if hit.batch.protocol:
        return rating_page.content(hit, seed)
    sentences = ReferenceSentence.objects.filter(reference__document_id=hit.summary.document_id).order_by("position")
    return {
        "summary": hit.summary,
        "sentences": list(sentences.values_list("text", flat=True)),
        "acus": list(hit.task_acus().only("pk", "text")),
    }


# What the task page reads of the assignment and its HIT (not the batch, the HIT's gold answers
# or the summary's other columns).
_PAGE_FIELDS = (
    "status",
    "deadline",
    "released_at",  # given back before its deadline (submission.taken_back)
    "external_id",  # in-house work (none) may be given back
    "worker_id",
    "worker__blocked_at",
    "hit__acu_ids",
    "hit__summary__text",
    "hit__summary__document_id",
    "hit__batch__kind",
    "hit__batch__protocol",
    "hit__batch__instructions",
)


def assignment_page(assignment_id: int, worker_id: int) -> tuple[Assignment, dict] | None:
    """The assignment (of that worker) and its task page's content, or None: three queries (the
    assignment with its HIT and summary; the sentences; the ACUs)."""
    assignment = (
        Assignment.objects.select_related("hit__summary", "hit__batch", "worker")
        .only(*_PAGE_FIELDS)
        .filter(pk=assignment_id, worker_id=worker_id)
        .first()
    )
    if assignment is None:
        return None
    return assignment, {"hit": assignment.hit, **content(assignment.hit, str(worker_id))}


def closed(assignment: Assignment) -> str:
    """Why the task can no longer be answered: "submitted", "expired" (released, or held past its
    deadline and not yet released: it must not open as a live task), "withdrawn" (released before
    its deadline: its worker was blocked, its session gave its places back), or "" while it is open.
    Reads the assignment's worker (loaded with it)."""
    if assignment.status == Assignment.Status.EXPIRED:
        return "withdrawn" if taken_back(assignment, timezone.now(), assignment.worker.blocked_at) else "expired"
    if assignment.status != Assignment.Status.ASSIGNED:
        return "submitted"
    if assignment.deadline is not None and assignment.deadline <= timezone.now():
        return "expired"
    return ""


def status_shown(assignment: Assignment, blocked_at=None) -> tuple[str, str]:
    """(code, label) of an assignment's status as its worker reads it (My work): one given or taken
    back before its time ran out (`taken_back`: its `released_at`; `blocked_at`, its worker's block)
    is "withdrawn", "Taken back", also once its old deadline has passed; it is stored as expired,
    which said its time ran out."""
    if assignment.status == Assignment.Status.EXPIRED and taken_back(assignment, timezone.now(), blocked_at):
        return "withdrawn", "Taken back"
    return assignment.status, assignment.get_status_display()


def recent_tasks(worker, count: int = 20) -> list[dict]:
    """The worker's latest assignments, newest first, each with its status as they read it
    (`status_shown`) and its pay (`pay`, None when it is not paid; `pay_note`: "paid", or "once
    approved" while it can still be): {"assignment", "status", "label", "pay", "pay_note"}."""
    latest = list(worker.assignments.select_related("hit__summary__document").order_by("-created_at")[:count])
    paid = dict(
        LedgerEntry.objects.filter(assignment__in=latest, kind=LedgerEntry.Kind.REWARD)
        .order_by()
        .values_list("assignment_id")
        .annotate(total=Sum("amount"))
    )
    rows = []
    for a in latest:
        status, label = status_shown(a, worker.blocked_at)
        pay, note = None, ""
        if a.status == Assignment.Status.APPROVED:
            pay, note = paid.get(a.pk, a.hit.reward), "paid"
        elif status in (Assignment.Status.SUBMITTED, Assignment.Status.ASSIGNED):
            pay, note = a.hit.reward, "once approved"
        rows.append({"assignment": a, "status": status, "label": label, "pay": pay, "pay_note": note})
    return rows


def task_context(hit: HIT, seed: str = "") -> dict:
    """What a task page shows: the summary, the reference's sentences and the HIT's ACUs (a
    rating HIT: its summaries in the order of `seed`, the worker)."""
    return {"hit": hit, "batch": hit.batch, **content(hit, seed)}


def session_assignment(token: str, provider: str, session_model, key_field: str):
    """(assignment, session) a provider session's signed task link names (Prolific, panel): the
    assignment of a worker of `provider`, and the session of its batch and worker whose `key_field`
    is the assignment's external id; (None, None) when the link is not valid."""
    try:
        assignment_id, worker_id = read_token(token)
        assignment = Assignment.objects.select_related("hit__summary__document__reference", "hit__batch", "worker").get(
            pk=assignment_id, worker_id=worker_id, worker__provider=provider
        )
        session = session_model.objects.get(
            batch_id=assignment.hit.batch_id, worker_id=worker_id, **{key_field: assignment.external_id}
        )
    except (SubmissionRefused, Assignment.DoesNotExist, session_model.DoesNotExist):
        return None, None
    return assignment, session


def session_task_context(assignment: Assignment, token: str, *, provider: str, progress, **extra) -> dict:
    """The task page of a provider session's assignment (Prolific, panel): the in-house task page
    with the session's progress (tasks done, of how many); `extra` adds the provider's own links."""
    done, total = progress
    return {
        **task_context(assignment.hit, str(assignment.worker_id)),
        "assignment": assignment,
        "preview": False,
        "embedded": True,
        "done": closed(assignment),
        "submit_url": reverse("task_submit", args=[token]),
        "storage_key": f"{provider}-{assignment.pk}",
        "after_submit": provider,
        "position": min(done + 1, total),
        "total": total,
        **extra,
    }
