"""What a task page shows (reads only): the assignment, its HIT's summary, the reference's
sentences and the ACUs the HIT asks about. The HTML is templates/hits/task.html and its partials."""

from annotation.models import ReferenceSentence
from hits.models import HIT, Assignment


def content(hit: HIT) -> dict:
    """The task page's content for `hit` (its summary loaded): the summary, the reference's
    sentences (texts, in order) and the ACUs asked about (a triage HIT: only its own), read by
    the summary's document, so the document and reference rows are not loaded."""
    sentences = ReferenceSentence.objects.filter(reference__document_id=hit.summary.document_id).order_by("position")
    return {
        "summary": hit.summary,
        "sentences": list(sentences.values_list("text", flat=True)),
        "acus": list(hit.task_acus().only("pk", "text")),
    }


def assignment_page(assignment_id: int, worker_id: int) -> tuple[Assignment, dict] | None:
    """The assignment (of that worker) and its task page's content, or None: three queries (the
    assignment with its HIT, batch and summary; the sentences; the ACUs)."""
    assignment = (
        Assignment.objects.select_related("hit__summary", "hit__batch")
        .filter(pk=assignment_id, worker_id=worker_id)
        .first()
    )
    if assignment is None:
        return None
    return assignment, {"hit": assignment.hit, "batch": assignment.hit.batch, **content(assignment.hit)}
