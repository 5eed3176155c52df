"""The batch's bonus turn within one process (SQLite, the embedded default: a lock per batch): the
batch's bonuses one at a time, and no lock kept for a batch once no thread holds or waits for its
turn, so a long-lived process does not keep one per batch it ever paid a bonus on."""

import threading
import time

import pytest

from hits.services import money_budget

from .crowd_data import WAIT

pytestmark = pytest.mark.portable  # the lock of the SQLite lane, tested on either database
turn = money_budget.local_turn


def test_no_lock_is_kept_for_a_batch_once_its_turn_is_over():
    for batch_id in range(1, 201):
        with turn(batch_id), turn(batch_id):  # re-entered by the same thread, as a bonus in a sync's turn
            assert batch_id in money_budget.local_turns
    assert money_budget.local_turns == {}


def test_a_batch_s_turn_is_taken_one_at_a_time_and_dropped_after_the_last():
    """The first thread holds the turn until the second waits for it (the second counted itself
    in: polled, WAIT guards a hang); then the second gets it only after the first left, and the
    lock goes with the last of them. A third batch's turn is not held up meanwhile."""
    events, inside, release = [], threading.Event(), threading.Event()

    def first():
        with turn(7):
            events.append("first in")
            inside.set()
            release.wait(WAIT)
            events.append("first out")

    def second():
        with turn(7):
            events.append("second in")

    one = threading.Thread(target=first)
    one.start()
    assert inside.wait(WAIT)
    two = threading.Thread(target=second)
    two.start()
    deadline = time.monotonic() + WAIT
    while money_budget.local_turns[7][1][0] < 2:  # the second waits for the lock
        assert time.monotonic() < deadline, "the second thread never asked for the turn"
        time.sleep(0.01)
    with turn(8):  # another batch's turn is free
        assert events == ["first in"]
    release.set()
    one.join(WAIT)
    two.join(WAIT)
    assert events == ["first in", "first out", "second in"]
    assert money_budget.local_turns == {}
