"""The ACU editor loses none of the author's work (walkthrough of /authoring/references/<id>/):
Done after a refused save, a refused ACU named and marked (no reload that drops the page's changes),
a space typed after a draft's text, Undo after a delete, and a sentence without an ACU asked about."""

import pytest

from annotation.drafting import service as drafting
from annotation.models import ACU, DraftACU, Reference, ReferenceSentence
from annotation.services import authoring

from ..authoring_data import unauthored_dataset
from .test_authoring_browser import acu_texts, as_user, wait_saved

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = "x" * 1004  # over the 1,000 characters an ACU may have


def editor(live_server, browser, author, tmp_path, width=None):
    dataset = unauthored_dataset(tmp_path, documents=1)  # one reference of 3 sentences
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    reference = Reference.objects.get(writer=author)
    page = as_user(browser, live_server.url, author)
    if width:
        page.set_viewport_size({"width": width, "height": 844})
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    page.wait_for_selector("#save-state.saved")
    return page, reference


def add(page, sentence: int, text: str, status: int = 200):
    """Types an ACU into a sentence's new-ACU box and waits for the save it starts (its answer's status)."""
    box = page.locator(".sentence-block").nth(sentence).locator(".acu-new")
    box.fill(text)
    with page.expect_response(lambda r: r.url.endswith("/save") and r.request.method == "POST") as saved:
        box.press("Enter")
    assert saved.value.status == status, saved.value.text()


def stored(reference):
    return list(
        ACU.objects.filter(reference=reference)
        .order_by("sentence__position", "position")
        .values_list("sentence__position", "text")
    )


def test_done_after_a_refused_save_stays_and_sends_nothing_old(live_server, browser, shoot, author, tmp_path):
    """Walk: valid ACUs, one of 1,004 characters ("Not saved"), another valid one, then Done: only
    the browser's leave-page dialog, and accepting it sent the server's older version to review (the
    last ACU lost). Now Done saves first; refused, it stays with the reason and the ACU at fault."""
    page, reference = editor(live_server, browser, author, tmp_path)
    asked = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))
    add(page, 0, "Anuradha Koirala has been sleeping outdoors.")
    add(page, 1, LONG, status=400)
    add(page, 2, "Young women have been sleeping outdoors.", status=400)
    assert page.inner_text("#save-state").startswith("Not saved")

    page.click("#submit-form button")
    page.wait_for_selector("#save-state:has-text('Not sent'), .messages li")
    reference.refresh_from_db()
    assert reference.status == Reference.Status.WRITING, "sent to review with the older version"
    assert asked == []  # no leave-page dialog, no question: the page stays
    assert page.inner_text("#save-state") == "Not sent to review: a change is not saved"
    assert "ACU 1 of sentence 2 is 1,004 characters long" in page.inner_text("#editor-alert")
    focused = page.evaluate("document.activeElement.getAttribute('aria-label')")
    assert focused == "ACU 1 of sentence 2"
    assert page.locator("li.acu.refused .acu-text").get_attribute("aria-invalid") == "true"
    shoot(page, "authoring-done-refused")
    assert stored(reference) == [(0, "Anuradha Koirala has been sleeping outdoors.")]

    # Fixed, Done saves everything on the page, then sends it.
    page.locator("li.acu.refused .acu-text").fill("Pushpa Basnet had to leave her home.")
    page.click("#submit-form button")
    page.wait_for_selector(".messages li:has-text('Sent to review')")
    reference.refresh_from_db()
    assert reference.status == Reference.Status.IN_REVIEW
    assert stored(reference) == [
        (0, "Anuradha Koirala has been sleeping outdoors."),
        (1, "Pushpa Basnet had to leave her home."),
        (2, "Young women have been sleeping outdoors."),
    ]
    assert asked == []


def test_a_refused_acu_is_named_and_marked_and_no_reload_drops_the_work(live_server, browser, shoot, author, tmp_path):
    """Walk: after the refused long ACU every later save was refused with the same unplaced message,
    and the one button offered, "Reload the current version", dropped every unsaved change."""
    page, reference = editor(live_server, browser, author, tmp_path)
    add(page, 0, "First fact.")
    add(page, 1, "Second sentence's fact.")
    add(page, 1, LONG, status=400)
    alert = page.locator("#editor-alert")
    assert alert.inner_text().startswith("ACU 2 of sentence 2 is 1,004 characters long; at most 1,000 are allowed.")
    assert alert.locator("button").count() == 0  # no "Reload the current version"
    marked = page.locator("li.acu.refused")
    assert marked.count() == 1 and marked.locator(".acu-text").input_value() == LONG
    assert page.inner_text("#save-state") == "Not saved: fix the marked ACU"
    add(page, 0, "Written after the refusal.", status=400)  # kept on the page, still refused
    shoot(page, "authoring-refused-marked")

    marked.locator(".acu-text").fill("A short fact instead.")
    wait_saved(page)
    assert alert.is_hidden() and page.locator("li.acu.refused, [aria-invalid]").count() == 0
    assert stored(reference) == [
        (0, "First fact."),
        (0, "Written after the refusal."),
        (1, "Second sentence's fact."),
        (1, "A short fact instead."),
    ]


def test_typing_after_a_drafts_text_keeps_the_first_space(live_server, browser, author, tmp_path):
    """Walk: a draft focused, End, " abc" typed: saved as "Most were harmless on the money.abc"."""
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    reference = Reference.objects.get(writer=author)
    sentence = ReferenceSentence.objects.get(reference=reference, position=0)
    sentence.text = "Most were harmless on the money , but one caused boils and spots ."
    sentence.save(update_fields=["text"])
    drafting.suggest(reference_id=reference.pk, user=author, drafter="rules", sentence_id=sentence.pk)
    assert DraftACU.objects.filter(sentence=sentence, text="Most were harmless on the money.").exists()
    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    draft = page.locator("li.draft .draft-text").first
    assert draft.input_value() == "Most were harmless on the money."
    draft.focus()
    page.keyboard.press("End")
    page.keyboard.type(" abc")
    wait_saved(page)
    assert acu_texts(page, 0) == ["Most were harmless on the money. abc"]
    assert stored(reference) == [(0, "Most were harmless on the money. abc")]


def test_a_deleted_acu_comes_back_with_undo_or_ctrl_z(live_server, browser, shoot, author, tmp_path):
    """Walk: one click on × deleted an ACU at once and saved; Ctrl+Z did nothing; Backspace on an
    emptied field deleted it too. Now "Deleted “…” · Undo" (and Ctrl+Z) brings it back at its place."""
    page, reference = editor(live_server, browser, author, tmp_path)
    for text in ("Fact A.", "Fact B.", "Fact C."):
        add(page, 0, text)
    wait_saved(page)
    page.get_by_role("button", name="Delete ACU 2 of sentence 1", exact=True).click()
    wait_saved(page)
    assert stored(reference) == [(0, "Fact A."), (0, "Fact C.")]
    bar = page.locator("#undo-bar")
    assert bar.is_visible() and bar.inner_text().startswith("Deleted “Fact B.” · Undo")
    shoot(page, "authoring-undo-delete")
    bar.get_by_role("button", name="Undo").click()
    wait_saved(page)
    assert bar.is_hidden()
    assert acu_texts(page, 0) == ["Fact A.", "Fact B.", "Fact C."]
    assert stored(reference) == [(0, "Fact A."), (0, "Fact B."), (0, "Fact C.")]

    # Emptied, then Backspace deletes it; Ctrl+Z (nothing typed since) brings it back with its text.
    third = page.get_by_role("textbox", name="ACU 3 of sentence 1", exact=True)
    third.fill("")
    third.press("Backspace")
    wait_saved(page)
    assert stored(reference) == [(0, "Fact A."), (0, "Fact B.")]
    page.keyboard.press("Control+z")
    wait_saved(page)
    assert acu_texts(page, 0) == ["Fact A.", "Fact B.", "Fact C."]
    assert stored(reference) == [(0, "Fact A."), (0, "Fact B."), (0, "Fact C.")]


def test_the_delete_button_is_a_finger_high_on_a_phone(live_server, browser, shoot, author, tmp_path):
    page, _ = editor(live_server, browser, author, tmp_path, width=390)
    add(page, 0, "A fact on a phone.")
    box = page.locator("li.acu button.delete").bounding_box()
    assert box["height"] >= 40 and box["width"] >= 40, box
    page.locator("li.acu button.delete").click()
    bar = page.locator("#undo-bar").bounding_box()
    assert bar["x"] >= 0 and bar["x"] + bar["width"] <= 390 and bar["y"] + bar["height"] <= 844, bar  # in view
    # the toast where the phone shows it (a full-page shot places a fixed element elsewhere)
    page.screenshot(path=str(shoot(page, "authoring-undo-phone")), full_page=False)


def test_done_asks_when_a_sentence_has_no_acu(live_server, browser, shoot, author, tmp_path):
    """Walk: a sentence with no ACU (its hint "No ACU for this sentence yet…") went to review without
    a question. Done asks first; cancelled, nothing is sent; accepted, the server takes it."""
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    reference = Reference.objects.get(writer=author)
    drafting.suggest(reference_id=reference.pk, user=author, drafter="rules")
    last = ReferenceSentence.objects.get(reference=reference, position=2)
    drafts = DraftACU.objects.filter(sentence=last, status=DraftACU.Status.PENDING).count()
    assert drafts > 0
    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    page.wait_for_selector("#save-state.saved")
    add(page, 0, "Anuradha Koirala has been sleeping outdoors.")
    add(page, 1, "Pushpa Basnet had to leave her home.")
    wait_saved(page)

    asked = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.click("#submit-form button")
    plural = "s" if drafts > 1 else ""
    assert asked == [f"Sentence 3 has no ACU ({drafts} draft{plural} not decided). Send to review anyway?"]
    shoot(page, "authoring-done-asks")
    reference.refresh_from_db()
    assert reference.status == Reference.Status.WRITING
    assert page.locator("#submit-form").is_visible()

    page.once("dialog", lambda d: (asked.append(d.message), d.accept()))
    page.click("#submit-form button")
    page.wait_for_selector(".messages li:has-text('Sent to review')")
    assert len(asked) == 2
    reference.refresh_from_db()
    assert reference.status == Reference.Status.IN_REVIEW


def test_a_stale_tabs_refused_acus_come_back_after_the_reload_it_offers(live_server, browser, shoot, author, tmp_path):
    """Walk (a stale tab): the first tab saved an ACU, the second (opened before) added one and edited one; its save
    was refused as a conflict and "Reload the current version" dropped both: nothing had kept them."""
    page, reference = editor(live_server, browser, author, tmp_path)
    add(page, 0, "Saved before the second tab opened.")
    stale = page.context.new_page()
    stale.goto(page.url)
    stale.wait_for_selector("#save-state.saved")
    add(page, 1, "Saved by the first tab.")

    stale.locator(".sentence-block").nth(0).locator(".acu-text").fill("Edited in the stale tab.")
    add(stale, 2, "Added in the stale tab.", status=409)
    alert = stale.locator("#editor-alert")
    assert "changed in another tab" in alert.inner_text()
    assert (
        "each in its sentence's new-ACU box (Enter adds it): sentence 1: “Edited in the stale tab.”"
        in alert.inner_text()
    )
    assert "sentence 3: “Added in the stale tab.”" in alert.inner_text()
    shoot(stale, "authoring-conflict-kept")
    boxes = stale.locator(".acu-new").evaluate_all("els => els.map(e => e.value)")
    assert boxes == ["", "", ""]  # kept in the browser, not shown twice on the stale page
    asked = []
    stale.on("dialog", lambda d: (asked.append(d.message), d.accept()))
    with stale.expect_navigation():
        alert.get_by_role("button", name="Reload the current version").click()
    stale.wait_for_selector("#save-state")
    boxes = stale.locator(".acu-new").evaluate_all("els => els.map(e => e.value)")
    assert boxes == ["Edited in the stale tab.", "", "Added in the stale tab."]
    assert stored(reference) == [(0, "Saved before the second tab opened."), (1, "Saved by the first tab.")]
