"""The money ledger in a real browser, on a phone and a desktop: a page of rows, the totals, the pager."""

from decimal import Decimal

import pytest

from hits.models import LedgerEntry
from hits.views.lead import LEDGER_PAGE_SIZE
from tests.conftest import PASSWORD
from tests.crowd_data import published_batch
from tests.test_handout import make_workers

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [390, 1280])
def test_the_ledger_pages_at_phone_and_desktop_widths(live_server, browser, shoot, lead, width):
    batch = published_batch()
    (worker,) = make_workers(1)
    rows = LEDGER_PAGE_SIZE + 20
    LedgerEntry.objects.bulk_create(
        LedgerEntry(batch=batch, worker=worker, kind="reward", amount=Decimal("1234.5"), key=f"r{i}", note=f"row {i}")
        for i in range(rows)
    )
    page = browser.new_page(viewport={"width": width, "height": 800})
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/batches/{batch.pk}/ledger/")
    assert page.locator("#ledger tbody tr").count() == LEDGER_PAGE_SIZE
    assert page.locator(".stats li", has_text="total").inner_text() == f"total ${1234.5 * rows:,.2f}"
    amount = page.locator("#ledger td.num").first
    assert amount.inner_text() == "$1,234.50"
    box = amount.bounding_box()
    assert box and box["x"] + box["width"] <= width  # the money is in sight without scrolling the table
    # Nothing wider than the screen but the table's own scrolling box.
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shoot(page, f"ledger-{width}")
    page.click("a[rel=next]")
    page.locator(".pager", has_text="(page 2 of 2)").wait_for()
    assert page.url.endswith("?page=2")
    assert page.locator("#ledger tbody tr").count() == 20
    assert page.locator(".pager").inner_text().startswith("« First")
    shoot(page, f"ledger-{width}-last")
