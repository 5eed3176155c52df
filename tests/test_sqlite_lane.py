"""Two requests at once on the same work: stored once, no "database is locked" (issue 25, item 7).

A newcomer's double click on "Done: send to review" on the embedded default (SQLite) gave
OperationalError: database is locked: two deferred transactions both read, then both asked to
write, and SQLite refuses the second lock upgrade at once, whatever the busy timeout. Every
transaction now begins IMMEDIATE (config/settings.py). These tests run in both lanes of
scripts/test.sh, on a SQLite file in the second one (WAL and locking as in scripts/run.sh)."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Reference
from annotation.services import authoring
from hits.models import Assignment, Judgment
from hits.services import handout
from hits.services.submission import task_token

from .authoring_data import unauthored_dataset
from .conftest import PASSWORD
from .crowd_data import all_answers, at_once, published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.portable, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("clicks", [2, 5])
def test_double_click_on_send_to_review_sends_it_once(tmp_path, make_user, clicks):
    author, reviewer = make_user("arthur-author", "author"), make_user("bea-author", "author")
    dataset = unauthored_dataset(tmp_path)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1, reviewer_id=reviewer.pk)
    reference = Reference.objects.get(writer=author)
    first, *others = reference.sentences.all()
    authoring.save_reference(
        reference_id=reference.pk,
        user=author,
        base_version=0,
        sentences=[{"id": first.pk, "acus": [{"id": None, "text": "Koirala sleeps outdoors."}]}]
        + [{"id": s.pk, "acus": []} for s in others],
    )
    reference.refresh_from_db()
    version = reference.version
    clients = [Client() for _ in range(clicks)]
    for client in clients:
        assert client.login(username=author.username, password=PASSWORD)
    url = reverse("authoring_submit", args=[reference.pk])

    responses, errors = at_once(*[lambda client=client: client.post(url) for client in clients])

    assert errors == []
    assert [r.status_code for r in responses] == [302] * clicks
    targets = sorted(r.url for r in responses)
    # One click sent it (back to the queue); the others found it in review (back to the editor).
    assert targets.count(reverse("authoring_queue")) == 1
    assert targets.count(reverse("authoring_write", args=[reference.pk])) == clicks - 1
    reference.refresh_from_db()
    assert reference.status == Reference.Status.IN_REVIEW
    assert reference.reviewer == reviewer
    assert reference.version == version + 1


def test_the_same_submission_posted_at_once_is_stored_once():
    batch = published_batch(gold_share=0.0)
    (worker,) = make_workers(1)
    assignment = handout.next_assignment(worker, batch)
    # handed out a minute ago: the 30 s claimed are within the time since
    Assignment.objects.filter(pk=assignment.pk).update(created_at=timezone.now() - timedelta(minutes=1))
    answers = all_answers(assignment)
    url = reverse("task_submit", args=[task_token(assignment)])
    body = json.dumps({"answers": answers, "active_seconds": 30})

    responses, errors = at_once(*[lambda: Client().post(url, body, content_type="application/json")] * 4)

    assert errors == []
    assert [r.status_code for r in responses] == [200] * 4
    assert sorted(r.json()["repeated"] for r in responses) == [False, True, True, True]
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.active_seconds == 30
    assert Judgment.objects.filter(assignment=assignment).count() == len(answers)


def test_the_embedded_database_runs_in_wal_mode_with_immediate_transactions():
    """What the two tests above rely on, read from the live connection (SQLite lane only)."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite settings: this lane runs on PostgreSQL")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] == 20_000
    assert connection.transaction_mode == "IMMEDIATE"
    assert not connection.is_in_memory_db()
