"""The in-house task page on a phone (390x844), in Chromium: the summary card that stays in view says
it scrolls when the summary is longer than it, no keyboard hints on a narrow or touch screen, and
once the answers are stored the page no longer asks to submit within a time."""

import pytest

from hits.services import handout
from hits.services.submission import task_token
from hits.views.worker import inhouse_worker

from ..crowd_data import demo_dataset, published_batch
from .conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONES = {
    "touch": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
    "narrow": {"viewport": {"width": 390, "height": 844}},  # a narrow window: no touch, a mouse
}


@pytest.mark.parametrize("phone", list(PHONES))
def test_the_task_page_on_a_phone_before_and_after_submitting(live_server, browser, shoot, worker, phone):
    # The demo's longest summary (646 characters): more than a third of a phone's screen.
    dataset = demo_dataset()
    batch = published_batch(dataset, systems=list(dataset.systems.filter(name="abs_bart_out")))
    batch.hits.exclude(summary__document__external_id="cnndm5025").delete()
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    context = browser.new_context(**PHONES[phone])
    page = context.new_page()
    page.goto(f"{live_server.url}/task/{task_token(assignment)}/")
    page.wait_for_selector(".acu-row.current")
    assert page.locator("#task-deadline").is_visible()
    assert "Submit by" in page.inner_text("main")

    # No keys to press on a phone: no key hints, neither the line nor the keys on the buttons.
    assert not page.locator("#key-hint").is_visible()
    assert not page.locator(".choice kbd").first.is_visible()

    # The summary is longer than its card (at most 35% of the screen): the card says it scrolls.
    card = page.locator(".task .summary-card")
    sizes = card.evaluate("c => [c.scrollHeight, c.clientHeight]")
    assert sizes[0] > sizes[1] + 20, f"the summary fits its card ({sizes}): this test needs a longer one"
    cue = card.locator(".summary-more")
    assert cue.is_visible() and "scroll" in cue.inner_text().lower()
    cue_box, card_box = cue.bounding_box(), card.bounding_box()
    assert cue_box and card_box and cue_box["y"] + cue_box["height"] <= card_box["y"] + card_box["height"] + 1
    shoot(page, f"task-phone-{phone}-open")
    page.screenshot(path=ARTIFACTS / f"task-phone-{phone}-open-screen.png")  # the screen as the phone shows it
    card.evaluate("c => { c.scrollTop = c.scrollHeight; }")
    page.wait_for_function("document.querySelector('.summary-more').hidden")  # at the end: nothing more below
    page.screenshot(path=ARTIFACTS / f"task-phone-{phone}-summary-end-screen.png")
    card.evaluate("c => { c.scrollTop = 0; }")
    page.wait_for_function("!document.querySelector('.summary-more').hidden")

    for row in page.locator(".acu-row").all():
        row.locator("button.choice.yes").click()
    page.click("#submit-task")
    page.wait_for_selector("#task-notice:has-text('your answers are saved')")
    # Submitted: no time left to count, as the page opened again after submitting shows it.
    assert page.locator("#task-deadline").count() == 0
    assert "Submit by" not in page.inner_text("main")
    assert page.inner_text("#progress") == "Submitted"
    assert page.locator("#after-submit").is_visible()
    shoot(page, f"task-phone-{phone}-submitted")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=ARTIFACTS / f"task-phone-{phone}-submitted-screen.png")
    page.reload()
    page.wait_for_selector("#already-submitted:not([hidden])")
    assert page.locator("#task-deadline").count() == 0 and page.inner_text("#progress") == "Submitted"
    context.close()
