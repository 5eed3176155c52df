"""Issue 47: the reference page's shortcut "n" goes to the new-ACU box without typing an "n" into it,
and a shortcut never takes a key from a field the user types in (an "n" typed there is text)."""

import pytest

from annotation.models import Reference
from annotation.services import authoring

from ..authoring_data import unauthored_dataset
from .test_first_study_e2e_browser import open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def focused_box(page) -> int | None:
    """The index of the focused new-ACU box among the page's, or None when none is focused."""
    return page.evaluate(
        "() => { const i = [...document.querySelectorAll('#editor .acu-new')].indexOf(document.activeElement);"
        " return i < 0 ? null : i; }"
    )


def test_n_goes_to_the_new_acu_box_and_types_only_inside_it(live_server, browser, shoot, author, tmp_path):
    dataset = unauthored_dataset(tmp_path, name="keys", documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    ref = Reference.objects.get(document__dataset=dataset)
    page = open_as(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/references/{ref.pk}/")
    page.wait_for_selector("#save-state.saved")
    boxes = page.locator("#editor .acu-new")
    assert boxes.count() >= 2
    assert focused_box(page) is None  # the page takes no key before the user asks

    # "n" on the page: the first sentence's new-ACU box is focused, and stays empty.
    page.keyboard.press("n")
    assert focused_box(page) == 0
    assert [boxes.nth(i).input_value() for i in range(boxes.count())] == [""] * boxes.count()

    # In the box, "n" is text: typed, not a shortcut (the focus stays, nothing is added).
    page.keyboard.type("nine nurses")
    assert boxes.nth(0).input_value() == "nine nurses" and focused_box(page) == 0
    page.keyboard.press("Enter")
    page.wait_for_selector("#save-state.saved")
    assert page.locator("#editor li.acu .acu-text").first.input_value() == "nine nurses"

    # In another sentence's box too: "n" goes into that box, never to the first one.
    boxes.nth(1).click()
    page.keyboard.press("n")
    assert boxes.nth(1).input_value() == "n" and focused_box(page) == 1
    assert boxes.nth(0).input_value() == ""
    # An ACU's own field is a field as well.
    page.locator("#editor li.acu .acu-text").first.click()
    page.keyboard.press("End")
    page.keyboard.press("n")
    assert page.locator("#editor li.acu .acu-text").first.input_value() == "nine nursesn"
    shoot(page, "i47-authoring-n-key")
    page.context.close()
