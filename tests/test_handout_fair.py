"""Fair handout: published batches of one provider share the workers, a lead-set priority first,
equal priorities in turns (in proportion to their size), and the batch page says who takes them."""

import pytest
from django.urls import reverse

from hits.models import Batch
from hits.services import batches, handout

from .crowd_data import demo_dataset, published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def hand_out(workers, batch=None) -> list[int]:
    """One new assignment per worker (each worker a fresh one), the batch id of each."""
    return [handout.next_assignment(w, batch).hit.batch_id for w in workers]


def test_a_new_batch_is_not_starved_by_an_older_one():
    dataset = demo_dataset()
    old = published_batch(dataset, name="old")
    assert hand_out(make_workers(9, prefix="early")) == [old.pk] * 9
    new = published_batch(dataset, name="new")
    assert old.hits.count() == new.hits.count() == 40
    # The old batch is 9 HITs ahead: the new one catches up first, then they take turns.
    assert hand_out(make_workers(13, prefix="later")) == [new.pk] * 9 + [old.pk, new.pk, old.pk, new.pk]


def test_batches_of_different_sizes_progress_at_the_same_pace():
    dataset = demo_dataset()
    large = published_batch(dataset, name="large", assignments=1)
    small = published_batch(dataset, name="small", assignments=1, systems=[dataset.systems.order_by("pk").first()])
    sizes = {large.pk: 40, small.pk: 10}
    assert small.hits.count() == 10
    got = hand_out(make_workers(25, prefix="pace"))
    share = {pk: got.count(pk) / n for pk, n in sizes.items()}
    assert got.count(small.pk) == 5 and got.count(large.pk) == 20  # half of each
    assert share[large.pk] == share[small.pk] == 0.5


def test_a_higher_priority_batch_takes_the_workers_first(client, lead):
    dataset = demo_dataset()
    old = published_batch(dataset, name="old", assignments=1)
    urgent = published_batch(dataset, name="urgent", assignments=1)
    urgent.hits.exclude(pk__in=list(urgent.hits.order_by("pk").values_list("pk", flat=True)[:3])).delete()
    batches.set_priority(urgent, "2")

    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[old.pk])).content.decode()
    assert "Another batch is taking the workers: " in page and "urgent</a> (priority 2)" in page
    page = client.get(reverse("batch_detail", args=[urgent.pk])).content.decode()
    assert "handout-share" not in page  # nothing ahead of it

    assert hand_out(make_workers(5, prefix="prio")) == [urgent.pk] * 3 + [old.pk] * 2
    page = client.get(reverse("batch_detail", args=[old.pk])).content.decode()
    assert "handout-share" not in page  # the urgent batch is full: nobody takes the workers away


def test_equal_batches_say_they_share_and_the_priority_is_checked(client, lead):
    dataset = demo_dataset()
    first = published_batch(dataset, name="first")
    second = published_batch(dataset, name="second")
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[first.pk])).content.decode()
    assert "Sharing the workers in turns with" in page and "second</a>" in page

    response = client.post(reverse("batch_action", args=[second.pk, "priority"]), {"priority": "ten"}, follow=True)
    assert "The priority must be a whole number from -9 to 9." in response.content.decode()
    response = client.post(reverse("batch_action", args=[second.pk, "priority"]), {"priority": "12"}, follow=True)
    assert "from -9 to 9" in response.content.decode()
    assert Batch.objects.get(pk=second.pk).priority == 0
    response = client.post(reverse("batch_action", args=[second.pk, "priority"]), {"priority": "-1"}, follow=True)
    assert "Priority set to -1." in response.content.decode()
    page = client.get(reverse("batch_detail", args=[second.pk])).content.decode()
    assert "Another batch is taking the workers" in page and "first</a> (priority 0)" in page
