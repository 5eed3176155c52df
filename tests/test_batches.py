"""Creating, pricing and publishing batches."""

from decimal import Decimal

import pytest

from annotation.models import Reference
from hits.batch_fields import BatchSpec
from hits.models import HIT, Batch
from hits.money import Bucket
from hits.services.batches import BatchError, cost_estimate, create_batch, publish_batch, set_buckets

from .crowd_data import batch_of, demo_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def test_one_hit_per_summary_of_approved_references_priced_by_bucket():
    dataset = demo_dataset()
    batch = create_batch(dataset=dataset, spec=BatchSpec(assignments=3))
    assert batch.status == Batch.Status.DRAFT
    assert batch.hits.count() == 40
    for hit in batch.hits.select_related("summary__document__reference"):
        assert hit.acu_count == hit.summary.document.reference.acus.count()
        expected = {range(1, 6): "0.15", range(6, 11): "0.25", range(11, 16): "0.35"}
        assert str(hit.reward) == next(v for r, v in expected.items() if hit.acu_count in r)
    cost = cost_estimate(batch)
    assert cost["assignments"] == 120 and cost["fees"] == Decimal("0.00")
    assert cost["total"] == sum(h.reward for h in batch.hits.all()) * 3
    assert sum(b.hits for b in cost["buckets"]) == 40


def test_unapproved_references_and_system_filter():
    dataset = demo_dataset()
    Reference.objects.filter(document__position__lt=3).update(status=Reference.Status.IN_REVIEW)
    batch = create_batch(dataset=dataset, systems=list(dataset.systems.filter(name="abs_bart_out")))
    assert batch.hits.count() == 7
    assert set(batch.hits.values_list("summary__system__name", flat=True)) == {"abs_bart_out"}
    with pytest.raises(BatchError, match="not approved"):
        create_batch(dataset=dataset, references=list(Reference.objects.filter(document__dataset=dataset)))


@pytest.mark.parametrize(
    "kwargs, message", [({"assignments": 10}, "between 1 and 9"), ({"gold_share": 0.9}, "gold share")]
)
def test_invalid_options_write_nothing(kwargs, message):
    dataset = demo_dataset()
    with pytest.raises(BatchError, match=message):
        batch_of(dataset, **kwargs)
    assert not Batch.objects.filter(kind=Batch.Kind.CROWD).exists()


def test_lead_edits_buckets_before_publishing_only():
    dataset = demo_dataset()
    batch = create_batch(dataset=dataset)
    set_buckets(batch, [Bucket(1, 8, Decimal("0.20")), Bucket(9, None, Decimal("0.40"))])
    assert set(HIT.objects.filter(batch=batch, acu_count__lte=8).values_list("reward", flat=True)) == {Decimal("0.20")}
    assert set(HIT.objects.filter(batch=batch, acu_count__gte=9).values_list("reward", flat=True)) == {Decimal("0.40")}
    with pytest.raises(BatchError, match="overlap"):
        set_buckets(batch, [Bucket(1, 8, Decimal("0.20")), Bucket(8, None, Decimal("0.40"))])
    publish_batch(batch)
    with pytest.raises(BatchError, match="before the batch is published"):
        set_buckets(batch, [Bucket(1, None, Decimal("0.30"))])
    with pytest.raises(BatchError, match="already published"):
        publish_batch(batch)


def test_gold_share_marks_hits_with_known_answers():
    batch = create_batch(dataset=demo_dataset(), spec=BatchSpec(gold_share=0.25), seed=3)
    gold = batch.hits.exclude(gold_answers=None)
    assert gold.count() == 10
    hit = gold.first()
    assert set(hit.gold_answers) == {str(a) for a in hit.summary.document.reference.acus.values_list("pk", flat=True)}


def test_create_batch_command_prints_the_id_last(capsys):
    from django.core.management import call_command

    demo_dataset()
    call_command(
        "create_batch",
        "demo",
        "--provider",
        "inhouse",
        "--assignments",
        "3",
        "--systems",
        "abs_bart_out,ext_matchsumm_out",
    )
    batch_id = int(capsys.readouterr().out.strip().splitlines()[-1])
    assert Batch.objects.get(pk=batch_id).hits.count() == 20
    call_command("publish_batch", str(batch_id))
    assert Batch.objects.get(pk=batch_id).status == Batch.Status.PUBLISHED


def test_batches_made_in_the_same_minute_get_distinct_readable_default_names(monkeypatch):
    """Two batches made in the same minute without a name were both "<dataset> batch <date> <minute>"."""
    from datetime import UTC, datetime

    from django.utils import timezone

    at = datetime(2026, 12, 7, 14, 3, 30, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: at)
    dataset = demo_dataset()
    one, two = (create_batch(dataset=dataset, spec=BatchSpec()) for _ in range(2))
    minute = f"{timezone.localtime(at):%Y-%m-%d %H:%M}"
    assert one.name != two.name
    for batch in (one, two):
        batch.refresh_from_db()
        assert batch.name == f"{dataset.name} batch {batch.pk} ({minute})"
    assert create_batch(dataset=dataset, spec=BatchSpec(name="Pilot")).name == "Pilot"
