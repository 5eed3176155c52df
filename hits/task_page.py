"""What a task page shows, read in one statement and its ACU rows rendered without the template loop.

The task page is the crowd path's most frequent page. Through the ORM it took three queries
(the assignment with its HIT and summary, the reference's sentences, the HIT's ACUs), each built
and compiled per request, and the template's loop over the ACU rows was a good part of the
rendering. On PostgreSQL the page's content is now one written statement (the sentences and
the ACUs as JSON arrays of subqueries); elsewhere (SQLite, the demo) the ORM reads the same.
The ACU rows are the markup the template's loop made, built by `acu_rows` (escaped the way
the template escapes): the page's HTML is unchanged.
"""

import json
from typing import NamedTuple

from django.db import connection
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from annotation.models import ACU, Reference, ReferenceSentence, Summary
from hits import statements
from hits.models import HIT, Assignment


class TaskACU(NamedTuple):
    pk: int
    text: str


def _sentences_and_acus_sql(document: str, acu_ids: str) -> str:
    """Two subqueries over the summary's document (the SQL expression `document`): the
    reference's sentences (texts, in order) and the ACUs asked about ([id, text] pairs, in
    reference order; only those of `acu_ids`, a jsonb array, when it is a non-empty array)."""
    sentence_t, acu_t, reference_t = ReferenceSentence._meta.db_table, ACU._meta.db_table, Reference._meta.db_table
    ids = f"(CASE jsonb_typeof({acu_ids}) WHEN 'array' THEN {acu_ids} END)"  # NULL unless an array
    return f"""
        (SELECT json_agg(rs.text ORDER BY rs.position) FROM {sentence_t} rs
         JOIN {reference_t} r ON r.id = rs.reference_id WHERE r.document_id = {document}),
        (SELECT json_agg(json_build_array(c.id, c.text) ORDER BY cs.position, c.position) FROM {acu_t} c
         JOIN {reference_t} r ON r.id = c.reference_id JOIN {sentence_t} cs ON cs.id = c.sentence_id
         WHERE r.document_id = {document}
           AND (COALESCE(jsonb_array_length({ids}), 0) = 0
                OR c.id IN (SELECT jsonb_array_elements_text({ids})::bigint)))"""


def _content(summary: Summary, texts: list[str] | None, acus: list[TaskACU]) -> dict:
    texts = texts or []
    return {
        "summary": summary,
        "reference_text": "".join(f"{text} " for text in texts),
        "acus": acus,
        "acu_rows": acu_rows(acus),
    }


def content(hit: HIT) -> dict:
    """The task page's content for `hit` (its summary loaded): the summary, the reference
    text, the ACUs asked about and their rows."""
    summary = hit.summary
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {_sentences_and_acus_sql('%(document)s', '%(acu_ids)s::jsonb')}",
                {"document": summary.document_id, "acu_ids": json.dumps(hit.acu_ids) if hit.acu_ids else None},
            )
            texts, pairs = cursor.fetchone()
        return _content(summary, texts, _acus(pairs))
    sentences = ReferenceSentence.objects.filter(reference__document_id=summary.document_id).order_by("position")
    return _content(summary, [s.text for s in sentences], [TaskACU(acu.pk, acu.text) for acu in hit.task_acus()])


def _acus(pairs) -> list[TaskACU]:
    """The ACUs from their [id, text] pairs (a json column: the driver decodes json, while
    Django has it leave jsonb as text)."""
    return [TaskACU(pk, text) for pk, text in pairs or ()]


def assignment_page(assignment_id: int, worker_id: int) -> tuple[Assignment, dict] | None:
    """The assignment (of that worker) and its task page's content, or None: on PostgreSQL
    one statement for the assignment, its HIT, summary, sentences and ACUs."""
    if connection.vendor != "postgresql":
        try:
            assignment = Assignment.objects.select_related("hit__summary", "hit__batch").get(
                pk=assignment_id, worker_id=worker_id
            )
        except Assignment.DoesNotExist:
            return None
        return assignment, {"hit": assignment.hit, "batch": assignment.hit.batch, **content(assignment.hit)}
    assignment_t, hit_t, summary_t = Assignment._meta.db_table, HIT._meta.db_table, Summary._meta.db_table
    fields = Assignment._meta.concrete_fields
    columns = ", ".join(f"a.{connection.ops.quote_name(str(f.column))}" for f in fields)
    sql = f"""
        SELECT {columns}, h.summary_id, h.acu_ids, s.document_id, s.text,
        {_sentences_and_acus_sql("s.document_id", "h.acu_ids")}
        FROM {assignment_t} a JOIN {hit_t} h ON h.id = a.hit_id JOIN {summary_t} s ON s.id = h.summary_id
        WHERE a.id = %s AND a.worker_id = %s"""
    with connection.cursor() as cursor:
        statements.execute(cursor, sql, [assignment_id, worker_id])
        row = cursor.fetchone()
    if row is None:
        return None
    n = len(fields)
    assignment = Assignment.from_db(connection.alias, [f.attname for f in fields], row[:n])
    summary_id, acu_ids, document_id, text, texts, pairs = row[n:]
    summary = Summary(id=summary_id, document_id=document_id, text=text)
    if isinstance(acu_ids, str):  # Django has the driver leave jsonb as text (JSONField decodes it)
        acu_ids = json.loads(acu_ids)
    hit = HIT(id=assignment.hit_id, summary_id=summary_id, acu_ids=acu_ids)
    return assignment, {"hit": hit, **_content(summary, texts, _acus(pairs))}


_ROW = (
    '\n      <li class="acu-row" tabindex="0" data-acu="{pk}" aria-label="Fact {n}: {text}">'
    '\n        <span class="acu-fact">{text}</span>'
    '\n        <span class="choices">'
    '\n          <button type="button" class="choice yes" data-value="1" aria-pressed="false" tabindex="-1">'
    "<kbd>1</kbd> Present</button>"
    '\n          <button type="button" class="choice no" data-value="0" aria-pressed="false" tabindex="-1">'
    "<kbd>2</kbd> Not present</button>"
    "\n        </span>"
    "\n      </li>"
    "\n      "
)


def acu_rows(acus: list[TaskACU]) -> SafeString:
    """The rows of the task form, as templates/hits/task.html's loop over the ACUs made them."""
    return mark_safe("".join(_ROW.format(pk=int(acu.pk), n=n, text=escape(acu.text)) for n, acu in enumerate(acus, 1)))
