"""The lead's money on the pages these changes touch, in Chromium at 1366 and 390 px: the ledger
page's list of MTurk bonuses left unsettled (MTurk's 30-character assignment ids, amounts in
dollars, the re-check button) and the dataset's workers page whose rate column gives a worker
paid in pounds and in dollars each currency's rate. Money reads as money; the page body never
scrolls sideways (wide tables scroll in their own box). Screenshots land in test-artifacts/."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from hits.models import Assignment, Batch, Worker
from hits.providers.mturk.models import MTurkBonus

from ..conftest import PASSWORD
from ..crowd_data import published_batch, scored, simulated_round
from ..test_mturk import mturk_batch
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = (1366, 390)
MONEY = re.compile(r"^[£$]\d{1,3}(,\d{3})*\.\d{2}( · [£$]\d{1,3}(,\d{3})*\.\d{2})*$")


def _stale_mturk_bonus() -> Batch:
    batch = mturk_batch()
    worker = Worker.objects.create(provider="mturk", external_id="A2ZX9ZLEXAMPLE1")
    a = Assignment.objects.create(
        hit=batch.hits.order_by("pk").first(),
        worker=worker,
        external_id="3PWWM24LHSX369EBUXKO681UQ6G29K",
        status=Assignment.Status.APPROVED,
    )
    for token, amount, days in (("form-a", "1250.00", 3), ("form-b", "0.50", 1.5)):
        MTurkBonus.objects.create(token=token, batch=batch, assignment=a, amount=Decimal(amount), reason="Careful")
        MTurkBonus.objects.filter(token=token).update(created_at=timezone.now() - timedelta(days=days))
    MTurkBonus.objects.filter(token="form-b").update(checked_at=timezone.now() - timedelta(hours=2))
    return batch


def _fits(page, width: int, name: str) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{name} at {width}px scrolls sideways: {wide}px"


def test_the_ledger_lists_unsettled_mturk_bonuses_legibly(live_server, browser, shoot, lead):
    batch = _stale_mturk_bonus()
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        login(page, live_server.url, lead.username, PASSWORD)
        page.goto(f"{live_server.url}/batches/{batch.pk}/ledger/")
        rows = page.locator("#mturk-unsettled-bonuses tbody tr")
        assert rows.count() == 2
        amounts = [t.strip() for t in page.locator("#mturk-unsettled-bonuses td.num").all_inner_texts()]
        assert amounts == ["$1,250.00", "$0.50"]
        assert "3PWWM24LHSX369EBUXKO681UQ6G29K" in rows.first.inner_text()
        assert page.get_by_role("button", name="Re-check with MTurk").count() == 2
        _fits(page, width, "ledger")
        shoot(page, f"stale-mturk-bonuses-ledger-{width}")
        context.close()


def test_the_workers_page_rates_each_currency_legibly(live_server, browser, shoot, lead):
    dataset, pounds = simulated_round()
    Batch.objects.filter(pk=pounds.pk).update(provider="prolific", provider_config={"currency": "GBP"})
    Worker.objects.filter(assignments__hit__batch=pounds).update(provider="prolific")
    dollars = published_batch(dataset)
    Batch.objects.filter(pk=dollars.pk).update(provider="prolific", provider_config={"currency": "USD"})
    worker = Worker.objects.filter(assignments__hit__batch=pounds).distinct().order_by("pk").first()
    Assignment.objects.create(
        hit=dollars.hits.order_by("pk").first(),
        worker=worker,
        status=Assignment.Status.SUBMITTED,
        active_seconds=120,
        submitted_at=timezone.now(),
    )
    scored(dataset)
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        login(page, live_server.url, lead.username, PASSWORD)
        page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/workers/")
        row = page.locator(f'tr[data-worker="{worker.external_id}"]')
        rate = row.locator("td.num").nth(4).inner_text().strip()
        assert MONEY.match(rate) and "£" in rate and "$" in rate, rate
        box = row.locator("td.num").nth(4).bounding_box()
        assert box and box["height"] < 80, box  # one or two lines, not a letter a line
        _fits(page, width, "workers")
        shoot(page, f"mixed-currency-workers-{width}")
        context.close()
