"""Crowd fixtures: the demo dataset with a published in-house batch."""

import threading
import time

from django.db import connection

from annotation.models import Dataset
from hits.batch_fields import BatchSpec
from hits.services.batches import create_batch, publish_batch
from hits.services.dataset_import import import_dataset

from .conftest import DEMO_ROSE


def demo_dataset(name="demo") -> Dataset:
    import_dataset(DEMO_ROSE, name=name, fmt="rose")
    return Dataset.objects.get(name=name)


# The new batch form's fields at their defaults (in-house): tests add the fields they set.
BATCH_FORM = {
    "provider": "inhouse",
    "assignments": 3,
    "lifetime_hours": 168,
    "assignment_minutes": 60,
    "auto_approve_hours": 72,
}


def batch_of(dataset, **options):
    """create_batch with the settings of a BatchSpec and the service's own arguments mixed, as tests write them."""
    chosen = {
        key: options.pop(key)
        for key in ("systems", "references", "documents", "qualification_test", "seed")
        if key in options
    }
    return create_batch(dataset=dataset, spec=BatchSpec(**options), **chosen)


def published_batch(dataset=None, **options):
    dataset = dataset or demo_dataset()
    options.setdefault("assignments", 3)
    return publish_batch(batch_of(dataset, **options))


def simulated_round(seed=4):
    """The demo dataset with a crowd round worked by 3 simulated workers and a spammer."""
    from hits.services.simulate import simulate_crowd

    dataset = demo_dataset()
    batch = published_batch(dataset)
    simulate_crowd(batch, workers=3, accuracy=0.9, spammers=1, seed=seed)
    return dataset, batch


def all_answers(assignment, present=True) -> dict:
    ids = assignment.hit.summary.document.reference.acus.values_list("pk", flat=True)
    return {str(i): present for i in ids}


def work_all(worker, batch, present=True) -> None:
    """The worker takes and submits the batch's tasks until the handout has none for them,
    answering every ACU `present` (or not)."""
    from hits.services import handout
    from hits.services.submission import submit_assignment

    while True:
        try:
            assignment = handout.next_assignment(worker, batch)
        except handout.NoWork:
            return
        submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=all_answers(assignment, present))


# Seconds a concurrency test waits for the other connection's next step before it gives up: waits
# end as soon as their condition holds, so a passing run takes no longer and a busy machine does not fail it.
WAIT = 60


def waiting_on_a_lock(timeout: float = WAIT) -> bool:
    """Whether another connection to the test database waits for a lock (polled until `timeout` s;
    PostgreSQL). This thread's own connection is left out. Inside a transaction too: PostgreSQL
    keeps one snapshot of pg_stat_activity per transaction unless told to take a fresh one."""
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)


def at_once(*calls):
    """Run the calls in threads released together; their results, and any exception raised."""
    barrier = threading.Barrier(len(calls))
    results, errors = [], []

    def run(call):
        try:
            barrier.wait()
            results.append(call())
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(repr(exc))
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, errors


def scored(dataset, batch=None) -> None:
    """The recomputes the writes asked for after their commits (which a test's transaction never
    runs): the dataset's scores and, with a round, the round's. Pages only read them."""
    from scoring.runs.services import current_scores

    for scope in (None, batch) if batch else (None,):
        current_scores(dataset, scope, trigger="test", parts=())


def just_short(sheet) -> tuple[dict[str, bool], float]:
    """Answers to the qualification `sheet` with one fact wrong, and a pass mark they fall just
    short of without the bound deciding (hits.qualification_bound): halfway between their score
    and its upper bound. The wrong fact is one that keeps the bound above the score (the
    Clopper-Pearson bound is above the score whenever a fact is wrong; the search stays as a
    guard)."""
    from hits.qualification_bound import upper_bound
    from hits.services import qualification

    truth = {qualification.answer_key(item.pk, acu): value for item in sheet for acu, value in item.answers.items()}
    for key in truth:
        given = {**truth, key: not truth[key]}
        graded = qualification.grade(sheet, given)
        bound = upper_bound(graded.present_right, graded.present, graded.absent_right, graded.absent)
        if bound > graded.score + 0.002:
            return given, (graded.score + bound) / 2
    raise AssertionError("no single wrong answer leaves this sheet undecided")
