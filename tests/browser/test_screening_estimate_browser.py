"""The new batch form's live estimate of a Prolific batch with a qualification test: its screening
study is a line of its own, counted in the total, as on the draft's page (the form showed a lower
total); the line reads as money and stays inside its box, on a desktop and on a phone."""

import re

import pytest
from playwright.sync_api import expect

from hits.models import Batch
from hits.money import format_money
from hits.services.batches import cost_estimate
from hits.services.qualification import build_test

from ..crowd_data import demo_dataset
from .conftest import ARTIFACTS
from .test_lead_loop_browser import as_lead

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MONEY = r"\$\d{1,3}(,\d{3})*\.\d{2}"


def inside(page, selector: str) -> bool:
    return page.evaluate("(e) => e.scrollWidth <= e.clientWidth", page.query_selector(selector))


def test_the_live_estimate_shows_the_screening_study_and_counts_it_in_the_total(live_server, page, shoot, lead):
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.8)
    as_lead(page, live_server, lead)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/batches/new")
    box = page.locator("#live-estimate")
    expect(box).to_contain_text("HITs")
    page.select_option("#id_provider", "prolific")
    page.fill("#id_prolific_hits_per_session", "3")
    page.fill("#id_prolific_workspace_id", "WORKSPACE1")
    expect(box).not_to_contain_text("Screening study")  # no test: no screening
    page.select_option("#id_qualification_test", str(test.pk))
    line = box.locator(".extra-cost")
    expect(line).to_have_text(
        re.compile(
            rf"^Counted in the total: Screening study \(qualification test\), at most \d+ places "
            rf"× \({MONEY} \+ {MONEY} fee\) = {MONEY}$"
        )
    )
    shown = box.inner_text()
    assert inside(page, "#live-estimate") and inside(page, "#live-estimate .extra-cost")
    shoot(page, "screening-live-estimate")
    box.screenshot(path=str(ARTIFACTS / "screening-live-estimate-box.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    assert inside(page, "#live-estimate") and page.evaluate("document.documentElement.scrollWidth") <= 390
    box.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "screening-live-estimate-phone.png"))  # the box in the view
    page.set_viewport_size({"width": 1280, "height": 900})

    page.fill("#id_name", "screened draft")
    page.click("button:text('Create draft')")
    page.wait_for_selector("#batch-stage")
    batch = Batch.objects.get(name="screened draft")
    cost = cost_estimate(batch)
    (extra,) = cost["extras"]
    total = format_money(cost["total"], "USD")
    assert f" · {total} estimated (rewards {format_money(cost['rewards'], 'USD')}" in shown  # the draft's total
    assert shown.endswith(f"= {format_money(extra.total, 'USD')}") and f"at most {extra.places} places" in shown
    expect(page.locator("#cost-table tfoot")).to_contain_text(total)  # the batch page's
