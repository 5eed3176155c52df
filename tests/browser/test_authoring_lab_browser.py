"""The authoring flow in Chromium as a lab's authors meet it: a session that ends mid-edit, an ACU
emptied and written again, Back after *Done*, a reviewer's comment typed but not saved, and the
queue and the lead's overview on a phone (390 px). axe-core scans every page (conftest.py)."""

import pytest

from annotation.models import Reference, ReviewComment
from annotation.services import authoring

from ..authoring_data import unauthored_dataset
from ..conftest import PASSWORD
from .conftest import login
from .test_authoring_browser import acu_texts, as_user, wait_saved

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def mine(tmp_path, author, documents=1):
    dataset = unauthored_dataset(tmp_path, documents=documents)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    return dataset, Reference.objects.get(writer=author)


def test_a_session_ending_mid_edit_loses_nothing(live_server, browser, shoot, author, tmp_path):
    """The page saved against the sign-in page in a loop, said "Unsaved changes…", and after signing
    in again its stale CSRF token was refused: the change was dropped on reload, unwarned."""
    _, reference = mine(tmp_path, author)
    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    page.fill(".acu-new >> nth=0", "Koirala said “the girls are vulnerable” — é 😀.")
    page.press(".acu-new >> nth=0", "Enter")
    wait_saved(page)

    page.context.clear_cookies(name="sessionid")  # the session ends
    page.fill(".acu-new >> nth=0", "Written after the session ended.")
    page.press(".acu-new >> nth=0", "Enter")
    alert = page.wait_for_selector("#editor-alert:not([hidden])")
    assert "signed out" in alert.inner_text() and "kept on this page" in alert.inner_text()
    assert page.inner_text("#save-state") == "Not saved: signed out"
    assert page.locator("#editor-alert a").get_attribute("target") == "_blank"
    shoot(page, "authoring-signed-out")

    again = page.context.new_page()  # signing in again in another tab renews the CSRF token
    login(again, live_server.url, author.username, PASSWORD)
    again.wait_for_selector("h1")
    again.close()
    page.bring_to_front()
    page.evaluate("window.dispatchEvent(new Event('focus'))")  # back to the editor's tab
    wait_saved(page)
    assert page.locator("#editor-alert").is_hidden()
    assert list(reference.acus.order_by("position").values_list("text", flat=True)) == [
        "Koirala said “the girls are vulnerable” — é 😀.",
        "Written after the session ended.",
    ]
    page.on("dialog", lambda d: d.accept())  # a sentence without an ACU: Done asks first
    page.click("#submit-form button")  # Done works with the renewed token
    page.wait_for_selector(".messages li:has-text('Sent to review')")
    page.context.close()


def test_an_acu_emptied_then_written_again_is_saved(live_server, browser, author, tmp_path):
    """Clearing an ACU to rewrite it, a pause, then typing: "An ACU sent does not belong to this
    reference; reload the page." and the rewrite could not be saved."""
    _, reference = mine(tmp_path, author)
    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    page.fill(".acu-new >> nth=0", "Danilo will join Real Madrid.")
    page.press(".acu-new >> nth=0", "Enter")
    wait_saved(page)
    page.fill("li.acu .acu-text >> nth=0", "")  # cleared: deleted on the server at the next save
    wait_saved(page)
    assert not reference.acus.exists()
    page.type("li.acu .acu-text >> nth=0", "Koirala has been sleeping outdoors.")
    wait_saved(page)
    assert page.locator("#editor-alert").is_hidden()
    assert acu_texts(page, 0) == ["Koirala has been sleeping outdoors."]
    assert list(reference.acus.values_list("text", flat=True)) == ["Koirala has been sleeping outdoors."]
    page.context.close()


def test_back_after_done_shows_the_reference_in_review(live_server, browser, author, make_user, tmp_path):
    """Back after *Done* showed the editor as it was: "Writing", editable, with *Done* again."""
    _, reference = mine(tmp_path, author)
    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    page.fill(".acu-new >> nth=0", "Koirala has been sleeping outdoors.")
    page.press(".acu-new >> nth=0", "Enter")
    wait_saved(page)
    page.on("dialog", lambda d: d.accept())  # a sentence without an ACU: Done asks first
    page.click("#submit-form button")
    page.wait_for_selector(".messages li:has-text('Sent to review')")
    page.go_back()
    page.wait_for_selector("#ref-status")
    assert page.inner_text("#ref-status") == "In review"
    assert page.locator("#submit-form").count() == 0
    assert page.get_attribute("#editor", "data-editable") == "false"
    page.context.close()


def test_a_decision_waits_for_a_typed_comment(live_server, browser, shoot, author, make_user, tmp_path):
    """The reviewer typed a comment and pressed *Send back with comments*: "Add at least one comment"
    and the typed text was gone (or, with an earlier comment saved, sent back without it)."""
    reviewer = make_user("bea-author", "author")
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], reviewer_id=reviewer.pk)
    reference = Reference.objects.get(writer=author)
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": "Koirala sleeps outdoors."}]
    authoring.save_reference(reference_id=reference.pk, user=author, base_version=0, sentences=sentences)
    authoring.submit_for_review(reference_id=reference.pk, user=author)

    page = as_user(browser, live_server.url, reviewer)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/review/")
    typed = "Say where she sleeps — “outdoors” is vague."
    page.fill("#c-general", typed)
    page.click("button:text('Send back with comments')")
    alert = page.wait_for_selector("#review-alert:not([hidden])")
    assert "not saved yet" in alert.inner_text()
    assert page.input_value("#c-general") == typed
    shoot(page, "authoring-review-unsaved-comment")
    page.click("#c-general + button")  # Save comment, then decide
    page.wait_for_selector(".messages li:has-text('Comment saved')")
    page.click("button:text('Send back with comments')")
    page.wait_for_selector(".messages li:has-text('Sent back')")
    reference.refresh_from_db()
    assert reference.status == Reference.Status.CHANGES
    assert ReviewComment.objects.get(reference=reference).text == typed
    page.context.close()


def test_queue_and_overview_fit_a_phone(live_server, browser, shoot, author, lead, make_user, tmp_path):
    """At 390 px the author's queue and the lead's authoring overview scrolled the whole page sideways."""
    dataset, _ = mine(tmp_path, author, documents=3)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    for user, path, name in [
        (author, "/authoring/", "authoring-queue-390"),
        (lead, f"/datasets/{dataset.pk}/authoring/", "authoring-overview-390"),
    ]:
        context = browser.new_context(viewport={"width": 390, "height": 844})
        page = context.new_page()
        login(page, live_server.url, user.username, PASSWORD)
        page.wait_for_selector("h1")
        page.goto(f"{live_server.url}{path}")
        page.wait_for_selector("h1")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
        shoot(page, name)
        context.close()
