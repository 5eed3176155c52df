"""The money ledger as CSV (a batch's, and every batch's): every entry once, the page's totals, exact
amounts in the batch's currency, no formula a spreadsheet would run, leads only."""

import csv
import io
import re
import secrets
from datetime import datetime
from decimal import Decimal

import pytest
from django.urls import reverse

from config.csv_cells import original_text
from hits import ledger
from hits.models import Assignment, Batch, LedgerEntry, Worker
from hits.selectors import ledger_export
from hits.selectors.figures import batch_spend
from hits.services import review
from hits.views.worker import inhouse_worker

from .crowd_data import published_batch, work_all

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

FORMULA_NOTE = '=HYPERLINK("http://evil.example","click")'


def _rows(response) -> list[dict]:
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment;")
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def paid_batch(worker, lead, **options) -> Batch:
    """A published in-house batch whose tasks `worker` did, every one approved by `lead`, and one
    bonus whose reason looks like a formula."""
    batch = published_batch(**options)
    me = inhouse_worker(worker)
    work_all(me, batch)
    done = list(Assignment.objects.filter(hit__batch=batch, worker=me))
    for a in done:
        review.approve(assignment_id=a.pk, by=lead)
    review.send_bonus(assignment_id=done[0].pk, amount="0.40", reason=FORMULA_NOTE, token=secrets.token_hex(8), by=lead)
    return batch


def _prolific_gbp(batch) -> Batch:
    Batch.objects.filter(pk=batch.pk).update(provider="prolific", provider_config={"currency": "GBP"})
    return Batch.objects.get(pk=batch.pk)


def test_a_batch_csv_has_every_entry_once_and_adds_up_to_the_ledger_page(client, lead, worker, monkeypatch):
    monkeypatch.setattr(ledger_export, "ROWS_PER_CHUNK", 2)  # several chunks, so the chunk ends are read too
    batch = paid_batch(worker, lead)
    a = Assignment.objects.filter(hit__batch=batch).first()
    # a provider's fee on a payment, as record_with_fee writes it (no in-house payment has one)
    ledger.record_with_fee(
        key="test-fee-pay", kind="bonus", assignment=a, worker=a.worker, batch=batch, amount="1.25", fee="0.42", by=None
    )
    other = published_batch(batch.dataset)  # another batch's row is not in this file
    ledger.record(key="other", kind="reward", assignment=None, worker=a.worker, batch=other, amount="9.99", by=None)
    client.force_login(lead)
    page = client.get(reverse("batch_ledger", args=[batch.pk])).content.decode()
    assert f'href="{reverse("batch_ledger_csv", args=[batch.pk])}"' in page  # the page links to the file

    rows = _rows(client.get(reverse("batch_ledger_csv", args=[batch.pk])))
    assert list(rows[0]) == ledger_export.COLUMNS
    entries = LedgerEntry.objects.filter(batch=batch)
    ids = [int(r["entry_id"]) for r in rows]
    assert sorted(ids) == sorted(entries.values_list("pk", flat=True)) and len(ids) == len(set(ids)) > 3
    assert ids == list(entries.order_by("created_at", "pk").values_list("pk", flat=True))  # oldest first
    for r in rows:
        assert re.fullmatch(r"\d+\.\d\d", r["amount"]) and re.fullmatch(r"\d+\.\d\d", r["fee"])
        assert r["time_utc"].endswith("+00:00") and datetime.fromisoformat(r["time_utc"])  # ISO 8601, UTC
        assert (r["batch_id"], r["batch_name"], r["provider"], r["currency"]) == (
            str(batch.pk),
            batch.name,
            "inhouse",
            "USD",
        )
    spend = batch_spend(batch)
    for kind in ("reward", "bonus"):
        assert sum(Decimal(r["amount"]) for r in rows if r["kind"] == kind) == spend[kind]
    assert sum(Decimal(r["fee"]) for r in rows) == spend["fee"] == Decimal("0.42")
    assert sum(Decimal(r["amount"]) + Decimal(r["fee"]) for r in rows) == spend["total"]

    by_key = {r["key"]: r for r in rows}
    fee = by_key["fee:test-fee-pay"]
    assert (fee["kind"], fee["amount"], fee["fee"], fee["decided_by"]) == ("fee", "0.00", "0.42", "")
    reward = next(r for r in rows if r["kind"] == "reward")
    entry = LedgerEntry.objects.select_related("assignment").get(pk=reward["entry_id"])
    assert reward["amount"] == f"{entry.amount:.2f}" and reward["decided_by"] == lead.username
    assert reward["worker_external_id"] == entry.worker.external_id
    assert (reward["assignment_id"], reward["hit_id"]) == (str(entry.assignment_id), str(entry.assignment.hit_id))
    assert reward["time_utc"] == entry.created_at.isoformat()


def test_formula_looking_text_is_neutralised(client, lead, worker):
    batch = paid_batch(worker, lead)
    Batch.objects.filter(pk=batch.pk).update(name="-2+3*cmd")
    Worker.objects.filter(user=worker).update(external_id="@SUM(1+1)")
    client.force_login(lead)
    for url in (reverse("batch_ledger_csv", args=[batch.pk]), reverse("ledger_csv_all")):
        rows = _rows(client.get(url))
        bonus = next(r for r in rows if r["kind"] == "bonus")
        assert bonus["note"] == "'" + FORMULA_NOTE and original_text(bonus["note"]) == FORMULA_NOTE
        assert {r["batch_name"] for r in rows} == {"'-2+3*cmd"}
        assert {r["worker_external_id"] for r in rows} == {"'@SUM(1+1)"}


def test_the_all_batches_csv_has_each_batch_in_its_own_currency(client, lead, worker):
    dollars = paid_batch(worker, lead)
    pounds = _prolific_gbp(published_batch(dollars.dataset))
    someone = Worker.objects.get(user=worker)
    for i in range(2):
        ledger.record_with_fee(
            key=f"gbp-{i}",
            kind="reward",
            assignment=None,
            worker=someone,
            batch=pounds,
            amount="2.10",
            fee="0.70",
            by=lead,
        )
    client.force_login(lead)
    batch_list = client.get(reverse("batch_list", args=[dollars.dataset_id])).content.decode()
    assert f'href="{reverse("ledger_csv_all")}"' in batch_list

    rows = _rows(client.get(reverse("ledger_csv_all")))
    assert sorted(int(r["entry_id"]) for r in rows) == sorted(LedgerEntry.objects.values_list("pk", flat=True))
    currency = {r["batch_id"]: r["currency"] for r in rows}
    assert currency == {str(dollars.pk): "USD", str(pounds.pk): "GBP"}
    assert {r["provider"] for r in rows if r["batch_id"] == str(pounds.pk)} == {"prolific"}
    for batch in (dollars, pounds):
        mine = [r for r in rows if r["batch_id"] == str(batch.pk)]
        total = sum(Decimal(r["amount"]) + Decimal(r["fee"]) for r in mine)
        assert total == batch_spend(batch)["total"]
    assert sum(Decimal(r["fee"]) for r in rows if r["currency"] == "GBP") == Decimal("1.40")


def test_only_leads_download_the_ledger(client, lead, worker, author):
    batch = paid_batch(worker, lead)
    urls = [reverse("batch_ledger_csv", args=[batch.pk]), reverse("ledger_csv_all")]
    for url in urls:
        assert client.get(url).status_code == 302  # signed out: to the login page
    for person in (worker, author):
        client.force_login(person)
        for url in urls:
            response = client.get(url)
            assert response.status_code == 403 and not getattr(response, "streaming", False)
    client.force_login(lead)
    assert client.get(reverse("batch_ledger_csv", args=[batch.pk + 1000])).status_code == 404
