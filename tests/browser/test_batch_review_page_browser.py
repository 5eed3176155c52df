"""The batch page, as a walkthrough found it: the pay bucket "11–15" wrapped as "11–" / "15" in the
cost and calibration tables on a 390 px phone, and "Approve ticked" with nothing ticked asked the
lead to confirm paying before the server answered "Tick at least one assignment."."""

import pytest

from hits.models import Assignment
from hits.services.simulate import simulate_crowd

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


def test_approving_with_nothing_ticked_says_so_without_asking_to_pay(live_server, browser, lead):
    batch = published_batch(demo_dataset())
    simulate_crowd(batch, workers=2, accuracy=0.9, seed=3)
    submitted = Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED).order_by("pk").first()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    dialogs = []

    def on_dialog(dialog):
        dialogs.append(dialog.message)
        dialog.accept()

    page.on("dialog", on_dialog)
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    page.click("button:text('Approve ticked')")
    page.wait_for_selector("#review-form [role=alert]:has-text('Tick at least one assignment.')")
    assert dialogs == []  # no "pay their rewards?" for nothing
    page.click("button:text('Reject ticked')")
    assert dialogs == []
    assert not Assignment.objects.filter(hit__batch=batch).exclude(status__in=["submitted", "assigned"]).exists()
    # with one ticked, the confirmation is asked as before and the assignment approved
    page.check(f"input[name=assignment][value='{submitted.pk}']")
    page.click("button:text('Approve ticked')")
    page.wait_for_selector(".messages li:has-text('Approved 1')")
    assert dialogs == ["Approve the ticked assignments and pay their rewards?"]
    context.close()
