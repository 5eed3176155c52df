"""Task links and submissions.

A task page is opened with a signed token naming the assignment and its worker, so it
works without session cookies (providers embed it in iframes, where browsers may block
them). A submission is stored (assignment and all judgments, one transaction) before the
worker is told it succeeded; sending the same submission again returns the same result.
"""

import math
import random
from dataclasses import dataclass

from django.core import signing
from django.db import connection, transaction
from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import ACU, Reference, Summary
from hits import statements, versions
from hits.models import HIT, Assignment, Batch, Judgment, RoundVersion

TOKEN_SALT = "hits.task"
MAX_COMMENT = 2000


class SubmissionRefused(Exception):
    """The submission cannot be accepted; the message is for the worker."""


def task_token(assignment: Assignment) -> str:
    """A link that opens this assignment until its deadline plus TASK_TOKEN_MARGIN."""
    from django.conf import settings

    if assignment.deadline:
        expires = int(assignment.deadline.timestamp()) + settings.TASK_TOKEN_MARGIN
    else:
        expires = int(timezone.now().timestamp()) + settings.TASK_TOKEN_MAX_AGE
    return signing.dumps({"a": assignment.pk, "w": assignment.worker_id, "e": expires}, salt=TOKEN_SALT, compress=True)


def read_token(token: str, max_age_seconds: int | None = None) -> tuple[int, int]:
    """(assignment id, worker id) of a token; raises SubmissionRefused if it was tampered with
    or has expired (links without an expiry, from earlier releases, last TASK_TOKEN_MAX_AGE)."""
    from django.conf import settings

    try:
        data = signing.loads(token, salt=TOKEN_SALT, max_age=max_age_seconds or settings.TASK_TOKEN_MAX_AGE)
        ids = int(data["a"]), int(data["w"])
        expires = data.get("e")
    except signing.SignatureExpired:
        raise SubmissionRefused("This task link has expired. Open the task again from your work page.") from None
    except (signing.BadSignature, KeyError, TypeError, ValueError, AttributeError):
        raise SubmissionRefused("This task link is not valid. Open the task again from your work page.") from None
    if expires is not None and (not isinstance(expires, int) or expires < timezone.now().timestamp()):
        raise SubmissionRefused("This task link has expired. Open the task again from your work page.")
    return ids


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


def _check_complete(answers: dict[int, bool], acu_total: int, acu_answered: int) -> None:
    """Every ACU of the HIT answered, and nothing else: `acu_answered` is how many of the
    answered ids are ACUs of the HIT's reference (counted in the database)."""
    if acu_answered < len(answers):
        raise SubmissionRefused("The answers name facts that are not part of this task; reload the task.")
    missing = acu_total - acu_answered
    if missing:
        raise SubmissionRefused(f"{missing} of {acu_total} facts have no answer yet; answer all before submitting.")


def _reference_acus(ids=None):
    if ids is not None and not ids:
        return Value(0)
    acus = ACU.objects.filter(reference__document_id=OuterRef("hit__summary__document_id"))
    if ids is not None:
        acus = acus.filter(pk__in=ids)
    counted = acus.order_by().values("reference__document_id").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


# What a submission reads (not the texts of the summary or the document).
_SUBMIT_FIELDS = [
    *(f.name for f in Assignment._meta.concrete_fields),
    "hit__acu_ids",
    "hit__gold_answers",
    "hit__batch__dataset_id",
    "hit__batch__assignment_duration_seconds",
]


def submit_assignment(
    *,
    assignment_id: int,
    worker_id: int,
    answers: dict,
    comment: str = "",
    active_seconds: float | None = None,
    now=None,
) -> SubmissionResult:
    """Store a worker's answers for every ACU of the HIT, once.

    Four queries whatever the size of the database: the assignment (locked, with its HIT and
    batch and the counts of its reference's ACUs, all and answered), the judgments, the
    assignment's update and the round's version."""
    now = now or timezone.now()
    parsed = _parse_answers(answers)
    if connection.vendor == "postgresql":
        written = _submit_in_one_statement(assignment_id, worker_id, parsed, comment, active_seconds, now)
        if written is not None:
            return SubmissionResult(written, created=True)
    with transaction.atomic():
        assignment = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("hit__batch")
            .only(*_SUBMIT_FIELDS)
            .annotate(acu_total=_reference_acus(), acu_answered=_reference_acus(list(parsed)))
            .filter(pk=assignment_id)
            .first()
        )
        if assignment is None or assignment.worker_id != worker_id:
            raise SubmissionRefused("This task is not yours.")
        if assignment.hit.acu_ids:  # a triage HIT asks about some ACUs only: exactly those
            wanted, given = set(assignment.hit.acu_ids), set(parsed)
            if given - wanted:
                raise SubmissionRefused("The answers name facts that are not part of this task; reload the task.")
            if wanted - given:
                raise SubmissionRefused(
                    f"{len(wanted - given)} of {len(wanted)} facts have no answer yet; answer all before submitting."
                )
        else:
            _check_complete(parsed, assignment.acu_total, assignment.acu_answered)
        if assignment.status in (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.REJECTED):
            stored = dict(assignment.judgments.values_list("acu_id", "present"))
            if stored == parsed:
                return SubmissionResult(assignment, created=False)
            raise SubmissionRefused("This task was already submitted with other answers; it cannot be changed.")
        if assignment.status == Assignment.Status.EXPIRED or (assignment.deadline and assignment.deadline <= now):
            raise SubmissionRefused("The time for this task ran out and it was given to someone else. Take a new task.")
        Judgment.objects.bulk_create(
            [
                Judgment(assignment=assignment, acu_id=acu_id, present=present)
                for acu_id, present in sorted(parsed.items())
            ]
        )
        assignment.status = Assignment.Status.SUBMITTED
        assignment.submitted_at = now
        assignment.comment = (comment or "").strip()[:MAX_COMMENT]
        fields = ["status", "submitted_at", "comment"]
        if active_seconds is not None:
            assignment.active_seconds = max(
                0.0, min(float(active_seconds), assignment.hit.batch.assignment_duration_seconds)
            )
            fields.append("active_seconds")
        gold = assignment.hit.gold_answers
        if gold:
            assignment.gold_total = len(gold)
            assignment.gold_correct = sum(int(parsed.get(int(a)) is v) for a, v in gold.items())
            fields += ["gold_total", "gold_correct"]
        assignment.save(update_fields=fields)
        if assignment.confirmed:  # unconfirmed provider work counts (and bumps) once confirmed
            versions.bump(assignment.hit.batch.dataset_id, assignment.hit.batch_id)
        transaction.on_commit(lambda: _after_submit(assignment.hit.batch_id, assignment.hit.batch.dataset_id))
    return SubmissionResult(assignment, created=True)


def _submit_in_one_statement(
    assignment_id: int, worker_id: int, parsed: dict[int, bool], comment: str, active_seconds, now
) -> Assignment | None:
    """PostgreSQL, the common case as one statement (one round trip, atomic on its own): an
    assigned, unexpired assignment of this worker whose HIT asks about every ACU of its
    reference, answered completely. The judgments, the assignment's update (gold counts
    included) and the round's version are written together, as `submit_assignment` writes them.
    None when any of that does not hold: nothing was written, and the caller takes the general
    path, which says why (or finds an identical earlier submission)."""
    active = None
    if active_seconds is not None:
        try:
            active = float(active_seconds)
        except (TypeError, ValueError):
            return None
        if not math.isfinite(active):
            return None
    sql, params = _submit_sql(assignment_id, worker_id, parsed, (comment or "").strip()[:MAX_COMMENT], active, now)
    row = statements.fetch_one(sql, params)
    if row is None:
        return None
    fields = [f.attname for f in Assignment._meta.concrete_fields]
    assignment = Assignment.from_db(connection.alias, fields, row[: len(fields)])
    batch_id, dataset_id = row[len(fields) :]
    transaction.on_commit(lambda: _after_submit(batch_id, dataset_id))
    return assignment


def _submit_sql(
    assignment_id: int, worker_id: int, parsed: dict[int, bool], comment: str, active: float | None, now
) -> tuple[str, dict]:
    """The statement of `_submit_in_one_statement`: checks in `mine` and `complete` (no row:
    nothing is written), then the judgments, the assignment and the version in data-modifying
    CTEs. A triage HIT (some ACUs only) or gold answers keyed by anything but ACU ids take the
    general path."""
    q = connection.ops.quote_name
    assignment_t, hit_t, batch_t = q(Assignment._meta.db_table), q(HIT._meta.db_table), q(Batch._meta.db_table)
    summary_t, acu_t, reference_t = q(Summary._meta.db_table), q(ACU._meta.db_table), q(Reference._meta.db_table)
    judgment_t, version_t = q(Judgment._meta.db_table), q(RoundVersion._meta.db_table)
    columns = ", ".join(f"a.{q(str(f.column))}" for f in Assignment._meta.concrete_fields)
    has_gold = "(jsonb_typeof(c.gold) = 'object' AND c.gold <> '{}'::jsonb)"
    ids = sorted(parsed)
    sql = f"""
        WITH ans AS (
            SELECT * FROM unnest(%(ids)s::bigint[], %(present)s::boolean[]) AS t(acu_id, present)
        ), mine AS (
            SELECT a.id, a.confirmed, h.batch_id, b.dataset_id, b.assignment_duration_seconds AS duration,
                   h.gold_answers AS gold, s.document_id
            FROM {assignment_t} a
            JOIN {hit_t} h ON h.id = a.hit_id
            JOIN {batch_t} b ON b.id = h.batch_id
            JOIN {summary_t} s ON s.id = h.summary_id
            WHERE a.id = %(assignment)s AND a.worker_id = %(worker)s AND a.status = %(assigned)s
              AND (a.deadline IS NULL OR a.deadline > %(now)s)
              AND (h.acu_ids IS NULL OR h.acu_ids IN ('null'::jsonb, '[]'::jsonb))
              AND (h.gold_answers IS NULL OR h.gold_answers = 'null'::jsonb
                   OR (jsonb_typeof(h.gold_answers) = 'object' AND NOT EXISTS (
                       SELECT 1 FROM jsonb_object_keys(h.gold_answers) k WHERE k !~ '^[0-9]{{1,18}}$')))
            FOR UPDATE OF a
        ), c AS (
            SELECT mine.* FROM mine
            WHERE (SELECT count(*) FROM {acu_t} u JOIN {reference_t} r ON r.id = u.reference_id
                   WHERE r.document_id = mine.document_id) = %(n)s
              AND (SELECT count(*) FROM {acu_t} u JOIN {reference_t} r ON r.id = u.reference_id
                   WHERE r.document_id = mine.document_id AND u.id = ANY(%(ids)s::bigint[])) = %(n)s
        ), judged AS (
            INSERT INTO {judgment_t} (assignment_id, acu_id, present)
            SELECT c.id, ans.acu_id, ans.present FROM c, ans ORDER BY ans.acu_id
        ), bumped AS (
            INSERT INTO {version_t} AS v (dataset_id, round_id, stripe, version)
            SELECT c.dataset_id, r, %(stripe)s, 1 FROM c, unnest(ARRAY[0, c.batch_id]) AS r WHERE c.confirmed
            ON CONFLICT (dataset_id, round_id, stripe) DO UPDATE SET version = v.version + 1
        ), stored AS (
            UPDATE {assignment_t} a SET
                status = %(submitted)s, submitted_at = %(now)s, comment = %(comment)s,
                active_seconds = CASE WHEN %(active)s::float8 IS NULL THEN a.active_seconds
                                      ELSE GREATEST(0, LEAST(%(active)s::float8, c.duration)) END,
                gold_total = CASE WHEN {has_gold} THEN (SELECT count(*) FROM jsonb_object_keys(c.gold))
                                  ELSE a.gold_total END,
                gold_correct = CASE WHEN {has_gold} THEN (
                    SELECT count(*) FROM jsonb_each(c.gold) g JOIN ans ON ans.acu_id = g.key::bigint
                    WHERE g.value = to_jsonb(ans.present)) ELSE a.gold_correct END
            FROM c WHERE a.id = c.id
            RETURNING {columns}, c.batch_id, c.dataset_id
        )
        SELECT * FROM stored
    """
    params = {
        "ids": ids,
        "present": [parsed[i] for i in ids],
        "assignment": assignment_id,
        "worker": worker_id,
        "assigned": Assignment.Status.ASSIGNED.value,
        "submitted": Assignment.Status.SUBMITTED.value,
        "now": now,
        "n": len(ids),
        "comment": comment,
        "active": active,
        "stripe": random.randrange(versions.STRIPES),
    }
    return sql, params


def _after_submit(batch_id: int, dataset_id: int | None = None) -> None:
    """Hook for work that follows a stored submission (score recomputes)."""
    from hits import signals

    signals.submission_stored.send(sender=Assignment, batch_id=batch_id, dataset_id=dataset_id)
