"""A session's price per HIT is the mean reward of the batch's HITs rounded up to the cent, exact
on both databases. SQLite stores a DecimalField as a floating-point number and its AVG() is a
floating-point mean: 25 HITs of $0.92 averaged 0.9200000000000006, which rounded up to $0.93, so
a Prolific or panel batch on the embedded default paid a cent per HIT more than its rewards."""

from decimal import Decimal

import pytest

from hits.provider_interface.base import alike_price

from .crowd_data import published_batch

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def test_hits_of_one_reward_are_priced_at_that_reward():
    batch = published_batch(assignments=1)
    assert batch.hits.count() >= 25
    batch.hits.update(reward=Decimal("0.92"))
    assert alike_price(batch.hits) == Decimal("0.92")


def test_a_mean_between_cents_is_rounded_up():
    batch = published_batch(assignments=1)
    first, second, *rest = batch.hits.order_by("pk")
    batch.hits.filter(pk__in=[h.pk for h in rest]).delete()
    batch.hits.filter(pk=first.pk).update(reward=Decimal("0.15"))
    batch.hits.filter(pk=second.pk).update(reward=Decimal("0.20"))
    assert alike_price(batch.hits) == Decimal("0.18")  # the mean 0.175
