"""Task links and submissions.

A task page is opened with a signed token naming the assignment and its worker, so it
works without session cookies (providers embed it in iframes, where browsers may block
them). A submission is stored (assignment and all judgments, one transaction) before the
worker is told it succeeded; sending the same submission again returns the same result.
"""
from dataclasses import dataclass

from django.core import signing
from django.db import transaction
from django.utils import timezone

from hits.models import Assignment, Judgment

TOKEN_SALT = "hits.task"
MAX_COMMENT = 2000


class SubmissionRefused(Exception):
    """The submission cannot be accepted; the message is for the worker."""


def task_token(assignment: Assignment) -> str:
    return signing.dumps({"a": assignment.pk, "w": assignment.worker_id}, salt=TOKEN_SALT, compress=True)


def read_token(token: str, max_age_seconds: int | None = None) -> tuple[int, int]:
    """(assignment id, worker id) of a token; raises SubmissionRefused if it was tampered with."""
    try:
        data = signing.loads(token, salt=TOKEN_SALT, max_age=max_age_seconds)
        return int(data["a"]), int(data["w"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise SubmissionRefused("This task link is not valid. Open the task again from your work page.") from None


@dataclass
class SubmissionResult:
    assignment: Assignment
    created: bool  # False: an identical earlier submission was found (idempotent retry)


def _parse_answers(raw: dict, acu_ids: list[int]) -> dict[int, bool]:
    if not isinstance(raw, dict):
        raise SubmissionRefused("The answers are missing.")
    answers = {}
    for key, value in raw.items():
        try:
            acu_id = int(key)
        except (TypeError, ValueError):
            raise SubmissionRefused(f"Unknown fact {key!r} in the answers.") from None
        if value in (True, 1, "1", "true", "present", "yes"):
            answers[acu_id] = True
        elif value in (False, 0, "0", "false", "absent", "no"):
            answers[acu_id] = False
        else:
            raise SubmissionRefused(f"The answer for fact {acu_id} must be present or not present.")
    unknown = set(answers) - set(acu_ids)
    if unknown:
        raise SubmissionRefused("The answers name facts that are not part of this task; reload the task.")
    missing = [i for i in acu_ids if i not in answers]
    if missing:
        raise SubmissionRefused(f"{len(missing)} of {len(acu_ids)} facts have no answer yet; answer all before submitting.")
    return answers


def submit_assignment(
    *, assignment_id: int, worker_id: int, answers: dict, comment: str = "", active_seconds: float | None = None,
    now=None,
) -> SubmissionResult:
    """Store a worker's answers for every ACU of the HIT, once."""
    now = now or timezone.now()
    with transaction.atomic():
        assignment = (
            Assignment.objects.select_for_update(of=("self",)).select_related("hit__summary__document__reference", "hit__batch")
            .filter(pk=assignment_id).first()
        )
        if assignment is None or assignment.worker_id != worker_id:
            raise SubmissionRefused("This task is not yours.")
        acu_ids = list(assignment.hit.task_acus().values_list("pk", flat=True))
        parsed = _parse_answers(answers, acu_ids)
        if assignment.status in (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.REJECTED):
            stored = dict(assignment.judgments.values_list("acu_id", "present"))
            if stored == parsed:
                return SubmissionResult(assignment, created=False)
            raise SubmissionRefused("This task was already submitted with other answers; it cannot be changed.")
        if assignment.status == Assignment.Status.EXPIRED or (assignment.deadline and assignment.deadline <= now):
            raise SubmissionRefused("The time for this task ran out and it was given to someone else. Take a new task.")
        Judgment.objects.bulk_create(
            [Judgment(assignment=assignment, acu_id=acu_id, present=parsed[acu_id]) for acu_id in acu_ids]
        )
        assignment.status = Assignment.Status.SUBMITTED
        assignment.submitted_at = now
        assignment.comment = (comment or "").strip()[:MAX_COMMENT]
        if active_seconds is not None:
            assignment.active_seconds = max(0.0, min(float(active_seconds), assignment.hit.batch.assignment_duration_seconds))
        gold = assignment.hit.gold_answers
        if gold:
            assignment.gold_total = len(gold)
            assignment.gold_correct = sum(int(parsed.get(int(a)) is v) for a, v in gold.items())
        assignment.save()
        transaction.on_commit(lambda: _after_submit(assignment.hit.batch_id))
    return SubmissionResult(assignment, created=True)


def _after_submit(batch_id: int) -> None:
    """Hook for work that follows a stored submission (score recomputes)."""
    from hits import signals

    signals.submission_stored.send(sender=Assignment, batch_id=batch_id)
