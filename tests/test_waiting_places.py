"""A batch that cannot finish says why its places wait and what the lead can do (issue 47, item 3)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from hits.models import Assignment, Batch
from hits.selectors import dataset_counts
from hits.selectors.waiting import waiting_places
from hits.services import handout, review
from hits.services.people import create_user_with_role
from hits.services.submission import submit_assignment

from .conftest import PASSWORD
from .crowd_data import all_answers, batch_of, demo_dataset, published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def two_place_hit():
    batch = published_batch(assignments=2)
    hit = batch.hits.order_by("pk").first()
    batch.hits.exclude(pk=hit.pk).delete()
    return batch, hit


def work(worker, batch):
    taken = handout.next_assignment(worker, batch)
    submit_assignment(assignment_id=taken.pk, worker_id=worker.pk, answers=all_answers(taken))
    return taken


def test_a_rejected_place_nobody_may_take_is_said_with_what_to_do(client, lead):
    batch, hit = two_place_hit()
    careful, careless = make_workers(2, prefix="ww")
    work(careful, batch)
    sloppy = work(careless, batch)
    assert waiting_places(batch) is None  # every place taken: nothing waits
    review.reject(assignment_id=sloppy.pk, feedback="Answers at random.")
    hit.refresh_from_db()
    assert hit.open_places == 1
    with pytest.raises(handout.NoWork):
        handout.next_assignment(careful, batch)

    waiting = waiting_places(batch)
    assert waiting is not None
    assert (waiting["places"], waiting["hits"], waiting["able"], waiting["done"]) == (1, 1, 2, 2)
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "This batch cannot finish by itself" in page and 'id="waiting-places"' in page
    assert "add workers" in page and "stop the batch" in page
    assert "Workers are taking its HITs" not in page

    assert "each HIT has" not in page  # 2 places per HIT and 2 workers allowed: not the reason here
    # every page that names the batch's stage says the same
    assert "Short of workers" in page
    assert "Short of workers" in client.get(reverse("batch_list", args=[batch.dataset_id])).content.decode()
    assert "Short of workers" in client.get(reverse("dataset_detail", args=[batch.dataset_id])).content.decode()

    newcomer = create_user_with_role(username="ww-new", password=PASSWORD, role="worker")
    assert waiting_places(batch) is None  # a new worker may take it
    work(newcomer.worker, batch)
    assert waiting_places(batch) is None  # done: nothing waits


def test_a_place_let_expire_counts_among_the_reasons():
    batch, hit = two_place_hit()
    (done,) = make_workers(1, prefix="wx")
    work(done, batch)
    (late,) = make_workers(1, prefix="wl")
    held = handout.next_assignment(late, batch)
    Assignment.objects.filter(pk=held.pk).update(deadline=timezone.now() - timedelta(minutes=5))
    with pytest.raises(handout.NoWork):
        handout.next_assignment(done, batch)  # releases the overdue place
    waiting = waiting_places(batch)
    assert waiting is not None and (waiting["places"], waiting["done"], waiting["expired"]) == (1, 1, 1)


def test_a_stopped_or_other_provider_batch_has_no_warning():
    batch, hit = two_place_hit()
    batch.status = batch.Status.STOPPED
    batch.save(update_fields=["status"])
    assert waiting_places(batch) is None


def test_a_draft_adaptive_batch_claims_no_saving_before_any_work(client, lead):
    """Issue 47 item 10: a draft said "saved $2.80 against 3 assignments per HIT" and "Each HIT
    started with 2 places" before any work."""
    from .test_allocation import adaptive_batch

    batch = adaptive_batch(publish=False)
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    # (a batch this large gets a pilot: hits.allocation.policy.pilot_size; its paragraph keeps the tense too)
    assert "starts with 2 places" in page and "started with" not in page
    assert 'id="allocation-saved"' not in page and "shows once workers have done some" in page
    # the publish confirmation counts the most places (the estimate's), which "N assignments" read as sure
    most = batch.hits.count() * batch.allocation_max
    assert f'data-confirm="Publish up to {most} assignments for an estimated' in page
    published = adaptive_batch(demo_dataset("second"))
    page = client.get(reverse("batch_detail", args=[published.pk])).content.decode()
    # Walk: published (or stopped) with nothing done, it said "saved $21.60": still none to claim
    assert "started with 2 places" in page and 'id="allocation-saved"' not in page
    assert "shows once workers have done some" in page
    work(make_workers(1, prefix="sv")[0], published)
    page = client.get(reverse("batch_detail", args=[published.pk])).content.decode()
    assert 'id="allocation-saved"' in page and "shows once workers have done some" not in page


def test_a_dataset_counts_as_label_rounds_neither_drafts_nor_machine_runs(client, lead):
    batch = published_batch()
    before = dataset_counts([batch.dataset_id])[batch.dataset_id]["rounds"]
    batch_of(batch.dataset, assignments=3)  # a draft
    Batch.objects.create(dataset=batch.dataset, name="machine: lexical v1", kind=Batch.Kind.MACHINE)
    assert dataset_counts([batch.dataset_id])[batch.dataset_id]["rounds"] == before
    assert before == batch.dataset.batches.exclude(kind=Batch.Kind.MACHINE).exclude(status=Batch.Status.DRAFT).count()
