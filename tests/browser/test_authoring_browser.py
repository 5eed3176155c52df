"""Authors in a real browser: write with the keyboard, review, revise, approve; two tabs."""

import pytest

from annotation.models import Reference
from annotation.services import authoring

from ..authoring_data import unauthored_dataset
from ..conftest import PASSWORD
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def acu_texts(page, sentence_index):
    return (
        page.locator(".sentence-block")
        .nth(sentence_index)
        .locator("li.acu .acu-text")
        .evaluate_all("els => els.map(e => e.value)")
    )


def wait_saved(page):
    page.wait_for_selector("#save-state.saved")


def as_user(browser, base_url, user):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    login(page, base_url, user.username, PASSWORD)
    page.wait_for_selector("h1")
    return page


def test_write_review_revise_approve(live_server, browser, shoot, author, lead, make_user, tmp_path):
    reviewer = make_user("bea-author", "author")
    dataset = unauthored_dataset(tmp_path, documents=2)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1, reviewer_id=reviewer.pk)
    reference = Reference.objects.get(writer=author)

    # The writer: keyboard only.
    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/")
    page.keyboard.press("n")  # the queue's next reference
    page.wait_for_selector("#save-state.saved")
    page.keyboard.press("n")  # the page's new ACU box
    page.wait_for_selector("#editor .acu-new:focus")
    page.keyboard.type("Anuradha Koirala has been sleeping outdoors.")
    page.keyboard.press("Enter")
    page.keyboard.type("Young women and girls have been sleeping outdoors.")
    page.keyboard.press("Enter")
    page.keyboard.press("ArrowDown")  # to the next sentence's new-ACU field
    page.keyboard.type("Pushpa Basnet was forced to evacuate her residence.")
    page.keyboard.press("Enter")
    wait_saved(page)
    # Reorder: go up to the second ACU of sentence 1 and move it above the first.
    for _ in range(3):
        page.keyboard.press("ArrowUp")
    page.keyboard.press("Alt+ArrowUp")
    wait_saved(page)
    shoot(page, "authoring-write")

    page.reload()
    page.wait_for_selector("#editor li.acu")
    assert acu_texts(page, 0) == [
        "Young women and girls have been sleeping outdoors.",
        "Anuradha Koirala has been sleeping outdoors.",
    ]
    assert acu_texts(page, 1) == ["Pushpa Basnet was forced to evacuate her residence."]
    asked = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))  # sentence 3 has no ACU: Done asks first
    page.focus("#submit-form button")
    page.keyboard.press("Enter")
    page.wait_for_selector(".messages li:has-text('Sent to review (bea-author)')")
    assert asked == ["Sentence 3 has no ACU. Send to review anyway?"]
    page.context.close()

    # The reviewer comments on one ACU and sends it back.
    page = as_user(browser, live_server.url, reviewer)
    page.goto(f"{live_server.url}/authoring/")
    page.click(f"a[href='/authoring/references/{reference.pk}/review/']")
    target = page.locator("li.acu-review", has_text="Anuradha Koirala has been sleeping outdoors.")
    target.locator("summary").click()
    target.locator("textarea").fill("Say where she sleeps: in Kathmandu.")
    target.locator("button:text('Save comment')").click()
    page.wait_for_selector(".comment:has-text('Say where she sleeps')")
    shoot(page, "authoring-review")
    page.click("button:text('Send back with comments')")
    page.wait_for_selector(".messages li:has-text('Sent back')")
    page.context.close()

    # The writer sees the comment next to the ACU, fixes it and resubmits.
    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/")
    page.keyboard.press("n")
    item = page.locator("li.acu", has_text="Say where she sleeps")
    item.wait_for()
    field = item.locator(".acu-text")
    field.focus()
    page.keyboard.press("End")
    page.keyboard.press("Backspace")
    page.keyboard.type(" in Kathmandu.")
    wait_saved(page)
    shoot(page, "authoring-revise")
    page.on("dialog", lambda d: d.accept())  # sentence 3 still has no ACU
    page.click("#submit-form button")
    page.wait_for_selector(".messages li:has-text('Sent to review')")
    page.context.close()

    # The reviewer approves; the reference can now go into crowd tasks.
    page = as_user(browser, live_server.url, reviewer)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/review/")
    page.click("button:text('Approve')")
    page.wait_for_selector(".messages li:has-text('Approved')")
    page.context.close()
    reference.refresh_from_db()
    assert reference.status == Reference.Status.APPROVED
    assert list(authoring.usable_for_crowd(dataset)) == [reference]
    assert "Anuradha Koirala has been sleeping outdoors in Kathmandu." in reference.acus.values_list("text", flat=True)

    # The lead sees every state and the per-author figures.
    page = as_user(browser, live_server.url, lead)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/authoring/")
    row = page.locator("table.data >> nth=0 >> tbody tr").first.inner_text()
    # assigned, to do, writing, in review, changes requested, approved
    assert row.split("\t")[:7] == ["arthur-author", "1", "0", "0", "0", "0", "1"]
    shoot(page, "authoring-lead")
    page.context.close()


def test_two_tabs_conflict_is_reported_not_lost(live_server, browser, shoot, author, tmp_path):
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    reference = Reference.objects.get(writer=author)
    first = as_user(browser, live_server.url, author)
    url = f"{live_server.url}/authoring/references/{reference.pk}/"
    first.goto(url)
    second = first.context.new_page()
    second.goto(url)

    first.fill(".acu-new >> nth=0", "Written in the first tab.")
    first.press(".acu-new >> nth=0", "Enter")
    wait_saved(first)

    second.fill(".acu-new >> nth=0", "Written in the second tab.")
    second.press(".acu-new >> nth=0", "Enter")
    alert = second.wait_for_selector("#editor-alert:not([hidden])")
    assert "changed in another tab" in alert.inner_text()
    assert second.inner_text("#save-state") == "Not saved: conflict"
    assert acu_texts(second, 0) == ["Written in the second tab."]  # still on screen to copy
    shoot(second, "authoring-conflict")
    assert list(reference.acus.values_list("text", flat=True)) == ["Written in the first tab."]
    first.context.close()
