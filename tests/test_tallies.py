"""The running counts PostgreSQL keeps per batch (hits.tallies) equal a recount of the rows,
whatever path changed them, and writers of one batch never wait for each other (issue 14)."""

import io
import itertools
import threading
from collections import Counter
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection, connections, transaction
from django.db.models import Sum
from django.utils import timezone

from hits import tallies, versions
from hits.models import HIT, Assignment, Batch, LedgerEntry, Tally, Worker
from hits.release import release_overdue
from hits.selectors import figures
from hits.services import review
from hits.services.handout import next_assignment
from hits.services.simulate import simulate_crowd
from hits.services.submission import submit_assignment
from scoring.results import dashboard

from .crowd_data import WAIT, all_answers, demo_dataset, published_batch

pytestmark = pytest.mark.django_db


def _tallied(batch_ids) -> dict:
    out: Counter = Counter()
    for batch_id, what, minute, n, amount in Tally.objects.filter(batch_id__in=batch_ids).values_list(
        "batch_id", "what", "minute", "n", "amount"
    ):
        out[(batch_id, what, minute, "n")] += n
        out[(batch_id, what, minute, "amount")] += amount
    return {k: v for k, v in out.items() if v}


def _counted(batch_ids) -> dict:
    """The same keys counted from the rows themselves."""
    out: Counter = Counter()
    for batch_id in HIT.objects.filter(batch_id__in=batch_ids).values_list("batch_id", flat=True):
        out[(batch_id, "hits", 0, "n")] += 1
    for batch_id, status, submitted_at in Assignment.objects.filter(hit__batch_id__in=batch_ids).values_list(
        "hit__batch_id", "status", "submitted_at"
    ):
        out[(batch_id, status, 0, "n")] += 1
        if submitted_at is not None:
            out[(batch_id, tallies.SUBMISSIONS, int(submitted_at.timestamp() // 60), "n")] += 1
    for batch_id, kind, amount in LedgerEntry.objects.filter(batch_id__in=batch_ids).values_list(
        "batch_id", "kind", "amount"
    ):
        out[(batch_id, tallies.LEDGER + kind, 0, "n")] += 1
        out[(batch_id, tallies.LEDGER + kind, 0, "amount")] += amount
    return {k: v for k, v in out.items() if v}


def _batch_ids():
    return list(Batch.objects.values_list("pk", flat=True))


def test_every_path_that_moves_rows_is_counted():
    dataset = demo_dataset()  # an imported round, written with COPY
    batch = published_batch(dataset)  # HITs by bulk_create
    simulate_crowd(batch, workers=3, accuracy=0.9, spammers=1, seed=2)  # handouts and submissions
    done = list(Assignment.objects.filter(hit__batch=batch).order_by("pk"))
    review.approve(assignment_id=done[0].pk)  # status change and a reward in the ledger
    review.reject(assignment_id=done[1].pk, feedback="careless")
    LedgerEntry.objects.create(batch=batch, worker=done[2].worker, kind="bonus", amount=Decimal("1.25"), key="b1")
    Assignment.objects.filter(pk=done[3].pk).update(submitted_at=timezone.now() - timedelta(hours=1))  # bulk update
    newcomer = Worker.objects.create(provider="inhouse", external_id="newcomer")
    held = next_assignment(newcomer, batch)
    Assignment.objects.filter(pk=held.pk).update(deadline=timezone.now() - timedelta(minutes=1))
    release_overdue()
    other = published_batch(dataset)
    latecomer = Worker.objects.create(provider="inhouse", external_id="latecomer")
    mine = next_assignment(latecomer, other)
    submit_assignment(assignment_id=mine.pk, worker_id=latecomer.pk, answers=all_answers(mine))
    HIT.objects.filter(batch=other).exclude(pk=mine.hit_id).delete()  # cascades to nothing, HITs go

    ids = _batch_ids()
    assert _tallied(ids) == _counted(ids)
    statuses = {key[1] for key in _counted(ids)}
    assert {"approved", "rejected", "expired", "submitted", "ledger:reward", "ledger:bonus"} <= statuses


def test_compaction_folds_each_key_into_one_row_and_keeps_the_sums():
    batch = published_batch()
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=3)
    ids = _batch_ids()
    before, rows = _tallied(ids), Tally.objects.count()
    gone = Batch.objects.create(dataset=batch.dataset, name="gone")
    Tally.objects.create(batch_id=gone.pk, what="hits", n=5)
    Tally.objects.create(batch_id=batch.pk, what=tallies.SUBMISSIONS, minute=1, n=7)  # long ago
    Batch.objects.filter(pk=gone.pk).delete()

    assert tallies.compact() > 0
    assert _tallied(ids) == before
    keys = Tally.objects.values_list("batch_id", "what", "minute")
    assert len(keys) == len(set(keys)) < rows
    assert not Tally.objects.filter(batch_id=gone.pk).exists() and not Tally.objects.filter(minute=1).exists()
    assert tallies.compact() == 0  # nothing left to fold


def test_rebuild_recounts_what_bypassed_the_triggers():
    batch = published_batch()
    simulate_crowd(batch, workers=2, accuracy=0.9, seed=5)
    ids = _batch_ids()
    Tally.objects.all().delete()
    assert _tallied(ids) == {}
    assert tallies.rebuild([batch.pk]) > 0
    assert _tallied([batch.pk]) == _counted([batch.pk])
    tallies.rebuild()
    assert _tallied(ids) == _counted(ids)


def test_progress_and_spend_read_only_the_tallies(django_assert_max_num_queries):
    batch = published_batch()
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=6)
    review.approve(assignment_id=Assignment.objects.filter(hit__batch=batch).first().pk)
    Tally.objects.filter(batch_id=batch.pk, what=Assignment.Status.SUBMITTED).update(n=0)  # a made-up count
    # The batch's row, its HITs' places, its places past their deadline, its tallies; whether
    # places wait for nobody is read once a minute (hits.selectors.waiting.WAITING_SECONDS), not by every poll.
    figures.progress(figures.scope_batches(batch.dataset, batch))
    with django_assert_max_num_queries(4):
        progress = figures.progress(figures.scope_batches(batch.dataset, batch))
    with django_assert_max_num_queries(2):  # the batch's row, its tallies
        spend = figures.spend(figures.scope_batches(batch.dataset, batch))
    approved = Assignment.objects.filter(hit__batch=batch, status="approved").count()
    assert progress["done"] == approved  # what the tallies say, not a count of the assignments
    assert spend["total"] == LedgerEntry.objects.filter(batch=batch).aggregate(s=Sum("amount"))["s"] > 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_submissions_of_one_batch_do_not_wait_for_each_other(monkeypatch):
    stripes = itertools.count()  # the round-version stripes of the two submissions differ
    monkeypatch.setattr(versions.random, "randrange", lambda n: next(stripes) % n)
    batch = published_batch()
    early, first, second = (Worker.objects.create(provider="inhouse", external_id=f"w{i}") for i in range(3))
    warm = next_assignment(early, batch)  # the round's first submission creates its version rows
    submit_assignment(assignment_id=warm.pk, worker_id=early.pk, answers=all_answers(warm))
    mine, theirs = next_assignment(first, batch), next_assignment(second, batch)
    holding, released = threading.Event(), threading.Event()
    errors = []

    def hold_an_open_submission():
        try:
            with transaction.atomic():
                submit_assignment(assignment_id=mine.pk, worker_id=first.pk, answers=all_answers(mine))
                holding.set()
                released.wait(WAIT)
        except Exception as exc:  # noqa: BLE001 - any failure of the thread is reported below
            errors.append(exc)
        finally:
            holding.set()
            connections.close_all()

    thread = threading.Thread(target=hold_an_open_submission)
    thread.start()
    try:
        assert holding.wait(WAIT)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            submit_assignment(assignment_id=theirs.pk, worker_id=second.pk, answers=all_answers(theirs))
    finally:
        released.set()
        thread.join()
    assert not errors
    ids = [batch.pk]
    assert _tallied(ids) == _counted(ids)
    assert figures.batch_progress(batch)["done"] == 3


def test_the_rebuild_command_and_the_compaction_task():
    from django.core.management import CommandError, call_command

    from hits.tasks import compact_tallies

    batch = published_batch()
    simulate_crowd(batch, workers=2, accuracy=0.9, seed=7)
    Tally.objects.filter(batch_id=batch.pk).delete()
    out = io.StringIO()
    call_command("rebuild_tallies", "--batch", str(batch.pk), stdout=out)
    assert f"batches {batch.pk}" in out.getvalue() and _tallied([batch.pk]) == _counted([batch.pk])
    with pytest.raises(CommandError, match="No batch with id 999999"):
        call_command("rebuild_tallies", "--batch", "999999")
    simulate_crowd(published_batch(batch.dataset), workers=2, accuracy=0.9, seed=8)
    assert compact_tallies() > 0 and _tallied(_batch_ids()) == _counted(_batch_ids())


def _reference_counts() -> dict:
    from annotation.models import Reference

    counted: Counter = Counter(Reference.objects.values_list("document__dataset_id", "status"))
    return dict(counted)


def _reference_tallied() -> dict:
    from annotation.models import ReferenceTally

    out: Counter = Counter()
    for dataset_id, status, n in ReferenceTally.objects.values_list("dataset_id", "status", "n"):
        out[(dataset_id, status)] += n
    return {k: v for k, v in out.items() if v}


def test_references_per_authoring_state_are_counted_on_every_path(make_user):
    from annotation import tallies as reference_tallies
    from annotation.models import Dataset, Document, Reference

    demo_dataset()  # imported with COPY
    other = Dataset.objects.create(name="authored")
    for i in range(4):
        document = Document.objects.create(dataset=other, external_id=f"d{i}", position=i, source="Text.")
        Reference.objects.create(document=document, word_count=3)
    refs = list(Reference.objects.filter(document__dataset=other).order_by("pk"))
    Reference.objects.filter(pk__in=[r.pk for r in refs[:2]]).update(status=Reference.Status.WRITING)  # bulk
    refs[2].status = Reference.Status.IN_REVIEW
    refs[2].save()
    refs[3].document.delete()  # the reference goes with its document
    assert _reference_tallied() == _reference_counts()
    assert {s for _, s in _reference_counts()} >= {"writing", "in_review", "approved"}
    Dataset.objects.filter(pk=other.pk).delete()
    assert reference_tallies.compact() > 0
    assert _reference_tallied() == _reference_counts()
    assert reference_tallies.rebuild() > 0 and _reference_tallied() == _reference_counts()
    dataset = Dataset.objects.get(name="demo")
    with_tallies = dashboard.authoring_states(dataset)
    assert sum(s["count"] for s in with_tallies) == Reference.objects.filter(document__dataset=dataset).count() > 0
