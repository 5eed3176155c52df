"""Task links and submissions.

A task page is opened with a signed token naming the assignment and its worker, so it
works without session cookies (providers embed it in iframes, where browsers may block
them). A submission is stored (assignment and all judgments, one transaction) before the
worker is told it succeeded; sending the same submission again returns the same result.
"""

import logging
import math
from dataclasses import dataclass

from django.core import signing
from django.db import transaction
from django.utils import timezone

from hits import versions
from hits.allocation import service as allocation
from hits.allocation.policy import ADAPTIVE_KINDS
from hits.models import Assignment, Batch, Judgment, Worker
from hits.ratings import page as rating_page
from hits.release import release_overdue
from hits.services import expert as expert_round
from hits.services import ratings as rating_service
from hits.services.qualification import unanswered_facts

logger = logging.getLogger(__name__)

TOKEN_SALT = "hits.task"
EXPERT_ONLY = "This is an expert-round task: only its expert, signed in, can open and submit it."
MAX_COMMENT = 2000


class SubmissionRefused(Exception):
    """The submission cannot be accepted; the message is for the worker. `final`: no retry of this
    task can succeed (its time ran out, it is someone else's, it was stored with other answers), so
    the page stops offering Submit."""

    def __init__(self, message: str, *, final: bool = False):
        super().__init__(message)
        self.final = final


def task_token(assignment: Assignment) -> str:
    """A link that opens this assignment until its deadline plus TASK_TOKEN_MARGIN."""
    from django.conf import settings

    if assignment.deadline:
        expires = int(assignment.deadline.timestamp()) + settings.TASK_TOKEN_MARGIN
    else:
        expires = int(timezone.now().timestamp()) + settings.TASK_TOKEN_MAX_AGE
    return signing.dumps({"a": assignment.pk, "w": assignment.worker_id, "e": expires}, salt=TOKEN_SALT, compress=True)


EXPIRED_LINK = (
    "This task link has expired: the task's time ran out. Answers submitted before then are saved; "
    "nothing more can be sent with this link. Open your work page for the next task."
)
NOT_VALID = "This task link is not valid. Open the task again from your work page."
# A task given or taken back before its deadline (`taken_back`): answers sent for it, and its
# expired link (`link_refusal`), opened or sent after that deadline.
TAKEN_BACK = (
    "This task was taken back before its time ran out, so these answers were not stored and its place "
    "went to other workers."
)
TAKEN_BACK_LINK = (
    "This task was taken back before its time ran out: its place went to other workers, and it is not paid. "
    "Nothing can be sent with this link. Open your work page for the next task."
)


class LinkExpired(SubmissionRefused):
    """A task link past its expiry, its signature good: EXPIRED_LINK, with the (assignment id,
    worker id) it names (`ids`, None when they cannot be read), so the caller can say what became
    of the task instead (`link_refusal`)."""

    def __init__(self, ids: tuple[int, int] | None):
        super().__init__(EXPIRED_LINK, final=True)
        self.ids = ids


def _ids(data) -> tuple[int, int]:
    return int(data["a"]), int(data["w"])


def read_token(token: str, max_age_seconds: int | None = None) -> tuple[int, int]:
    """(assignment id, worker id) of a token; raises SubmissionRefused if it was tampered with
    (NOT_VALID) or LinkExpired if it has expired (links without an expiry, from earlier releases,
    last TASK_TOKEN_MAX_AGE)."""
    from django.conf import settings

    try:
        data = signing.loads(token, salt=TOKEN_SALT, max_age=max_age_seconds or settings.TASK_TOKEN_MAX_AGE)
        ids = _ids(data)
        expires = data.get("e")
    except signing.SignatureExpired:
        raise LinkExpired(_expired_ids(token)) from None
    except (signing.BadSignature, KeyError, TypeError, ValueError, AttributeError):
        raise SubmissionRefused(NOT_VALID) from None
    if expires is not None and (not isinstance(expires, int) or expires < timezone.now().timestamp()):
        raise LinkExpired(ids)  # past the assignment's deadline: no retry can succeed
    return ids


def _expired_ids(token: str) -> tuple[int, int] | None:
    """The ids of a token whose signature checked out but is too old (SignatureExpired is raised
    only after the signature is verified), or None."""
    try:
        return _ids(signing.loads(token, salt=TOKEN_SALT))
    except (signing.BadSignature, KeyError, TypeError, ValueError, AttributeError):
        return None


def link_refusal(refused: SubmissionRefused, taken_back_message: str) -> SubmissionRefused:
    """What to tell the holder of a refused task link: `refused`, unless it is an expired link
    (LinkExpired) of a crowd assignment given or taken back before its deadline (`taken_back`),
    whose time did not run out: then a final refusal saying `taken_back_message` (TAKEN_BACK
    for answers sent, TAKEN_BACK_LINK for the page)."""
    if not isinstance(refused, LinkExpired) or refused.ids is None:
        return refused
    assignment_id, worker_id = refused.ids
    assignment = (
        Assignment.objects.select_related("worker")
        .only("deadline", "released_at", "worker_id", "worker__blocked_at")
        .filter(pk=assignment_id, worker_id=worker_id, status=Assignment.Status.EXPIRED)
        .exclude(hit__batch__kind=Batch.Kind.EXPERT)  # an expert round's task: only its expert learns more
        .first()
    )
    if assignment is None or not taken_back(assignment, timezone.now(), assignment.worker.blocked_at):
        return refused
    return SubmissionRefused(taken_back_message, final=True)


@dataclass
class SubmissionResult:
    assignment: Assignment
    created: bool  # False: an identical earlier submission was found (idempotent retry)


def _parse_answers(raw: dict) -> dict[int, bool]:
    """{ACU id: present} from the posted answers (ids checked against the HIT in the database)."""
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
    return answers


def _check_complete(answers: dict[int, bool], wanted: set[int]) -> None:
    """Every ACU the HIT asks about answered, and nothing else."""
    given = set(answers)
    if given - wanted:
        raise SubmissionRefused("The answers name facts that are not part of this task; reload the task.")
    if wanted - given:
        raise SubmissionRefused(f"{unanswered_facts(len(wanted - given), len(wanted))}; answer all before submitting.")


def checked_answers(hit, answers) -> dict[int, bool] | dict[int, int]:
    """Posted answers parsed and checked against the HIT (every ACU it asks about, or a rating
    HIT's every summary, nothing else), for answers held before they become an assignment's
    (MTurk's task page)."""
    parsed = _parse(hit, answers)
    _check(hit, parsed)
    return parsed


def _parse(hit, answers):
    """A rating HIT's {summary id: 1-5} (hits.ratings), an ACU HIT's {ACU id: present}."""
    if not hit.batch.protocol:
        return _parse_answers(answers)
    try:
        return rating_page.parse(answers)
    except rating_page.RatingsRefused as exc:
        raise SubmissionRefused(str(exc)) from None


def _check(hit, parsed) -> None:
    if not hit.batch.protocol:
        _check_complete(parsed, set(hit.task_acus().order_by().values_list("pk", flat=True)))
        return
    try:
        rating_page.check_complete(hit, parsed)
    except rating_page.RatingsRefused as exc:
        raise SubmissionRefused(str(exc)) from None


def has_answers(assignment: Assignment) -> bool:
    """Whether the assignment's answers are stored: its judgments, or a rating batch's ratings."""
    return assignment.judgments.exists() or assignment.ratings.exists()


def clean_comment(comment) -> str:
    """The worker's comment as stored: text, without NUL (pasted from a PDF, or a hand-made post:
    the database refuses it, and the answers with it), at most MAX_COMMENT characters."""
    return str(comment or "").replace("\x00", "").strip()[:MAX_COMMENT]


def clamped_active_seconds(value, allowed: int, elapsed: float | None = None) -> float | None:
    """The time the page says the worker spent, as stored: clamped to [0, the time allowed] and,
    when known, to `elapsed`, the wall-clock seconds since the worker got the task (a page, or a
    script posting to it, cannot claim more work than the time since the handout; the pay
    calibration and the hourly figures read this). None (not stored) for anything that is not a
    finite number: it is the browser's measurement, and a bad one should not cost the worker
    their answers."""
    if value is None or isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(seconds):
        return None
    limit = float(allowed) if elapsed is None else min(float(allowed), max(0.0, elapsed))
    return max(0.0, min(seconds, limit))


# What a submission reads (not the texts of the summary or the document).
_SUBMIT_FIELDS = [
    *(f.name for f in Assignment._meta.concrete_fields),
    "hit__acu_ids",
    "hit__gold_answers",
    "hit__summary__document_id",
    "hit__batch__dataset_id",
    "hit__batch__assignment_duration_seconds",
    "hit__batch__allocation",
    "hit__batch__kind",
    "hit__batch__protocol",
]


def submit_assignment(
    *,
    assignment_id: int,
    worker_id: int,
    answers: dict,
    comment: str = "",
    active_seconds: float | None = None,
    now=None,
    expert=None,
    handed_out_at=None,
) -> SubmissionResult:
    """Store a worker's answers for every ACU of the HIT, once. An expert round's assignment
    (its labels are gold) is stored only for `expert`, the signed-in user it was handed to
    (hits.services.expert.owns); the token alone is not enough.

    The active seconds stored are at most the time from the handout to `now`: the assignment's
    creation, or `handed_out_at` when the worker got the task before the row was written (MTurk's
    AcceptTime: its rows are written by the sync, after the work).

    Five queries whatever the size of the database, in one transaction: the assignment (locked,
    with its HIT and batch), the ids of the ACUs the HIT asks about, the judgments, the
    assignment's update and the round's version."""
    now = now or timezone.now()
    if not isinstance(answers, dict):
        raise SubmissionRefused("The answers are missing.")
    try:
        return _store(assignment_id, worker_id, answers, comment, active_seconds, now, expert, handed_out_at)
    except _TimeRanOut as late:
        raise SubmissionRefused(_released(late.assignment, now), final=True) from None


class _TimeRanOut(Exception):
    def __init__(self, assignment: Assignment):
        super().__init__(assignment.pk)
        self.assignment = assignment


def _released(assignment: Assignment, now) -> str:
    """Release a late assignment's place at once (and its batch's other overdue ones, as the
    handout would) and say what happened (one released before its deadline was taken back)."""
    release_overdue(now=now, batch_id=assignment.hit.batch_id)
    blocked_at = Worker.objects.filter(pk=assignment.worker_id).values_list("blocked_at", flat=True).first()
    if assignment.status == Assignment.Status.EXPIRED and taken_back(assignment, now, blocked_at):
        return TAKEN_BACK
    when = f" at {timezone.localtime(assignment.deadline):%H:%M %Z}" if assignment.deadline else ""
    return (
        f"The time for this task ran out{when}, so these answers were not stored and the task went back "
        "to the other workers."
    )


def taken_back(assignment: Assignment, now, blocked_at=None) -> bool:
    """Whether a released assignment went back before its deadline (its worker gave it back, was
    blocked, its session gave its places back), not because its time ran out. Its `released_at`
    (written by a give-back and a block) says so for good: released before the deadline, it reads
    so once that deadline has passed too. Without it (a session's release, work released before the
    field): its deadline is still to come, or (`blocked_at`, its worker's block) it was after the
    block, which gives back all they hold (`review.block_worker`)."""
    if assignment.released_at is not None:
        return assignment.deadline is None or assignment.released_at < assignment.deadline
    if assignment.deadline is None:
        return False
    return assignment.deadline > now or (blocked_at is not None and assignment.deadline > blocked_at)


def _store(assignment_id: int, worker_id: int, answers: dict, comment, active_seconds, now, expert, handed_out_at):
    with transaction.atomic():
        assignment = _locked(assignment_id, worker_id, expert)
        rating = bool(assignment.hit.batch.protocol)  # a rating batch's HIT (hits.ratings)
        parsed = _parse(assignment.hit, answers)
        if assignment.status in (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.REJECTED):
            # A repeat is the stored (complete) answers again, or refused.
            if _stored_answers(assignment, rating) == parsed:
                return SubmissionResult(assignment, created=False)
            raise SubmissionRefused(
                "This task was already submitted with other answers; it cannot be changed.", final=True
            )
        _check(assignment.hit, parsed)
        if assignment.status == Assignment.Status.EXPIRED or (assignment.deadline and assignment.deadline <= now):
            raise _TimeRanOut(assignment)
        if rating:
            rating_service.store(assignment, parsed)
        else:
            Judgment.objects.bulk_create(
                [
                    Judgment(assignment=assignment, acu_id=acu_id, present=present)
                    for acu_id, present in sorted(parsed.items())
                ]
            )
        elapsed = (now - (handed_out_at or assignment.created_at)).total_seconds()
        assignment.save(update_fields=_submitted(assignment, parsed, comment, active_seconds, now, elapsed))
        batch = assignment.hit.batch
        adaptive = batch.allocation in ADAPTIVE_KINDS
        if assignment.confirmed:  # unconfirmed provider work counts (and bumps) once confirmed
            versions.bump(batch.dataset_id, batch.pk, rating=rating)
        if assignment.confirmed and adaptive:
            # the adaptive policy: maybe one more place, in this transaction (hits/allocation/service.py);
            # unconfirmed provider work is decided on when the sync confirms it
            allocation.decide(assignment.hit_id)
        transaction.on_commit(lambda: _after_submit(batch.pk, batch.dataset_id, adaptive=adaptive))
    return SubmissionResult(assignment, created=True)


def _locked(assignment_id: int, worker_id: int, expert) -> Assignment:
    """The worker's assignment, locked for the submission; refused when it is not theirs (or an
    expert round's assignment outside its expert's session)."""
    assignment = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("hit__batch", "hit__summary")
        .only(*_SUBMIT_FIELDS)
        .filter(pk=assignment_id)
        .first()
    )
    if assignment is None or assignment.worker_id != worker_id:
        raise SubmissionRefused("This task is not yours.", final=True)
    if assignment.hit.batch.kind == Batch.Kind.EXPERT and not expert_round.owns(expert, assignment):
        raise SubmissionRefused(EXPERT_ONLY, final=True)
    return assignment


def _stored_answers(assignment: Assignment, rating: bool) -> dict:
    if rating:
        return rating_service.stored(assignment)
    return dict(assignment.judgments.values_list("acu_id", "present"))


def _submitted(assignment: Assignment, parsed: dict, comment, active_seconds, now, elapsed: float) -> list[str]:
    """Set the submitted assignment's fields (status, time, comment, active time, gold score);
    the names of the fields set. `elapsed`: wall-clock seconds since the handout."""
    assignment.status = Assignment.Status.SUBMITTED
    assignment.submitted_at = now
    assignment.comment = clean_comment(comment)
    fields = ["status", "submitted_at", "comment"]
    if assignment.hit.batch.kind == Batch.Kind.EXPERT:
        # Expert work (hits.services.expert) is unpaid and not reviewed: approved as it is
        # stored, like imported labels, so no approval ever writes a ledger row for it.
        assignment.status = Assignment.Status.APPROVED
        assignment.reviewed_at = now
        fields.append("reviewed_at")
    seconds = clamped_active_seconds(active_seconds, assignment.hit.batch.assignment_duration_seconds, elapsed)
    if seconds is not None:
        assignment.active_seconds = seconds
        fields.append("active_seconds")
    elif active_seconds is not None:
        logger.info(
            "assignment %s: active_seconds %r is not a finite number, not stored",
            assignment.pk,
            str(active_seconds)[:40],
        )
    gold = assignment.hit.gold_answers
    if gold:
        assignment.gold_total = len(gold)
        assignment.gold_correct = sum(int(parsed.get(int(a)) is v) for a, v in gold.items())
        fields += ["gold_total", "gold_correct"]
    return fields


def _after_submit(batch_id: int, dataset_id: int | None = None, *, adaptive: bool = False) -> None:
    """Hook for work that follows a stored submission (score recomputes)."""
    from hits import signals

    signals.submission_stored.send(sender=Assignment, batch_id=batch_id, dataset_id=dataset_id, adaptive=adaptive)
