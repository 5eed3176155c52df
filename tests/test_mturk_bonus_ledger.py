"""An MTurk bonus is never paid without a trace: its mark (`MTurkBonus`) is committed before the
SendBonus call. SendBonus succeeded and the ledger write then failed (a DatabaseError): the whole
transaction was rolled back, so nothing said the money had left. The budget check did not count it
(`unsettled_spend` was zero for MTurk) and no sync wrote the row. Now the budget counts it until its
row is written, a retry records it without paying again, and the sync writes the row exactly once."""

import hashlib
from decimal import Decimal

import pytest
from django.db import DatabaseError

from hits.ledger import bonus_key
from hits.models import Batch, LedgerEntry
from hits.provider_interface import get_provider
from hits.providers import sync as provider_sync
from hits.providers.mturk import provider as mturk
from hits.providers.mturk.models import MTurkBonus
from hits.selectors.figures import batch_spend
from hits.services import money_budget, review

from .test_mturk import published, stub, sync_one, worked  # noqa: F401 (stub: the fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

FORM = {"amount": "0.50", "reason": "Careful work", "token": "form-db"}


def approved_work(stub):  # noqa: F811
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    a = worked(batch, "A1W", "ASG1", hit)
    stub.add_response("approve_assignment", {}, {"AssignmentId": "ASG1"})
    review.approve(assignment_id=a.pk)
    return batch, hit, a


def expect_bonus(stub, token="form-db", listed=()):  # noqa: F811
    """MTurk lists the assignment's bonuses (`listed`: Reasons), then pays the form's bonus."""
    digest = hashlib.sha256(token.encode()).hexdigest()[:32]
    reasons = [{"WorkerId": "A1W", "AssignmentId": "ASG1", "BonusAmount": "0.50", "Reason": r} for r in listed]
    stub.add_response(
        "list_bonus_payments",
        {"NumResults": len(reasons), "BonusPayments": reasons},
        {"AssignmentId": "ASG1", "MaxResults": 100},
    )
    return {
        "WorkerId": "A1W",
        "AssignmentId": "ASG1",
        "BonusAmount": "0.50",
        "Reason": f"Careful work (ref {digest[:10]})",
        "UniqueRequestToken": mturk.request_token("bonus", digest),
    }


def paid_then_ledger_write_fails(stub, monkeypatch, a, by=None):  # noqa: F811
    stub.add_response("send_bonus", {}, expect_bonus(stub))
    real = review.record_with_fee

    def lost(**kwargs):
        raise DatabaseError("the connection was lost")

    monkeypatch.setattr(review, "record_with_fee", lost)
    with pytest.raises(DatabaseError):
        review.send_bonus(assignment_id=a.pk, by=by, **FORM)
    monkeypatch.setattr(review, "record_with_fee", real)


def test_a_bonus_paid_whose_ledger_write_failed_counts_as_spent_and_a_retry_records_it_without_paying(
    stub,  # noqa: F811
    monkeypatch,
):
    batch, _, a = approved_work(stub)
    spent = batch_spend(batch)["total"]
    paid_then_ledger_write_fails(stub, monkeypatch, a)
    assert not LedgerEntry.objects.filter(kind="bonus").exists()
    cost = Decimal("0.50") + get_provider("mturk").fee(Decimal("0.50"), batch.assignments_per_hit)
    spend = money_budget.bonus_spend(batch)
    assert spend["unsettled"] == cost and spend["total"] == spent + cost  # the money left: counted

    # The retry: no SendBonus (the Stubber holds no answer for one), one row with its fee.
    entry, created = review.send_bonus(assignment_id=a.pk, **FORM)
    assert created and entry.key == bonus_key("form-db") and entry.amount == Decimal("0.50")
    assert batch_spend(batch)["total"] == spent + cost
    assert money_budget.bonus_spend(batch)["unsettled"] == 0  # counted once: by its ledger row


def test_the_sync_writes_the_row_of_a_paid_bonus_exactly_once_naming_the_lead(stub, monkeypatch, lead):  # noqa: F811
    batch, hit, a = approved_work(stub)
    spent = batch_spend(batch)["total"]
    paid_then_ledger_write_fails(stub, monkeypatch, a, by=lead)
    cost = money_budget.bonus_spend(batch)["unsettled"]

    counts = sync_one(stub, batch, hit, [])  # the row is written before any MTurk call
    assert counts["bonuses recorded"] == 1
    (row,) = LedgerEntry.objects.filter(key=bonus_key("form-db"))
    assert row.created_by == lead  # who sent it, as the request's own row would say
    assert MTurkBonus.objects.get(token="form-db").recorded
    assert batch_spend(batch)["total"] == spent + cost and money_budget.bonus_spend(batch)["unsettled"] == 0
    assert "bonuses recorded" not in sync_one(stub, batch, hit, [])  # nothing more
    entry, created = review.send_bonus(assignment_id=a.pk, **FORM)  # the form sent again: no call
    assert not created and LedgerEntry.objects.filter(kind="bonus").count() == 1


def test_a_bonus_whose_answer_was_lost_counts_as_spent_until_the_sync_finds_it_paid(stub):  # noqa: F811
    batch, hit, a = approved_work(stub)
    stub.add_client_error(
        "send_bonus", service_error_code="ServiceFault", service_message="Try again", expected_params=expect_bonus(stub)
    )
    with pytest.raises(review.ReviewError, match="may have been paid"):
        review.send_bonus(assignment_id=a.pk, **FORM)
    bonus = MTurkBonus.objects.get(token="form-db")
    assert bonus.state == MTurkBonus.State.SENT and money_budget.bonus_spend(batch)["unsettled"] > 0
    # Meanwhile the budget has room for this bonus's cost only once: a second is refused.
    batch = money_budget.set_budget(batch, money_budget.bonus_spend(batch)["total"] + Decimal("0.05"))
    with pytest.raises(review.OverBudget):
        review.send_bonus(assignment_id=a.pk, amount="0.50", reason="Another", token="form-2")

    digest = hashlib.sha256(b"form-db").hexdigest()[:10]
    expect_bonus(stub, listed=[f"Careful work (ref {digest})"])  # MTurk did pay it
    assert sync_one(stub, batch, hit, [])["bonuses recorded"] == 1
    bonus.refresh_from_db()
    assert (bonus.state, bonus.recorded, bonus.settled_at is not None) == ("paid", True, True)
    assert LedgerEntry.objects.filter(key=bonus_key("form-db")).count() == 1
    assert money_budget.bonus_spend(batch)["unsettled"] == 0


def test_a_bonus_mturk_refused_is_not_paid_and_not_counted(stub):  # noqa: F811
    batch, _, a = approved_work(stub)
    stub.add_client_error(
        "send_bonus",
        service_error_code="RequestError",
        service_message="Bad worker",
        expected_params=expect_bonus(stub),
    )
    with pytest.raises(review.ReviewError, match="Bad worker"):
        review.send_bonus(assignment_id=a.pk, **FORM)
    assert MTurkBonus.objects.get(token="form-db").state == MTurkBonus.State.NOT_PAID
    assert money_budget.bonus_spend(batch)["unsettled"] == 0
    assert batch.provider_calls.filter(action="send_bonus", ok=False).count() == 1


def test_the_beat_records_the_paid_bonus_of_a_batch_no_longer_synced(stub, monkeypatch):  # noqa: F811
    batch, _, a = approved_work(stub)
    paid_then_ledger_write_fails(stub, monkeypatch, a)
    Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.COMPLETE)  # the beat syncs it no more

    provider_sync.sync_open_batches()
    provider_sync.sync_open_batches()
    assert LedgerEntry.objects.filter(key=bonus_key("form-db")).count() == 1
    assert money_budget.bonus_spend(batch)["unsettled"] == 0
