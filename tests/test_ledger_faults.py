"""Money under faults: a provider call that succeeded, then our database write failed (or the
process died before it committed), then the same decision again. The money must not go out twice,
and the ledger row must be written once."""

from decimal import Decimal

import pytest
from django.db import OperationalError

from hits.models import LedgerEntry
from hits.provider_interface import ProviderError
from hits.providers.prolific import bonuses as prolific_bonuses
from hits.providers.prolific.models import ProlificBonus
from hits.selectors.figures import batch_spend
from hits.services import money_budget, review

from .test_prolific_contract import API, api, published, worked_session  # noqa: F401 (api: the fixture)

pytestmark = pytest.mark.django_db


def fail_once(monkeypatch, module, name):
    """`module.name` raises a lost-connection error on its first call, then works."""
    real, calls = getattr(module, name), []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, flaky)


def test_a_prolific_bonus_paid_before_the_ledger_write_failed_is_recorded_on_retry_never_paid_again(
    api,  # noqa: F811
    monkeypatch,
):
    """Prolific's pay call is not idempotent (a second call with the same bulk id pays again), so
    its "sent" mark must be stored before the call, whatever happens to the bonus's own
    transaction afterwards. The lead sends the same form again after the error."""
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    assignment = session.assignments().first()
    setup = api.post(API + "submissions/bonus-payments/", json={"id": "BULK9", "total_amount": 66})
    pay = api.post(API + "bulk-bonus-payments/BULK9/pay/", status=202, json={})
    fail_once(monkeypatch, review, "record_with_fee")
    form = {"assignment_id": assignment.pk, "amount": "0.50", "reason": "Thanks", "token": "tok-crash"}
    with pytest.raises(OperationalError):
        review.send_bonus(**form)
    assert ProlificBonus.objects.get(key="assignment:tok-crash").state == "paid"
    entry, created = review.send_bonus(**form)
    assert created and entry.amount == Decimal("0.50")
    assert setup.call_count == 1 and pay.call_count == 1
    assert list(LedgerEntry.objects.filter(kind="bonus").values_list("amount", flat=True)) == [Decimal("0.50")]


def test_a_bulk_prolific_bonus_past_the_budget_asks_first_as_every_bonus_does(api):  # noqa: F811
    """The Sessions bonus pays every ticked session at once: past the batch's budget it is refused,
    with nothing sent to Prolific, until the lead ticks "Pay over the budget"."""
    batch = published(api)
    one, two = (
        worked_session(batch, "PID1", "5ab000000000000000000001"),
        worked_session(batch, "PID2", "5ab000000000000000000002"),
    )
    batch.budget = batch_spend(batch)["total"] + Decimal("2.00")  # two bonuses of $1 and fees pass it
    batch.save(update_fields=["budget"])
    amounts = {one: Decimal("1.00"), two: Decimal("1.00")}
    with pytest.raises(ProviderError, match="over its budget"):
        prolific_bonuses.pay_bonus(batch, amounts, "Careful work", key="form:budget")
    assert len(api.calls) == 2 and not ProlificBonus.objects.exists()  # publishing only
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK7", "total_amount": 266})
    api.post(API + "bulk-bonus-payments/BULK7/pay/", status=202, json={})
    prolific_bonuses.pay_bonus(batch, amounts, "Careful work", key="form:budget", over_budget=True)
    prolific_bonuses.pay_bonus(batch, amounts, "Careful work", key="form:budget")  # a repeat: recorded already
    assert LedgerEntry.objects.filter(kind="bonus").count() == 2


def test_a_paid_prolific_bonus_whose_ledger_write_failed_is_recorded_on_retry_even_past_the_budget(
    api,  # noqa: F811
    monkeypatch,
):
    """The pay call went out, the ledger write failed, and before the retry the budget was lowered to
    the spend: the retry was refused over the budget, so money paid was never recorded."""
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    assignment = session.assignments().first()
    money_budget.set_budget(batch, money_budget.bonus_spend(batch)["total"] + Decimal("1.00"))
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK9", "total_amount": 66})
    pay = api.post(API + "bulk-bonus-payments/BULK9/pay/", status=202, json={})
    fail_once(monkeypatch, review, "record_with_fee")
    form = {"assignment_id": assignment.pk, "amount": "0.50", "reason": "Thanks", "token": "tok-late"}
    with pytest.raises(OperationalError):
        review.send_bonus(**form)
    money_budget.set_budget(batch, batch_spend(batch)["total"])
    entry, created = review.send_bonus(**form)
    assert created and entry.amount == Decimal("0.50") and pay.call_count == 1


def test_a_refused_bulk_bonus_sent_again_is_checked_against_the_budget_again(api):  # noqa: F811
    """A bulk bonus Prolific refused paid nothing; sent again later (the same form), it was let
    through because its first attempt had passed the budget, whatever was spent since."""
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001")
    two = worked_session(batch, "PID2", "5ab000000000000000000002")
    money_budget.set_budget(batch, money_budget.bonus_spend(batch)["total"] + Decimal("1.50"))  # one $1 bonus and fee
    api.post(API + "submissions/bonus-payments/", status=400, json={"error": "refused"})
    with pytest.raises(ProviderError, match="refused"):
        prolific_bonuses.pay_bonus(batch, {one: Decimal("1.00")}, "Careful work", key="form:first")
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK2", "total_amount": 133})
    api.post(API + "bulk-bonus-payments/BULK2/pay/", status=202, json={})
    prolific_bonuses.pay_bonus(batch, {two: Decimal("1.00")}, "Careful work", key="form:second")
    with pytest.raises(ProviderError, match="over its budget"):
        prolific_bonuses.pay_bonus(batch, {one: Decimal("1.00")}, "Careful work", key="form:first")
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1
