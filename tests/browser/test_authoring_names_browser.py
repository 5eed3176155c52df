"""An author with a screen reader: each ACU field of the writing page is named by its place ("ACU 2 of
sentence 1", not "ACU" thirty times), the names follow a move, and on the proofreading page each
ACU's comment control and field name the ACU they are about."""

import pytest
from playwright.sync_api import expect

from annotation.models import Reference
from annotation.services import authoring

from ..authoring_data import unauthored_dataset
from .test_authoring_browser import as_user, wait_saved

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIRST, SECOND, OTHER = (
    "Anuradha Koirala has been sleeping outdoors.",
    "Young women and girls have been sleeping outdoors.",
    "Pushpa Basnet was forced to evacuate her residence.",
)


def field(page, name):
    return page.get_by_role("textbox", name=name, exact=True)


def test_acu_fields_and_review_comments_name_what_they_are_about(
    live_server, browser, shoot, author, make_user, tmp_path
):
    reviewer = make_user("bea-author", "author")
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1, reviewer_id=reviewer.pk)
    reference = Reference.objects.get(writer=author)

    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    wait_saved(page)
    page.keyboard.press("n")
    for text in (FIRST, SECOND):
        page.keyboard.type(text)
        page.keyboard.press("Enter")
    page.keyboard.press("ArrowDown")  # the next sentence's new-ACU box
    page.keyboard.type(OTHER)
    page.keyboard.press("Enter")
    wait_saved(page)
    assert field(page, "ACU 1 of sentence 1").input_value() == FIRST
    assert field(page, "ACU 2 of sentence 1").input_value() == SECOND
    assert field(page, "ACU 1 of sentence 2").input_value() == OTHER
    assert page.get_by_role("button", name="Delete ACU 2 of sentence 1", exact=True).count() == 1
    if page.locator("button.suggest").count():
        assert page.get_by_role("button", name="Suggest ACUs for sentence 2", exact=True).count() == 1

    # Moved up, the second ACU is now the first, and its field says so.
    field(page, "ACU 2 of sentence 1").focus()
    page.keyboard.press("Alt+ArrowUp")
    wait_saved(page)
    assert field(page, "ACU 1 of sentence 1").input_value() == SECOND
    assert field(page, "ACU 2 of sentence 1").input_value() == FIRST
    shoot(page, "a11y-authoring-names")
    page.on("dialog", lambda d: d.accept())  # a sentence without an ACU: Done asks first
    page.focus("#submit-form button")
    page.keyboard.press("Enter")
    page.wait_for_selector(".messages li:has-text('Sent to review')")
    page.context.close()

    page = as_user(browser, live_server.url, reviewer)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/review/")
    toggle = page.locator("li.acu-review", has_text=FIRST).locator("summary")
    expect(toggle).to_have_accessible_name(f"Comment on “{FIRST}”")
    toggle.focus()
    page.keyboard.press("Enter")  # opens the comment box
    box = page.get_by_role("textbox", name=f"Comment on “{FIRST}”", exact=True)
    box.fill("Say where she sleeps.")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Save comment
    page.wait_for_selector(".comment:has-text('Say where she sleeps')")
    shoot(page, "a11y-review-names")
    page.context.close()
