"""Two bonuses on one batch at the same moment (two leads, a double click with two forms, a retried
task): with room in the budget for one, exactly one is paid and recorded, the other is refused.

Prolific's bonuses are paid outside the batch's transaction (their steps commit one by one), so a
row lock taken for the budget check alone ends before the money leaves: the second request read the
spend before the first one's ledger row existed. The fake pay call of whichever request gets there
first waits until the other request either reaches its own pay call (both passed the budget: the
defect) or waits for a lock (bonuses of the batch taken one at a time): no timing decides it."""

import json
import re
import threading
import time
from decimal import Decimal

import pytest
from django.db import connection

from hits.models import Assignment, LedgerEntry
from hits.providers.prolific import bonuses as prolific_bonuses
from hits.selectors.figures import batch_spend
from hits.services import money_budget, review

from .crowd_data import WAIT, at_once, waiting_on_a_lock
from .test_prolific_contract import API, api, published, worked_session  # noqa: F401 (api: the fixture)

pytestmark = [
    pytest.mark.postgres_only("two connections at once: the batch's bonus lock orders the bonuses"),
    pytest.mark.django_db(transaction=True),
]


def other_request_waits_or_pays(pays: list) -> None:
    """Return once two pay calls arrived or another connection to this database waits for a lock
    (polled; WAIT is a guard against a hang, never what decides the test)."""
    deadline = time.monotonic() + WAIT
    with connection.cursor() as cursor:
        while len(pays) < 2:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
            assert time.monotonic() < deadline, "the other bonus neither paid nor waited"
            time.sleep(0.01)


def fake_bonus_calls(api, on_pay=None):  # noqa: F811
    """Prolific's set-up (a new bulk id each time) and pay calls. Returns the pays made, each named
    by its URL, or with `on_pay` by the name `on_pay(request)` returns (it may also wait), called
    once the pay is counted; by default the first pay call waits as above."""
    lock, setups, pays = threading.Lock(), [], []

    def setup(request):
        with lock:
            setups.append(1)
            bulk = f"BULK{len(setups)}"
        return 200, {}, json.dumps({"id": bulk, "total_amount": 133})

    def pay(request):
        with lock:
            pays.append(request.url)
            first, at = len(pays) == 1, len(pays) - 1
        if on_pay is not None:
            name = on_pay(request)
            with lock:
                pays[at] = name
        elif first:
            other_request_waits_or_pays(pays)
        return 202, {}, "{}"

    api.add_callback("POST", API + "submissions/bonus-payments/", callback=setup)
    api.add_callback("POST", re.compile(re.escape(API) + r"bulk-bonus-payments/[^/]+/pay/"), callback=pay)
    return pays


def room_for_one_bonus(batch) -> None:
    """A budget the spend (with the rewards still to approve) plus one $1.00 bonus and its fee fit, two do not."""
    batch.budget = money_budget.bonus_spend(batch)["total"] + Decimal("1.50")
    batch.save(update_fields=["budget"])


def test_two_bulk_bonuses_at_once_never_pass_the_budget_together(api):  # noqa: F811
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001")
    two = worked_session(batch, "PID2", "5ab000000000000000000002")
    room_for_one_bonus(batch)
    pays = fake_bonus_calls(api)

    def bonus(session, key):
        return lambda: prolific_bonuses.pay_bonus(batch, {session: Decimal("1.00")}, "Careful work", key=key)

    results, errors = at_once(bonus(one, "form:lead-a"), bonus(two, "form:lead-b"))
    assert len(results) == 1 and len(errors) == 1 and "over its budget" in errors[0], errors
    assert len(pays) == 1
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1
    assert batch_spend(batch)["total"] <= batch.budget


def test_two_single_prolific_bonuses_at_once_never_pass_the_budget_together(api):  # noqa: F811
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001").assignments().first()
    two = worked_session(batch, "PID2", "5ab000000000000000000002").assignments().first()
    room_for_one_bonus(batch)
    pays = fake_bonus_calls(api)

    def bonus(assignment, token):
        return lambda: review.send_bonus(assignment_id=assignment.pk, amount="1.00", reason="Thanks", token=token)

    results, errors = at_once(bonus(one, "tok-a"), bonus(two, "tok-b"))
    assert len(results) == 1 and len(errors) == 1 and "OverBudget" in errors[0], errors
    assert len(pays) == 1
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1
    assert batch_spend(batch)["total"] <= batch.budget


def test_an_approval_during_a_bonus_s_turn_is_not_held_and_its_reward_counts_once(api):  # noqa: F811
    """Rewards are not held to the budget (publishing is: its estimate counts every reward; approving
    pays what was promised), so an approval does not take the batch's bonus turn: one committing
    while a bonus holds the turn comes after that bonus, as if it had come later. Every bonus counts
    the rewards still to approve as spent, so the approval moves its reward from owed to the ledger:
    counted once. Here a first bonus holds the turn in its pay call; an approval commits meanwhile,
    in its own connection, without waiting for it; a second bonus that waits for the turn fits the
    budget exactly with that reward counted once, and is paid (counted twice, it would be refused)."""
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001").assignments().first()
    two = worked_session(batch, "PID2", "5ab000000000000000000002").assignments().first()
    approved = worked_session(batch, "PID3", "5ab000000000000000000003").assignments().first()
    # Room for both bonuses ($1.00 + $0.33, $0.50 + $0.17) beside the spend and every reward owed.
    batch.budget = money_budget.bonus_spend(batch)["total"] + Decimal("2.00")
    batch.save(update_fields=["budget"])
    paying, release, approval_done = threading.Event(), threading.Event(), threading.Event()

    def pay(request):
        paying.set()
        release.wait(WAIT)
        return 202, {}, "{}"

    api.post(API + "submissions/bonus-payments/", json={"id": "BULK1", "total_amount": 133})
    api.add_callback("POST", API + "bulk-bonus-payments/BULK1/pay/", callback=pay)
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK2", "total_amount": 67})
    api.post(API + "bulk-bonus-payments/BULK2/pay/", status=202, json={})
    results, errors = [], []

    def run(call):
        try:
            results.append(call())
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(repr(exc))
        finally:
            connection.close()

    def bonus(assignment, amount, token):
        return lambda: review.send_bonus(assignment_id=assignment.pk, amount=amount, reason="Thanks", token=token)

    def approve():
        review.approve(assignment_id=approved.pk, at_provider=True)  # as Prolific's decision is mirrored
        approval_done.set()

    first = threading.Thread(target=run, args=(bonus(one, "1.00", "tok-a"),))
    first.start()
    assert paying.wait(WAIT), "the first bonus never reached its pay call"
    approval = threading.Thread(target=run, args=(approve,))
    approval.start()
    approval.join(WAIT)
    assert approval_done.is_set(), "the approval waited for the bonus's turn"
    second = threading.Thread(target=run, args=(bonus(two, "0.50", "tok-b"),))
    second.start()
    assert waiting_on_a_lock(), "the second bonus did not wait for the batch's turn"
    release.set()
    first.join(WAIT)
    second.join(WAIT)
    assert len(results) == 3 and errors == [], (results, errors)
    assert Assignment.objects.get(pk=approved.pk).status == Assignment.Status.APPROVED
    bonuses = LedgerEntry.objects.filter(kind="bonus").order_by("key").values_list("key", flat=True)
    assert list(bonuses) == ["bonus:tok-a", "bonus:tok-b"]
    assert LedgerEntry.objects.filter(key=f"reward:{approved.pk}").exists()
    assert money_budget.bonus_spend(batch)["total"] == batch.budget
