"""Issue 13 without a browser: money formatting, the budget rule, batch stages, chart ranges, people and the demo's authors."""

import io
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.template import Context, Template

from annotation.services.authoring import authors
from hits.batch_fields import BatchSpec
from hits.models import Assignment, Batch, LedgerEntry
from hits.money import format_money
from hits.money_fields import MoneyField
from hits.services import money_budget, review
from hits.services.batches import BatchError, cost_estimate, create_batch, publish_batch
from hits.services.people import PeopleError, add_person
from hits.services.simulate import simulate_crowd
from hits.stages import batch_stage
from scoring.results import charts

from .crowd_data import demo_dataset

pytestmark = pytest.mark.portable


@pytest.mark.parametrize(
    "value, currency, text",
    [
        (Decimal("2.80000000000000"), "USD", "$2.80"),
        (0, "USD", "$0.00"),
        ("1234.5", "USD", "$1,234.50"),
        (Decimal("-0.505"), "USD", "-$0.51"),
        (Decimal(3), "GBP", "£3.00"),
        (None, "USD", ""),
        (1.005, "CHF", "CHF 1.01"),
    ],
)
def test_one_money_format(value, currency, text):
    assert format_money(value, currency) == text
    assert Template("{% load money %}{{ v|money:c }}").render(Context({"v": value, "c": currency})) == text


def test_money_field_is_a_two_decimal_string():
    assert MoneyField().to_representation(Decimal("2.80000000000000")) == "2.80"
    assert MoneyField().to_representation(Decimal("0.005")) == "0.01"
    assert MoneyField(allow_null=True).to_representation(None) is None


@pytest.mark.django_db
def test_publishing_over_budget_is_refused_until_the_budget_is_raised():
    dataset = demo_dataset()
    batch = create_batch(dataset=dataset, spec=BatchSpec(budget=Decimal("1.00")))
    estimate = cost_estimate(batch)["total"]
    assert estimate > 1
    with pytest.raises(BatchError, match=rf"estimated cost \${estimate:.2f} exceeds the budget \$1\.00"):
        publish_batch(batch)
    assert Batch.objects.get(pk=batch.pk).status == "draft" and not batch.hits.exclude(external_id="").exists()
    with pytest.raises(money_budget.BudgetError, match="not an amount"):
        money_budget.set_budget(batch, "lots")
    money_budget.set_budget(batch, f"${estimate}")
    assert publish_batch(batch).status == "published"
    unlimited = create_batch(dataset=dataset)  # no budget: nothing to check
    assert publish_batch(unlimited).status == "published"


@pytest.mark.django_db
def test_stages_follow_the_assignments_and_the_ledger():
    dataset = demo_dataset()
    batch = create_batch(dataset=dataset, systems=list(dataset.systems.order_by("name")[:1]))
    assert batch_stage(batch).code == "draft"
    batch = publish_batch(batch)
    assert batch_stage(batch).code == "published"
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=2)
    assert batch_stage(batch).code == "published"  # submitted, not decided
    ids = list(Assignment.objects.filter(hit__batch=batch, status="submitted").values_list("pk", flat=True))
    review.bulk(review.approve, ids[1:], by=None)
    assert batch_stage(batch).code == "published"
    review.bulk(review.reject, ids[:1], feedback="Too fast.", by=None)
    # One rejected place reopens: the batch is not complete until it expires or is stopped.
    assert batch_stage(batch).code == "published"
    Batch.objects.filter(pk=batch.pk).update(status="stopped")
    batch.refresh_from_db()
    assert batch_stage(batch).code == "paid"
    # Issue 47 item 10: a stopped batch with places never done does not read as plain "Paid".
    assert batch_stage(batch).label == "Stopped, paid"
    assert batch_stage(batch).explanation.startswith("Stopped with 1 place never done; every assignment")
    LedgerEntry.objects.filter(batch=batch, kind="reward").first().delete()  # a reward not recorded yet
    assert batch_stage(batch).code == "complete"
    assert over_budget_bonus_message(batch) is None


def over_budget_bonus_message(batch):
    return money_budget.bonus_passes_budget(batch, "1.00")


@pytest.mark.django_db
def test_a_bonus_passing_the_budget_is_named():
    dataset = demo_dataset()
    batch = create_batch(dataset=dataset, spec=BatchSpec(budget=Decimal("100.00")))
    assert money_budget.bonus_passes_budget(batch, "99.99") is None
    assert "over its budget of $100.00" in money_budget.bonus_passes_budget(batch, "100.01")


def test_chart_axes_hold_intervals_and_negative_alpha():
    systems = {
        f"system_{i:02d}": {
            "acu": 0.3 + i / 100,
            "acu_ci": [0.1 + i / 100, 0.6 + i / 100],
            "normalized_acu": 0.25,
            "normalized_acu_ci": [0.05, 0.45],
        }
        for i in range(25)
    }
    config = charts.leaderboard(systems)
    y = config["options"]["scales"]["y"]
    assert y["min"] <= 0.05 and y["max"] >= 0.84
    x = config["options"]["scales"]["x"]
    assert (x["min"], x["max"]) == (-0.5, 24.5) and x["ticks"]["autoSkip"] is False and len(config["xLabels"]) == 25
    two = charts.leaderboard(dict(list(systems.items())[:2]))
    assert two["options"]["scales"]["x"]["ticks"]["minRotation"] == 0
    trend = charts.alpha_trend(
        [{"at": "2026-12-01T10:00", "acu_level": -0.119, "summary_level": -0.326}],
        {"acu_level": 0.7528, "summary_level": 0.7571},
    )
    assert trend["options"]["scales"]["y"]["min"] <= -0.326 and trend["options"]["scales"]["y"]["max"] == 1
    assert charts.axis_range([0.177, 0.482], pad=0.1, lower=0, upper=1) == (0.1, 0.55)


@pytest.mark.django_db
def test_people_are_added_with_one_role_and_never_reset(lead):
    user, password = add_person(username="rita", role="author", by=lead)
    assert len(password) >= 12 and user.check_password(password) and list(authors()) == [user]
    with pytest.raises(PeopleError, match="taken"):
        add_person(username="RITA", role="lead", password="another-long-password")
    with pytest.raises(PeopleError, match="role"):
        add_person(username="bob", role="admin")
    with pytest.raises(PeopleError):
        add_person(username="bob", role="author", password="123")
    assert not user.groups.filter(name="lead").exists()


@pytest.mark.django_db
def test_demo_ships_two_authors():
    call_command("setup_demo", stdout=io.StringIO())
    assert [u.username for u in authors()] == ["demo-author", "demo-reviewer"]


@pytest.mark.django_db
def test_only_a_lead_decides_on_a_reference_in_review(client, lead, author, tmp_path):
    from annotation.models import Reference
    from annotation.services import authoring as authoring_service

    from .authoring_data import unauthored_dataset
    from .conftest import PASSWORD

    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring_service.assign_references(dataset=dataset, author_ids=[author.pk])
    ref = Reference.objects.get(document__dataset=dataset)
    authoring_service.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=ref.version,
        sentences=[
            {"id": s.pk, "acus": [{"id": None, "text": "Koirala sleeps outdoors."}] if i == 0 else []}
            for i, s in enumerate(ref.sentences.all())
        ],
    )
    authoring_service.submit_for_review(reference_id=ref.pk, user=author)
    url = f"/authoring/references/{ref.pk}/lead/approve"
    client.login(username=author.username, password=PASSWORD)
    assert client.post(url).status_code == 403
    assert client.get(f"/authoring/references/{ref.pk}/lead/approve").status_code in (403, 405)
    client.login(username=lead.username, password=PASSWORD)
    back = client.get(url)  # the sign-in page's way back after a session ended: decides nothing
    assert back.status_code == 302 and back.url == f"/authoring/references/{ref.pk}/review/"
    assert Reference.objects.get(pk=ref.pk).status == "in_review"
    assert client.post(f"/authoring/references/{ref.pk}/lead/assign", {"reviewer": author.pk}).status_code == 302
    assert Reference.objects.get(pk=ref.pk).reviewer is None  # the writer cannot review their own reference
    assert client.post(url).status_code == 302
    assert Reference.objects.get(pk=ref.pk).status == "approved"
    assert set(ref.acus.values_list("status", flat=True)) == {"approved"}


@pytest.mark.django_db
def test_dashboard_bonus_over_the_budget_needs_the_tick(client, lead):
    from .conftest import PASSWORD

    dataset = demo_dataset()
    batch = publish_batch(create_batch(dataset=dataset, systems=list(dataset.systems.order_by("name")[:1])))
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=4)
    Batch.objects.filter(pk=batch.pk).update(budget=Decimal("0.10"))
    worker_id = Assignment.objects.filter(hit__batch=batch).values_list("worker_id", flat=True).first()
    client.login(username=lead.username, password=PASSWORD)
    url = f"/datasets/{dataset.pk}/dashboard/workers/{worker_id}/bonus?round={batch.pk}"
    response = client.post(url, {"amount": "0.50", "reason": "Thanks", "token": "t-1"}, follow=True)
    assert "over its budget of $0.10" in response.content.decode()
    assert not LedgerEntry.objects.filter(kind="bonus").exists()
    client.post(url, {"amount": "0.50", "reason": "Thanks", "token": "t-1", "over_budget": "1"})
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1
