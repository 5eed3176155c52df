"""Issue 47 item 14: on the authoring page the long "Text not yet added…" save status no longer pushes
*Done: send to review* out of its place (the page head's right edge), at 1280 and 390 px."""

import pytest

from annotation.models import Reference
from annotation.services import authoring

from ..authoring_data import unauthored_dataset
from .test_first_study_e2e_browser import fits, open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_long_save_status_leaves_the_button_in_place(live_server, browser, shoot, author, tmp_path, width):
    dataset = unauthored_dataset(tmp_path, name=f"status-{width}", documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    ref = Reference.objects.get(document__dataset=dataset)
    page = open_as(browser, live_server.url, author, width=width)
    page.goto(f"{live_server.url}/authoring/references/{ref.pk}/")
    button = page.locator("#submit-form button")
    head = page.locator(".page-head")

    def right_gap():
        return (
            head.bounding_box()["x"]
            + head.bounding_box()["width"]
            - (button.bounding_box()["x"] + button.bounding_box()["width"])
        )

    assert abs(right_gap()) < 2  # the button at the head's right edge
    page.locator("#editor .acu-new").first.click()
    page.keyboard.type("A fact typed but not yet added")
    # The field's text is kept for a reload (authoring.js writes it on each input event, which the
    # typing has delivered): no wait, the state is there or the reload below finds nothing.
    assert page.evaluate("Object.keys(localStorage).some(k => k.startsWith('acu-new:'))")
    page.reload()
    page.wait_for_selector("#save-state:has-text('Text not yet added')")
    assert abs(right_gap()) < 2, f"the button moved {right_gap():.0f} px from the right edge"
    status, box = page.locator("#save-state").bounding_box(), button.bounding_box()
    assert status["x"] + status["width"] <= box["x"] + 1 or status["y"] + status["height"] <= box["y"] + 1
    fits(page, width)
    shoot(page, f"i47-authoring-status-{width}")
    page.context.close()
