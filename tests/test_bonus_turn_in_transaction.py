"""A bonus whose provider commits its own steps (Prolific, MTurk: a mark committed before the pay
call) called inside a caller's transaction. `bonus_turn` then takes the transaction's advisory lock
(`pg_advisory_xact_lock`), and the provider's "committed" steps are only savepoints of that
transaction: when it rolled back after the money left (the ledger write failed), the mark, the
row and the lock went together. A bonus waiting for the turn then read a spend without the first
one and passed the budget with its room, and the first one's retry paid again. A provider's first
step is now a durable atomic block: inside a caller's transaction the bonus is refused before any
call, and the other bonus is paid once, within the budget."""

import threading
import time

import pytest
from django.db import DatabaseError, connection, transaction

from hits.models import LedgerEntry
from hits.selectors.figures import batch_spend
from hits.services import review

from .crowd_data import WAIT, waiting_on_a_lock
from .test_bonus_budget_race import fake_bonus_calls, room_for_one_bonus
from .test_prolific_contract import API, api, published, worked_session  # noqa: F401 (api: the fixture)

IN_A_TRANSACTION = "in-a-transaction"


def named_pay(request) -> str:
    """A pay call named by its thread; the one of the bonus in a transaction returns once the other
    bonus waits for the turn (polled; WAIT guards a hang)."""
    name = threading.current_thread().name
    if name == IN_A_TRANSACTION:
        assert waiting_on_a_lock(), "the other bonus did not wait for the batch's turn"
    return name


pytestmark = [
    pytest.mark.postgres_only("two connections at once: the batch's bonus lock orders the bonuses"),
    pytest.mark.django_db(transaction=True),
]


def test_a_bonus_inside_a_caller_s_transaction_never_pays_what_its_rollback_forgets(api, monkeypatch):  # noqa: F811
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001").assignments().first()
    two = worked_session(batch, "PID2", "5ab000000000000000000002").assignments().first()
    room_for_one_bonus(batch)
    pays = fake_bonus_calls(api, named_pay)
    real = review.record_with_fee

    def ledger_write(**kwargs):
        if threading.current_thread().name == IN_A_TRANSACTION:
            raise DatabaseError("the ledger write failed")
        return real(**kwargs)

    monkeypatch.setattr(review, "record_with_fee", ledger_write)
    results, errors = [], []

    def run(call):
        try:
            results.append(call())
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(repr(exc))
        finally:
            connection.close()  # each thread has its own connection

    def in_a_transaction():
        with transaction.atomic():
            return review.send_bonus(assignment_id=one.pk, amount="1.00", reason="Thanks", token="tok-a")

    first = threading.Thread(target=run, args=(in_a_transaction,), name=IN_A_TRANSACTION)
    first.start()
    deadline = time.monotonic() + WAIT
    while not pays and first.is_alive():  # the first bonus is paying, or was refused
        assert time.monotonic() < deadline, "the first bonus neither paid nor ended"
        time.sleep(0.01)
    second = threading.Thread(
        target=run,
        args=(lambda: review.send_bonus(assignment_id=two.pk, amount="1.00", reason="Thanks", token="tok-b"),),
    )
    second.start()
    first.join(WAIT)
    second.join(WAIT)

    assert len(results) == 1 and len(errors) == 1, (results, errors)
    assert len(pays) == 1, "money left that no mark or ledger row records"
    assert list(LedgerEntry.objects.filter(kind="bonus").values_list("key", flat=True)) == ["bonus:tok-b"]
    assert batch_spend(batch)["total"] <= batch.budget
