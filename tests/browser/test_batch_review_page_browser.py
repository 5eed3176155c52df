"""The batch page, as a walkthrough found it: the pay bucket "11–15" wrapped as "11–" / "15" in the
cost and calibration tables on a 390 px phone."""

import pytest

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The lines a cell's text is laid out on: one client rect per line box its text falls on.
LINES = "cells => cells.map(c => { const r = document.createRange(); r.selectNodeContents(c); return [c.textContent.trim(), r.getClientRects().length]; })"


def test_pay_bucket_labels_stay_on_one_line_on_a_phone(live_server, browser, shoot, lead):
    batch = published_batch(demo_dataset())
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    shoot(page, "batch-buckets-phone")
    for table in ("#cost-table", "#calibration-table"):
        labels = page.eval_on_selector_all(f"{table} tbody tr td:first-child", LINES)
        assert any(label == "11–15" for label, _ in labels), labels
        assert all(lines == 1 for _, lines in labels), (table, labels)
    context.close()

