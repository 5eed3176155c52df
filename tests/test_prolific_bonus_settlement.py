"""Every Prolific bonus that may have cost money reaches the ledger or the budget, whoever decided
it: a paid bulk bonus whose ledger write failed is recorded by the periodic sync (exactly once,
with its fee), a bonus whose pay answer was lost counts as spent in the budget check and is shown
to the lead, and a session approved with HITs still open is not paid twice for them."""

import contextlib
from decimal import Decimal

import pytest
from django.urls import reverse
from responses import matchers

from hits.models import Assignment, Batch, LedgerEntry
from hits.provider_interface import ProviderError, get_provider
from hits.providers.prolific import bonuses as prolific_bonuses
from hits.providers.prolific import decisions
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.models import ProlificBonus, ProlificStudy
from hits.providers.prolific.sessions import start_session
from hits.selectors.figures import batch_spend
from hits.services import money_budget, review
from hits.services.submission import SubmissionRefused, submit_assignment
from hits.tasks import sync_provider_batches

from .crowd_data import all_answers
from .test_ledger_faults import fail_once
from .test_prolific_contract import (  # noqa: F401 (api: the fixture)
    API,
    AUTH,
    api,
    published,
    reviewable,
    study_json,
    worked_session,
)

pytestmark = pytest.mark.django_db


def expect_sync(mock):
    """One sync of the main study as Prolific answers it: the study, then no submissions."""
    mock.get(API + "studies/STUDY1/", json=study_json("STUDY1", "ACTIVE"))
    mock.get(
        API + "submissions/",
        match=[AUTH, matchers.query_param_matcher({"study": "STUDY1", "page_size": "100"})],
        json={"results": [], "_links": {"next": {"href": None}, "previous": {"href": None}}, "meta": {"count": 0}},
    )


def bonus_rows(batch) -> list[tuple]:
    return sorted(
        (e.kind, e.worker.external_id, e.amount, e.assignment_id)
        for e in LedgerEntry.objects.filter(batch=batch, kind__in=["bonus", "fee"]).select_related("worker")
    )


def test_the_sync_records_a_paid_bulk_bonus_whose_ledger_write_failed_once_with_its_fees(api, monkeypatch):  # noqa: F811
    """Prolific paid the bulk bonus, then our ledger write failed: the lead need not send the same
    form again, the next sync records each line and its fee, and neither a second sync nor the
    form sent again records anything more (or calls Prolific's pay again)."""
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001")
    two = worked_session(batch, "PID2", "5ab000000000000000000002")
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK5", "total_amount": 200})
    pay = api.post(API + "bulk-bonus-payments/BULK5/pay/", status=202, json={})
    fail_once(monkeypatch, decisions, "record_with_fee")
    amounts = {one: Decimal("1.00"), two: Decimal("0.50")}
    with pytest.raises(Exception, match="closed the connection"):
        prolific_bonuses.pay_bonus(batch, amounts, "Careful work", key="form:crash")
    assert ProlificBonus.objects.get(key="form:crash").state == "paid"
    assert bonus_rows(batch) == []
    fee = get_provider("prolific").fee
    cost = Decimal("1.50") + fee(Decimal("1.00"), 3) + fee(Decimal("0.50"), 3)
    assert get_provider("prolific").unsettled_spend(batch) == cost  # paid: the budget counts it meanwhile

    expect_sync(api)
    prolific_sync.sync_batch(batch)
    assert get_provider("prolific").unsettled_spend(batch) == 0  # its rows count it now, once
    expected = sorted(
        [
            ("bonus", "PID1", Decimal("1.00"), None),
            ("fee", "PID1", fee(Decimal("1.00"), 3), None),
            ("bonus", "PID2", Decimal("0.50"), None),
            ("fee", "PID2", fee(Decimal("0.50"), 3), None),
        ]
    )
    assert bonus_rows(batch) == expected
    assert all(e.note == "Careful work" for e in LedgerEntry.objects.filter(kind="bonus"))

    expect_sync(api)
    prolific_sync.sync_batch(batch)
    prolific_bonuses.pay_bonus(batch, amounts, "Careful work", key="form:crash")  # the same form again
    assert bonus_rows(batch) == expected and pay.call_count == 1


def test_the_periodic_task_records_a_paid_bonus_of_a_batch_no_longer_synced(api, monkeypatch):  # noqa: F811
    """The beat task syncs published and stopped batches only; a bonus paid on a batch that is
    complete now (its ledger write failed) is recorded by the same task all the same, once."""
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001")
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK8", "total_amount": 133})
    api.post(API + "bulk-bonus-payments/BULK8/pay/", status=202, json={})
    fail_once(monkeypatch, decisions, "record_with_fee")
    with pytest.raises(Exception, match="closed the connection"):
        prolific_bonuses.pay_bonus(batch, {one: Decimal("1.00")}, "Careful work", key="form:late")
    Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.COMPLETE)
    sync_provider_batches()
    sync_provider_batches()
    fee = get_provider("prolific").fee(Decimal("1.00"), 3)
    assert bonus_rows(batch) == [("bonus", "PID1", Decimal("1.00"), None), ("fee", "PID1", fee, None)]


def test_the_sync_records_a_paid_single_hit_bonus_whose_ledger_write_failed_as_the_form_would(
    api,  # noqa: F811
    monkeypatch,
    lead,
):
    """A bonus on one HIT (review.send_bonus writes its own ledger row, keyed by the form, naming
    the assignment and the lead): paid at Prolific, then the row's write failed. The sync writes that
    very row (so the form sent again finds it and writes nothing), with its fee, once, naming the
    lead who sent it (it named no one: the bonus did not keep who sent it)."""
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    assignment = session.assignments().first()
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK9", "total_amount": 66})
    pay = api.post(API + "bulk-bonus-payments/BULK9/pay/", status=202, json={})
    fail_once(monkeypatch, review, "record_with_fee")
    form = {"assignment_id": assignment.pk, "amount": "0.50", "reason": "Thanks", "token": "tok-sync", "by": lead}
    with pytest.raises(Exception, match="closed the connection"):
        review.send_bonus(**form)
    assert ProlificBonus.objects.get(key="assignment:tok-sync").state == "paid"

    expect_sync(api)
    prolific_sync.sync_batch(batch)
    expected = [
        ("bonus", "PID1", Decimal("0.50"), assignment.pk),
        ("fee", "PID1", get_provider("prolific").fee(Decimal("0.50"), 3), assignment.pk),
    ]
    assert bonus_rows(batch) == expected
    assert {e.created_by for e in LedgerEntry.objects.filter(batch=batch, kind__in=["bonus", "fee"])} == {lead}
    entry, created = review.send_bonus(**form)
    assert not created and entry.key == "bonus:tok-sync"
    expect_sync(api)
    prolific_sync.sync_batch(batch)
    assert bonus_rows(batch) == expected and pay.call_count == 1


def test_the_sync_does_not_double_a_single_hit_bonus_recorded_by_its_form(api):  # noqa: F811
    """The normal path: review.send_bonus paid and recorded the bonus; the sync finds its row."""
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    assignment = session.assignments().first()
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK4", "total_amount": 66})
    api.post(API + "bulk-bonus-payments/BULK4/pay/", status=202, json={})
    review.send_bonus(assignment_id=assignment.pk, amount="0.50", reason="Thanks", token="tok-ok")
    before = bonus_rows(batch)
    assert len(before) == 2
    assert get_provider("prolific").unsettled_spend(batch) == 0  # its row counts, not it again as pending
    expect_sync(api)
    prolific_sync.sync_batch(batch)
    assert bonus_rows(batch) == before


def test_a_paid_bonus_whose_ledger_write_failed_counts_in_the_budget_once_until_and_after_the_sync(api, monkeypatch):  # noqa: F811
    """Prolific paid a bonus on one HIT, then its ledger write failed: until the next sync writes its
    row (up to five minutes), the money has left all the same, so the budget check counts it (its
    amount and fee, as a bonus paid but not yet recorded) and a second bonus that fits only without
    it is refused, on one HIT and in bulk. Once recorded it counts once: as a ledger row, no longer
    as pending."""
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001")
    two = worked_session(batch, "PID2", "5ab000000000000000000002")
    spent = batch_spend(batch)["total"]
    # $1.50 of room beside what the check counts already (the sessions' rewards still to approve).
    batch = money_budget.set_budget(batch, money_budget.bonus_spend(batch)["total"] + Decimal("1.50"))
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK9", "total_amount": 133})
    pay = api.post(API + "bulk-bonus-payments/BULK9/pay/", status=202, json={})
    fail_once(monkeypatch, review, "record_with_fee")
    first = {"assignment_id": one.assignments().first().pk, "amount": "1.00", "reason": "Thanks", "token": "tok-a"}
    with pytest.raises(Exception, match="closed the connection"):
        review.send_bonus(**first)
    assert ProlificBonus.objects.get(key="assignment:tok-a").state == "paid" and bonus_rows(batch) == []
    cost = Decimal("1.00") + get_provider("prolific").fee(Decimal("1.00"), 3)
    assert get_provider("prolific").unsettled_spend(batch) == cost

    # $0.50 + its fee fits the budget of spend + $1.50 only without the bonus paid above.
    second = {"assignment_id": two.assignments().first().pk, "amount": "0.50", "reason": "Thanks", "token": "tok-b"}
    with pytest.raises(review.OverBudget, match="over its budget"):
        review.send_bonus(**second)
    with pytest.raises(ProviderError, match="over its budget"):
        prolific_bonuses.pay_bonus(batch, {two: Decimal("0.50")}, "Careful work", key="form:next")
    assert ProlificBonus.objects.filter(state="set_up").count() == 0 and pay.call_count == 1  # nothing more sent

    expect_sync(api)
    prolific_sync.sync_batch(batch)
    assert batch_spend(batch)["total"] == spent + cost  # a ledger row now, and no longer pending
    assert get_provider("prolific").unsettled_spend(batch) == 0
    left = Decimal("1.50") - cost
    assert money_budget.bonus_passes_budget(batch, left) is None
    assert money_budget.bonus_passes_budget(batch, left + Decimal("0.01")) is not None


def test_the_sync_records_a_single_hit_bonus_from_before_bonuses_named_their_hit(api, monkeypatch):  # noqa: F811
    """A bonus on one HIT stored before migration 0031 names no HIT: paid, its ledger write lost, the
    sync writes its row all the same (the key and fee its form writes, naming no HIT), once; the
    form sent again finds it."""
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK9", "total_amount": 66})
    pay = api.post(API + "bulk-bonus-payments/BULK9/pay/", status=202, json={})
    fail_once(monkeypatch, review, "record_with_fee")
    form = {"assignment_id": session.assignments().first().pk, "amount": "0.50", "reason": "Thanks", "token": "tok-old"}
    with pytest.raises(Exception, match="closed the connection"):
        review.send_bonus(**form)
    ProlificBonus.objects.filter(key="assignment:tok-old").update(assignment=None)  # as stored before 0031

    expect_sync(api)
    prolific_sync.sync_batch(batch)
    expected = [
        ("bonus", "PID1", Decimal("0.50"), None),
        ("fee", "PID1", get_provider("prolific").fee(Decimal("0.50"), 3), None),
    ]
    assert bonus_rows(batch) == expected and ProlificBonus.objects.get(key="assignment:tok-old").recorded
    entry, created = review.send_bonus(**form)
    assert not created and entry.key == "bonus:tok-old"
    expect_sync(api)
    prolific_sync.sync_batch(batch)
    assert bonus_rows(batch) == expected and pay.call_count == 1


def test_a_bonus_whose_pay_answer_was_lost_counts_as_spent_in_the_budget_and_is_shown(api, client, lead):  # noqa: F811
    """Prolific's pay call timed out or failed with a 5xx: the money may have left. Prolific's API
    has no call to read a bulk bonus back, so it stays "outcome unknown": its amounts and fees count
    as spent when the next bonus is checked against the budget, and the batch page lists it."""
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001")
    two = worked_session(batch, "PID2", "5ab000000000000000000002")
    money_budget.set_budget(batch, money_budget.bonus_spend(batch)["total"] + Decimal("1.50"))
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK6", "total_amount": 67})
    api.post(API + "bulk-bonus-payments/BULK6/pay/", status=503)
    with pytest.raises(ProviderError, match=r"server error \(503\)"):
        prolific_bonuses.pay_bonus(batch, {one: Decimal("0.50")}, "Thanks", key="form:lost")
    assert ProlificBonus.objects.get(key="form:lost").state == "sent"
    # $0.50 + $0.17 may have left; $1.00 + $0.33 more would pass the budget of spend + $1.50.
    with pytest.raises(ProviderError, match="over its budget"):
        prolific_bonuses.pay_bonus(batch, {two: Decimal("1.00")}, "Careful work", key="form:next")
    assignment = two.assignments().first()
    with pytest.raises(review.OverBudget):
        review.send_bonus(assignment_id=assignment.pk, amount="1.00", reason="Careful work", token="tok-next")
    assert ProlificBonus.objects.filter(state="set_up").count() == 0 and len(api.calls) == 4  # nothing more sent

    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "outcome unknown" in page and "BULK6" in page and "$0.67" in page


def test_a_hit_left_open_when_its_session_was_approved_is_not_paid_again(api):  # noqa: F811
    """Prolific approved a session (it pays the whole study reward) while one of its HITs was still
    open here: the rest of the session reward is recorded for it. That HIT must not be answered and
    approved afterwards, or its reward would be recorded a second time."""
    batch = published(api)
    session = start_session(
        batch=batch, participant_id="PID1", study_id="STUDY1", session_id="5ab000000000000000000001"
    )
    first, second, last = session.assignments().order_by("pk")
    for a in (first, second):
        submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=all_answers(a))
    reviewable(api, batch, session)
    api.post(API + "submissions/bulk-approve/", json={})
    assert prolific_sync.approve_sessions(batch, [session.pk]) == (1, [])
    study = ProlificStudy.objects.get(batch=batch)
    paid = Decimal(study.reward_cents) / 100

    def rewards():
        return sum(LedgerEntry.objects.filter(batch=batch, kind="reward").values_list("amount", flat=True))

    assert rewards() == paid
    with contextlib.suppress(SubmissionRefused):  # the participant's last tab, still open
        submit_assignment(assignment_id=last.pk, worker_id=last.worker_id, answers=all_answers(last))
    prolific_sync.apply_submission(batch, session.session_id, "PID1", "APPROVED")  # the next sync
    assert rewards() == paid
    assert Assignment.objects.get(pk=last.pk).status == Assignment.Status.EXPIRED  # its place went back
