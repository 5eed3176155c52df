"""The periodic provider sync (hits.tasks.sync_provider_batches) caught by a database error midway:
the task is retried later with backoff, a bounded number of times, each retry one line in the log,
and every money event the sync writes (a screening submission Prolific paid, an approved session's
rewards, each with its fee) reaches the ledger exactly once across the attempts, by its key."""

import logging
from collections import Counter
from decimal import Decimal

import pytest
from django.db import InternalError, OperationalError
from responses import matchers

from hits import ledger
from hits.models import LedgerEntry
from hits.provider_interface import get_provider
from hits.providers.prolific.models import ProlificStudy
from hits.tasks import sync_provider_batches

from .test_prolific_contract import (  # noqa: F401 (api: the fixture)
    API,
    AUTH,
    api,
    published,
    study_json,
    submission,
    worked_session,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def as_a_worker(monkeypatch):
    """`apply()` runs the task as a worker would, retries included (at once, their countdown aside),
    reporting its outcome on the result instead of raising it (the settings propagate it)."""
    from config.celery import app

    monkeypatch.setitem(app.conf, "CELERY_TASK_EAGER_PROPAGATES", False)  # the CELERY_ namespace (config/celery.py)


LOST = OperationalError("server closed the connection unexpectedly\n\tThis probably means the server terminated")
READ_ONLY = InternalError("cannot execute INSERT in a read-only transaction")


def listing(api, study_id, results):  # noqa: F811
    api.get(
        API + "submissions/",
        match=[AUTH, matchers.query_param_matcher({"study": study_id, "page_size": "100"})],
        json={"results": results, "_links": {"next": {"href": None}, "previous": {"href": None}}, "meta": {}},
    )


def paid_batch(api):  # noqa: F811
    """A published batch whose one session Prolific approved, and whose screening study Prolific paid
    for three submissions (a fourth was returned): what a sync records, each with its fee."""
    batch = published(api)
    worked_session(batch, "PID1", "5ab000000000000000000001")
    ProlificStudy.objects.create(
        batch=batch, kind="screening", study_id="SCREEN1", completion_code="C", reward_cents=67, status="ACTIVE"
    )
    api.get(API + "studies/STUDY1/", json=study_json("STUDY1", "ACTIVE"))
    listing(api, "STUDY1", [submission("5ab000000000000000000001", "PID1", "APPROVED")])
    listing(
        api,
        "SCREEN1",
        [submission(f"5c5b0000000000000000000{i}", f"SP{i}", "APPROVED") for i in (1, 2, 3)]
        + [submission("5c5b00000000000000000004", "SP4", "RETURNED")],
    )
    return batch


def failing(monkeypatch, error, fails):
    """The ledger's row write (`hits.ledger.record`) raises `error` when `fails(key, times)` says so
    (`times`: how often that key was written before); returns the keys asked for, in order."""
    real, calls = ledger.record, []

    def flaky(**kwargs):
        times = calls.count(kwargs["key"])
        calls.append(kwargs["key"])
        if fails(kwargs["key"], times):
            raise error
        return real(**kwargs)

    monkeypatch.setattr(ledger, "record", flaky)
    return calls


def money_events(batch) -> Counter:
    return Counter(
        (e.kind, e.worker.external_id) for e in LedgerEntry.objects.filter(batch=batch).select_related("worker")
    )


SCREENING = "reward:prolific-screening:5c5b0000000000000000000"


@pytest.mark.parametrize("error", [LOST, READ_ONLY], ids=["connection lost", "read-only failover"])
def test_a_sync_stopped_midway_by_a_database_error_is_retried_and_records_each_event_once(
    api,  # noqa: F811
    monkeypatch,
    caplog,
    error,
):
    batch = paid_batch(api)
    last_hit = max(batch.prolific_sessions.get().assignments().values_list("pk", flat=True))
    # the first write of each: the fee of the session's last HIT (its approval is rolled back whole, the
    # sync goes on), a screening fee after its reward (rolled back together) and, in the first retry,
    # another screening reward; the rows written before each failure stay
    first_time = {f"fee:reward:{last_hit}", f"fee:{SCREENING}2", f"{SCREENING}3"}
    calls = failing(monkeypatch, error, lambda key, times: key in first_time and times == 0)
    with caplog.at_level(logging.WARNING, logger="config.db_retry"):
        result = sync_provider_batches.apply()
    assert result.successful() and result.get() == {"synced": 1, "failed": 0}
    lines = [r.getMessage() for r in caplog.records if r.name == "config.db_retry"]
    reason = f"{type(error).__name__}: {str(error).splitlines()[0]}"
    assert lines == [
        f"Provider sync: database error ({reason}); retrying in 2 s (retry 1 of 5)",
        f"Provider sync: database error ({reason}); retrying in 4 s (retry 2 of 5)",
    ]
    assert calls.count(f"{SCREENING}1") == 1  # written once: the retries find its key and skip it
    once = {("reward", "PID1"): 3, ("fee", "PID1"): 3}  # the session's three HITs (its whole reward)
    once.update({(kind, f"SP{i}"): 1 for kind in ("reward", "fee") for i in (1, 2, 3)})
    assert money_events(batch) == once
    fee = get_provider("prolific").fee(Decimal("0.67"), batch.assignments_per_hit)
    screening = LedgerEntry.objects.filter(batch=batch, worker__external_id__startswith="SP")
    assert sorted({e.amount for e in screening}) == sorted({Decimal("0.67"), fee})
    # a later run records nothing more
    before = sorted(LedgerEntry.objects.filter(batch=batch).values_list("key", flat=True))
    assert sync_provider_batches.apply().successful()
    assert sorted(LedgerEntry.objects.filter(batch=batch).values_list("key", flat=True)) == before


def test_a_database_error_that_persists_is_retried_with_backoff_a_bounded_number_of_times(
    api,  # noqa: F811
    monkeypatch,
    caplog,
):
    batch = paid_batch(api)
    calls = failing(monkeypatch, READ_ONLY, lambda key, times: key.startswith(SCREENING))
    with caplog.at_level(logging.WARNING, logger="config.db_retry"):
        result = sync_provider_batches.apply()
    assert result.failed() and isinstance(result.result, InternalError)
    lines = [r.getMessage() for r in caplog.records if r.name == "config.db_retry"]
    assert [line.split("; ")[-1] for line in lines] == [
        "retrying in 2 s (retry 1 of 5)",
        "retrying in 4 s (retry 2 of 5)",
        "retrying in 8 s (retry 3 of 5)",
        "retrying in 16 s (retry 4 of 5)",
        "retrying in 32 s (retry 5 of 5)",
        "gave up after 5 retries",
    ]
    assert all("\n" not in line and "Traceback" not in line for line in lines)
    assert calls.count(f"{SCREENING}1") == 6  # the first attempt and five retries
    assert not LedgerEntry.objects.filter(batch=batch, key__contains="screening").exists()
