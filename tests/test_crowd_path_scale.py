"""The crowd path at scale: next task, task page and submit in a fixed, small number of
queries on a database holding 200k assignments of other batches; open places kept exact;
staleness from the round's version."""

from contextlib import contextmanager

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from hits import places, versions
from hits.models import Assignment, Batch, Worker
from hits.services import handout, review
from hits.services.simulate import simulate_crowd
from hits.services.submission import submit_assignment, task_token
from scoring.runs.selectors import latest_run
from scoring.runs.services import compute_scores, is_stale

from .crowd_data import all_answers, published_batch

OTHER_ASSIGNMENTS = 200_000


def _fill_other_batches(dataset, n_batches=100, n_workers=50):
    """n_batches full, published in-house batches of the dataset's summaries, each HIT with
    n_workers submitted assignments: written with INSERT ... SELECT in a few statements."""
    first = Batch.objects.bulk_create(
        [
            Batch(dataset=dataset, name=f"other {i}", status=Batch.Status.PUBLISHED, assignments_per_hit=n_workers)
            for i in range(n_batches)
        ]
    )
    batch_ids = [b.pk for b in first]
    workers = Worker.objects.bulk_create(
        [Worker(provider=Worker.Provider.INHOUSE, external_id=f"other-{i}") for i in range(n_workers)]
    )
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO hits_hit (batch_id, summary_id, max_assignments, acu_count, reward, external_id, open_places)
               SELECT b, s.id, %s, 0, 0.15, '', 0 FROM unnest(%s::bigint[]) AS b, annotation_summary s
               WHERE s.document_id IN (SELECT id FROM annotation_document WHERE dataset_id = %s)""",
            [n_workers, batch_ids, dataset.pk],
        )
        cursor.execute(
            """INSERT INTO hits_assignment (hit_id, worker_id, status, created_at, submitted_at, comment, feedback,
                                            external_id, confirmed, flag)
               SELECT h.id, w, 'submitted', now(), now(), '', '', '', true, ''
               FROM hits_hit h, unnest(%s::bigint[]) AS w WHERE h.batch_id = ANY(%s)""",
            [[w.pk for w in workers], batch_ids],
        )
        cursor.execute("ANALYZE hits_hit; ANALYZE hits_assignment")
    return Assignment.objects.filter(hit__batch_id__in=batch_ids).count()


@pytest.fixture
def crowded(transactional_db, worker):
    batch = published_batch(assignments=3)
    others = _fill_other_batches(batch.dataset)
    assert others >= OTHER_ASSIGNMENTS
    return batch, _worker_of(worker)


def _worker_of(user):
    from hits.views.worker import inhouse_worker

    return inhouse_worker(user)


TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")


@contextmanager
def max_statements(n):
    """At most n SQL statements besides transaction control (BEGIN, COMMIT, savepoints)."""
    with CaptureQueriesContext(connection) as captured:
        yield
    statements = [q["sql"] for q in captured.captured_queries if not q["sql"].upper().startswith(TRANSACTION_CONTROL)]
    assert len(statements) <= n, f"{len(statements)} statements, at most {n} expected:\n" + "\n".join(statements)


def test_next_task_page_and_submit_in_a_few_queries_whatever_else_is_stored(
    crowded, client, django_assert_max_num_queries
):
    """A real transaction per call (as under gunicorn)."""
    batch, worker = crowded
    handout.next_assignment(worker, batch)  # a first handout and submit create the round's version rows
    first = Assignment.objects.get(worker=worker)
    submit_assignment(assignment_id=first.pk, worker_id=worker.pk, answers=all_answers(first))

    # The pick, the insert and the place count, in one transaction (BEGIN and COMMIT are round trips too).
    with django_assert_max_num_queries(2 + 3), max_statements(3):
        assignment = handout.next_assignment(worker)
    assert assignment.hit.batch_id == batch.pk and assignment.hit_id != first.hit_id

    token = task_token(assignment)
    with max_statements(3), django_assert_max_num_queries(3):  # the assignment (HIT, summary), sentences, ACUs
        page = client.get(reverse("task", args=[token]))
    assert page.status_code == 200

    answers = all_answers(assignment)
    # The assignment, the ids of its ACUs, the judgments, its update, the round's version; then the
    # coalesced recompute requests (the dataset's scores and the round's: a write asks, a page only reads).
    with django_assert_max_num_queries(2 + 5 + 2), max_statements(5 + 2):
        submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=answers)
    # A repeat: the assignment and its stored answers, found the same.
    with django_assert_max_num_queries(2 + 2), max_statements(2):
        reply = client.post(reverse("task_submit", args=[token]), {"answers": answers}, content_type="application/json")
    assert reply.status_code == 200 and reply.json()["repeated"]
    second = handout.next_assignment(worker)
    answers = all_answers(second)
    token = task_token(second)
    with django_assert_max_num_queries(2 + 5 + 2), max_statements(5 + 2):
        reply = client.post(reverse("task_submit", args=[token]), {"answers": answers}, content_type="application/json")
    assert reply.status_code == 200 and reply.json()["ok"] and not reply.json()["repeated"]
    second.refresh_from_db()
    assert second.status == Assignment.Status.SUBMITTED and second.judgments.count() == len(answers)


def test_the_next_task_request_in_seven_queries(crowded, client, worker, django_assert_max_num_queries):
    """The whole request: the session, the user, their roles, the worker, the handout (three,
    between BEGIN and COMMIT)."""
    batch, _ = crowded
    client.force_login(worker)
    with django_assert_max_num_queries(7 + 2), max_statements(7):
        reply = client.post(reverse("work_next"))
    assert reply.status_code == 302 and "/task/" in reply["Location"]
    assert Assignment.objects.get(worker__user=worker, status=Assignment.Status.ASSIGNED).hit.batch_id == batch.pk


def test_open_places_follow_every_change(db, make_user):
    batch = published_batch(assignments=2)
    hit = batch.hits.order_by("pk").first()
    batch.hits.exclude(pk=hit.pk).delete()
    a_user, b_user = make_user("pa", "worker"), make_user("pb", "worker")
    a, b = _worker_of(a_user), _worker_of(b_user)

    def open_places():
        hit.refresh_from_db()
        return hit.open_places

    assert open_places() == 2
    first = handout.next_assignment(a)
    assert open_places() == 1
    second = handout.next_assignment(b)
    assert open_places() == 0
    submit_assignment(assignment_id=first.pk, worker_id=a.pk, answers=all_answers(first))
    assert open_places() == 0  # submitted work still holds its place
    review.reject(assignment_id=first.pk, feedback="Answers at random.")
    assert open_places() == 1
    review.block_worker(worker_id=b.pk, reason="Left the project.")
    assert open_places() == 2
    Assignment.objects.filter(pk=second.pk).update(status=Assignment.Status.SUBMITTED)  # a write behind our back
    places.refresh(hit_ids=[hit.pk])
    assert open_places() == 1


def test_staleness_is_the_rounds_version(db, make_user, django_assert_max_num_queries):
    batch = published_batch(assignments=4)
    dataset = batch.dataset
    simulate_crowd(batch, workers=3, accuracy=0.85, seed=2)  # three of four places per HIT
    worker = _worker_of(make_user("sw", "worker"))
    run = compute_scores(dataset, batch, n_resamples=50)
    with django_assert_max_num_queries(1):
        assert not is_stale(run, dataset, batch)
    a = handout.next_assignment(worker, batch)
    assert not is_stale(run, dataset, batch)  # an assignment handed out changes no counted judgment
    submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=all_answers(a))
    assert is_stale(run, dataset, batch)
    run = compute_scores(dataset, batch, n_resamples=50)
    dataset_run = compute_scores(dataset, n_resamples=50)
    assert not is_stale(run, dataset, batch) and not is_stale(dataset_run, dataset)
    review.set_excluded(worker_id=worker.pk, excluded=True)
    assert is_stale(run, dataset, batch) and is_stale(dataset_run, dataset)
    run = compute_scores(dataset, batch, n_resamples=50)
    review.set_excluded(worker_id=worker.pk, excluded=True)  # no change: no new version
    assert not is_stale(run, dataset, batch)
    review.reject(assignment_id=a.pk, feedback="Not careful.")
    assert is_stale(run, dataset, batch)
    assert versions.current(dataset.pk, batch.pk) >= 3


def test_pages_read_only_the_parts_of_a_run_they_show(db, django_assert_max_num_queries):
    batch = published_batch(assignments=3)
    simulate_crowd(batch, workers=3, accuracy=0.85, seed=1)
    full = compute_scores(batch.dataset, batch, n_resamples=50)
    with django_assert_max_num_queries(1), CaptureQueriesContext(connection) as captured:
        part = latest_run(batch.dataset, batch, parts=("alpha", "counts"))
    assert part.pk == full.pk and set(part.outputs) == {"alpha", "counts"}
    assert part.outputs["alpha"] == full.outputs["alpha"] and part.outputs["counts"] == full.outputs["counts"]
    sql = captured.captured_queries[0]["sql"]
    assert '"scoring_scoringrun"."outputs",' not in sql and '"scoring_scoringrun"."outputs" FROM' not in sql
