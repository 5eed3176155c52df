"""Issue 47, item 7: the demo batch does not feed every new worker, and a task held in a batch that
stopped does not keep the worker on "Continue my task"."""

import io

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Dataset
from hits.models import Assignment, Batch, QualificationTest, Worker
from hits.services import handout
from hits.services.batches import stop_batch

from .crowd_data import demo_dataset, published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def test_the_demo_batch_is_demo_workers_alone():
    call_command("setup_demo", stdout=io.StringIO())
    demo_open = Batch.objects.get(dataset__name="realsumm-demo", name="Demo batch: open for demo-worker")
    lab = demo_dataset("lab")
    test = QualificationTest.objects.create(dataset=lab, name="Lab test")
    published_batch(lab, qualification_test=test)
    (newcomer,) = make_workers(1, prefix="new")  # has not passed (here: not taken) the lab's test

    with pytest.raises(handout.NoWork, match="qualification test"):
        handout.next_assignment(newcomer)
    assert not newcomer.assignments.exists()

    demo_worker = Worker.objects.get(external_id="demo-worker")
    assert handout.next_assignment(demo_worker).hit.batch == demo_open
    call_command("setup_demo", stdout=io.StringIO())  # every start: the reservation stays, nothing doubles
    assert list(demo_open.reserved_for.all()) == [demo_worker]


def test_a_reservation_leaves_other_batches_open_to_everyone():
    dataset = demo_dataset()
    reserved = published_batch(dataset, name="reserved")
    (owner, other) = make_workers(2)
    reserved.reserved_for.set([owner])
    with pytest.raises(handout.NoWork):
        handout.next_assignment(other)
    everyone = published_batch(Dataset.objects.get(pk=dataset.pk), name="everyone")
    assert handout.next_assignment(other).hit.batch == everyone
    assert handout.next_assignment(owner).hit.batch in (reserved, everyone)


def test_a_task_of_a_stopped_batch_no_longer_holds_the_worker(client):
    dataset = demo_dataset()
    first = published_batch(dataset, name="first")
    (worker,) = make_workers(1)
    held = handout.next_assignment(worker, first)
    stop_batch(first)
    second = published_batch(Dataset.objects.get(pk=dataset.pk), name="second")

    client.login(username=worker.external_id, password="x-long-password")
    page = client.get("/work/").content.decode()
    assert "Continue my task" not in page and "Start next task" in page
    assert 'id="stopped-task"' in page and "first" in page  # says which batch, and that it can still be finished
    held.refresh_from_db()
    until = timezone.localtime(held.deadline)
    assert f"until {until:%Y-%m-%d %H:%M} {until:%Z}" in page  # the deadline with its time zone

    response = client.post("/work/next")
    assert response.status_code == 302
    new = Assignment.objects.get(worker=worker, status=Assignment.Status.ASSIGNED)
    assert new.hit.batch == second
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED  # its place given back, never paid
    assert "stopped-task" not in client.get("/work/").content.decode()


def test_a_task_of_a_running_batch_is_continued(client):
    batch = published_batch()
    (worker,) = make_workers(1)
    held = handout.next_assignment(worker, batch)
    client.login(username=worker.external_id, password="x-long-password")
    assert "Continue my task" in client.get("/work/").content.decode()
    client.post("/work/next")
    assert Assignment.objects.get(worker=worker, status=Assignment.Status.ASSIGNED) == held
