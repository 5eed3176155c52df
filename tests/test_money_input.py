"""Money from leads: one exact parser, and the budget checked inside the lock the bonus takes
(issue 26, items 5 and 9)."""

from decimal import Decimal

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from hits.batch_fields import BatchSpec
from hits.models import Assignment, Batch, LedgerEntry
from hits.money import MoneyError, parse_money
from hits.services import handout, money_budget, review
from hits.services.batches import create_batch
from hits.services.submission import submit_assignment

from .crowd_data import WAIT, all_answers, at_once, demo_dataset, published_batch, waiting_on_a_lock
from .test_handout import make_workers


def submitted_assignments(batch, n: int) -> list[Assignment]:
    out = []
    for worker in make_workers(n, prefix="bonus-w"):
        a = handout.next_assignment(worker, batch)
        submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=all_answers(a))
        out.append(a)
    return out


@pytest.mark.django_db(transaction=True)
def test_four_parallel_bonuses_on_a_dollar_of_budget_pay_exactly_one(settings, lead):
    """Four leads' $1.00 bonuses on four assignments of one batch, released together through the
    bonus page, on a budget $1.00 above the spend: one is paid, three are refused, none over."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    batch = published_batch(assignments=3)
    assignments = submitted_assignments(batch, 4)
    review.approve(assignment_id=assignments[0].pk, by=lead)  # some spend already recorded
    spent = sum(LedgerEntry.objects.filter(batch=batch).values_list("amount", flat=True))
    # $1.00 of room beside the spend and the three rewards still to approve, which the check counts.
    Batch.objects.filter(pk=batch.pk).update(budget=money_budget.bonus_spend(batch)["total"] + Decimal("1.00"))

    def pay(i):
        client = Client()
        client.force_login(lead)
        response = client.post(
            reverse("batch_bonus", args=[batch.pk]),
            {"assignment": assignments[i].pk, "amount": "1.00", "reason": "Careful work", "token": f"par-{i}"},
        )
        return [str(m) for m in get_messages(response.wsgi_request)]

    for _round in range(3):
        LedgerEntry.objects.filter(kind="bonus").delete()
        results, errors = at_once(*(lambda i=i: pay(i) for i in range(4)))
        assert errors == []
        assert LedgerEntry.objects.filter(batch=batch, kind="bonus").count() == 1
        total = sum(LedgerEntry.objects.filter(batch=batch).values_list("amount", flat=True))
        assert total == spent + Decimal("1.00")
        refused = [m for ms in results for m in ms if "over its budget" in m]
        assert len(refused) == 3 and all("Pay over the budget" in m for m in refused)


@pytest.mark.django_db(transaction=True)
def test_pay_over_the_budget_is_the_only_way_past_it(lead):
    batch = published_batch(assignments=3)
    first, second = submitted_assignments(batch, 2)
    budget = money_budget.bonus_spend(batch)["total"] + Decimal("1.00")  # beside the two rewards to approve
    Batch.objects.filter(pk=batch.pk).update(budget=budget)
    review.send_bonus(assignment_id=first.pk, amount="1.00", reason="good", token="a", by=lead)
    with pytest.raises(review.OverBudget, match=rf"over its budget of \${budget}"):
        review.send_bonus(assignment_id=second.pk, amount="0.01", reason="good", token="b", by=lead)
    review.send_bonus(assignment_id=second.pk, amount="0.01", reason="good", token="b", by=lead, over_budget=True)
    assert sum(LedgerEntry.objects.filter(kind="bonus").values_list("amount", flat=True)) == Decimal("1.01")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1", "1.00"),
        ("1.5", "1.50"),
        ("1.500", "1.50"),
        (".25", "0.25"),
        ("$0.50", "0.50"),
        ("1,000.25", "1000.25"),
        ("£0.50", "0.50"),
    ],
)
def test_amounts_people_write(text, expected):
    assert parse_money(text) == Decimal(expected)


@pytest.mark.parametrize(
    "text, words",
    [
        ("1_0", "not an amount of money"),
        ("NaN", "not an amount of money"),
        ("inf", "not an amount of money"),
        ("1e400", "not an amount of money"),
        ("-1", "at least \\$0.00"),
        ("abc", "not an amount of money"),
        ("0.005", "fraction of a cent"),
        ("100.004", "fraction of a cent"),
        ("1,50", "decimal comma"),
        ("$0,5", "decimal comma"),
        ("£0,5", "decimal comma"),
        ("١٠", "not an amount of money"),  # Arabic-Indic digits
    ],
)
def test_amounts_refused_in_words(text, words):
    with pytest.raises(MoneyError, match=words):
        parse_money(text)
    for value in (Decimal("NaN"), Decimal("Infinity"), float("inf"), Decimal("0.001")):
        with pytest.raises(MoneyError):
            parse_money(value)


@pytest.mark.django_db
@pytest.mark.portable
@pytest.mark.parametrize(
    "amount, words",
    [
        ("NaN", "not an amount of money"),
        ("1_0", "not an amount of money"),
        ("0.005", "fraction of a cent"),
        ("100.004", "fraction of a cent"),
        ("1,50", "decimal comma"),
        ("", "is missing: write an amount"),  # walk 62: it read 'The bonus “” is not an amount of money'
        ("  ", "is missing: write an amount"),
        ("$0.50", None),
    ],
)
def test_bonus_page_pays_exact_amounts_or_says_why(client, lead, amount, words):
    batch = published_batch(assignments=3)
    (a,) = submitted_assignments(batch, 1)
    client.force_login(lead)
    response = client.post(
        reverse("batch_bonus", args=[batch.pk]),
        {"assignment": a.pk, "amount": amount, "reason": "Careful work", "token": "tok-1"},
    )
    assert response.status_code == 302
    shown = " ".join(str(m) for m in get_messages(response.wsgi_request))
    bonuses = LedgerEntry.objects.filter(kind="bonus")
    if words is None:
        assert list(bonuses.values_list("amount", flat=True)) == [Decimal("0.50")]
    else:
        assert words in shown and "ConversionSyntax" not in shown
        assert not bonuses.exists()


@pytest.mark.django_db
@pytest.mark.portable
@pytest.mark.parametrize(
    "buckets, words",
    [
        ("1-5 NaN", "not an amount of money"),
        ("1-5 10000", "at most $100.00"),
        ("1-5 0.155", "fraction of a cent"),
        ("1_0-20 0.15", "write it as"),
        ("1-99999999999 0.15", "write it as"),
    ],
)
def test_pay_buckets_refused_with_a_message(client, lead, buckets, words):
    batch = create_batch(dataset=demo_dataset(), spec=BatchSpec(assignments=3))
    before = list(batch.buckets.values_list("min_acus", "max_acus", "reward"))
    client.force_login(lead)
    response = client.post(reverse("batch_action", args=[batch.pk, "buckets"]), {"buckets": buckets})
    assert response.status_code == 302
    shown = " ".join(str(m) for m in get_messages(response.wsgi_request))
    assert words in shown
    assert list(batch.buckets.values_list("min_acus", "max_acus", "reward")) == before


@pytest.mark.django_db
@pytest.mark.portable
@pytest.mark.parametrize(
    "budget, words", [("1_000", "not an amount"), ("10.001", "fraction of a cent"), ("NaN", "not")]
)
def test_budget_refused_with_a_message(client, lead, budget, words):
    batch = create_batch(dataset=demo_dataset(), spec=BatchSpec(assignments=3))
    client.force_login(lead)
    response = client.post(reverse("batch_action", args=[batch.pk, "budget"]), {"budget": budget})
    assert response.status_code == 302
    assert words in " ".join(str(m) for m in get_messages(response.wsgi_request))
    batch.refresh_from_db()
    assert batch.budget is None


@pytest.mark.django_db(transaction=True)
def test_an_approval_and_a_bonus_on_one_assignment_at_once_both_go_through(monkeypatch, lead):
    """The lead approves an assignment (or auto-approval does) while a bonus on it is sent: the
    approval holds the assignment and then writes its ledger row (which names the batch), the bonus
    holds the batch and waits for the assignment. Neither may deadlock the other: both are paid,
    once each."""
    import threading

    from hits.providers.inhouse import InHouseProvider

    batch = published_batch(assignments=3)
    (a,) = submitted_assignments(batch, 1)
    holding = threading.Event()

    def slow_approve(self, assignment):  # the provider call, the assignment held: the bonus comes now
        holding.set()
        # Until the bonus, its batch taken, waits for the assignment (a fixed sleep here let a busy
        # machine's bonus come after the approval and never test the two at once).
        assert waiting_on_a_lock(), "the bonus never waited for the approval's assignment"

    monkeypatch.setattr(InHouseProvider, "approve", slow_approve)

    def bonus():
        assert holding.wait(WAIT), "the approval never reached the provider"
        return review.send_bonus(assignment_id=a.pk, amount="0.50", reason="Careful work", token="both", by=lead)

    results, errors = at_once(lambda: review.approve(assignment_id=a.pk, by=lead), bonus)
    assert errors == []
    kinds = sorted(LedgerEntry.objects.filter(assignment=a).values_list("kind", flat=True))
    assert kinds == ["bonus", "reward"]
