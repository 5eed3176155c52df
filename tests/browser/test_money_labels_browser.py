"""A Prolific batch in GBP in a real browser (the walkthrough): the batch page's money boxes say £ and
the session's rate below the batch's target is said beside it; on the new batch form a budget too
large gets the app's message (the browser does not refuse it first in its own words)."""

from decimal import Decimal

import pytest
from django.urls import reverse

from hits.batch_fields import BatchSpec
from hits.services import batches

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_gbp_batch_page_says_pounds_and_the_rate_below_its_target(live_server, page, shoot, lead):
    dataset = demo_dataset()
    batch = batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(provider="prolific", budget=Decimal("50.00"), provider_config={"currency": "GBP"}),
        systems=list(dataset.systems.filter(name="abs_bart_out")),
    )
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}{reverse('batch_detail', args=[batch.pk])}")
    assert page.inner_text("label[for=id_budget]") == "Budget (£)"
    assert page.inner_text("label[for=bonus-amount]") == "Amount (£)"
    warning = page.locator("#below-target")
    assert warning.is_visible()
    assert "below this batch's target of £12.00/hour" in warning.inner_text()
    warning.scroll_into_view_if_needed()
    shoot(page, "gbp-batch-below-target")
    assert page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth") <= 0


def test_a_budget_too_large_gets_the_apps_message_in_the_browser(live_server, page, shoot, lead):
    dataset = demo_dataset()
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}{reverse('batch_new', args=[dataset.pk])}")
    assert page.inner_text("label[for=id_budget]") == "Budget (in the batch's currency)"
    page.fill("#id_budget", "999999999999.99")
    page.click("button:has-text('Create draft')")
    page.wait_for_load_state()
    error = page.locator("#id_budget ~ p.error")
    assert error.inner_text() == "The budget is between $0.00 and $99,999,999.99."
    error.scroll_into_view_if_needed()
    shoot(page, "new-batch-budget-too-large")
