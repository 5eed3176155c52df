"""An author asks for drafts, accepts two by keyboard, edits one, dismisses one; the history shows the drafter."""

import pytest

from annotation.drafting import service as drafting
from annotation.models import ACU, ACUChange, DraftACU, Reference, ReferenceSentence
from annotation.services import authoring

from ..authoring_data import unauthored_dataset
from .test_authoring_browser import acu_texts, as_user, wait_saved

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_author_drafts_accepts_edits_and_dismisses_by_keyboard(live_server, browser, shoot, author, tmp_path):
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    reference = Reference.objects.get(writer=author)
    # two subjects and two adjuncts: four drafts, each adjunct with its subject's whole clause
    ReferenceSentence.objects.filter(reference=reference, position=0).update(
        text="Anuradha Koirala and 425 young women and girls have been sleeping outdoors in Kathmandu "
        "because of aftershocks ."
    )

    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    page.wait_for_selector("#save-state.saved")
    page.select_option("#drafter", "rules")  # the default, chosen explicitly: this test reads the rules' order
    page.keyboard.press("Alt+Shift+G")  # suggest for the whole reference
    page.wait_for_selector("li.draft .draft-text:focus")
    assert page.locator(".sentence-block").nth(0).locator("li.draft").count() == 4
    assert page.locator(".sentence-block").nth(1).locator("li.draft").count() == 2
    assert page.locator("li.draft .draft-badge").first.inner_text() == "draft · rules"
    shoot(page, "drafts-suggested")

    page.keyboard.press("Enter")  # accept the first draft of sentence 1
    page.keyboard.press("Enter")  # and the second
    assert acu_texts(page, 0) == [
        "Anuradha Koirala has been sleeping outdoors in Kathmandu.",
        "Anuradha Koirala has been sleeping outdoors because of aftershocks.",
    ]
    # focus is on the third draft: editing it accepts it
    page.keyboard.press("End")
    page.keyboard.press("Backspace")
    page.keyboard.type(", Nepal.")
    page.keyboard.press("ArrowDown")  # the fourth draft
    page.keyboard.press("Escape")  # dismiss it
    wait_saved(page)
    edited = "425 young women and girls have been sleeping outdoors in Kathmandu, Nepal."
    assert acu_texts(page, 0)[2] == edited
    assert page.locator(".sentence-block").nth(0).locator("li.draft").count() == 0

    page.click("#history summary")
    history = page.locator("#history-list")
    history.locator("li", has_text="Dismissed draft (rules)").wait_for()
    assert history.locator("li", has_text="Accepted draft (rules)").count() == 3
    assert f"“425 young women and girls have been sleeping outdoors in Kathmandu.” → “{edited}”" in history.inner_text()
    assert (
        "Dismissed draft (rules): “425 young women and girls have been sleeping outdoors because of aftershocks.”"
        in history.inner_text()
    )
    assert page.locator("li.acu .from-draft").first.inner_text() == "from rules"
    shoot(page, "drafts-accepted")

    # Stored: three ACUs from the rules drafter, one dismissal, in the history with the drafter.
    assert list(ACU.objects.filter(reference=reference).values_list("drafter", flat=True)) == ["rules"] * 3
    assert ACUChange.objects.filter(reference=reference, action="accept", drafter="rules").count() == 3
    assert ACUChange.objects.get(reference=reference, action="dismiss").drafter == "rules"
    assert DraftACU.objects.filter(reference=reference, status="dismissed").count() == 1
    page.reload()
    page.wait_for_selector("#editor li.acu")
    assert acu_texts(page, 0)[2] == edited
    assert page.locator(".sentence-block").nth(1).locator("li.draft").count() == 2  # still waiting
    page.context.close()


def test_lead_predrafts_and_applies_a_budget(live_server, browser, shoot, lead, author, tmp_path, eager_celery):
    from ..crowd_data import demo_dataset

    demo_dataset()  # training data for the regressor
    dataset = unauthored_dataset(tmp_path, documents=3)
    page = as_user(browser, live_server.url, lead)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/authoring/")
    page.click("text=Pre-draft the dataset")
    page.wait_for_selector("#job-predraft [data-field=status_display]:text('Done')")
    assert page.locator("#job-predraft [data-field=done]").inner_text() == "3"
    page.fill("#id_percent", "40")
    page.select_option("#id_budget_judge", "lexical")
    page.locator("#budget-form input[name=authors]").first.check()
    page.click("text=Apply the budget")
    page.wait_for_selector(".messages li:has-text('Budget 40% started')")
    page.wait_for_selector("#budget-result")
    assert "trained on" in page.locator("#budget-result").inner_text()
    shoot(page, "drafts-lead-budget")
    reference = Reference.objects.filter(document__dataset=dataset, writer=author).first()
    assert reference is not None

    writer = as_user(browser, live_server.url, author)
    writer.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    writer.wait_for_selector("#editor .sentence-block")
    assert writer.locator(".badge.budget-human").count() >= 1
    machine = writer.locator(".sentence-block:has(.badge.budget-machine)")
    if machine.count():
        assert (
            machine.first.locator("li.acu.machine .machine-badge").first.inner_text() == "machine · rules"
        )  # the default drafter pre-drafts
        assert machine.first.locator("li.draft").count() == 0  # the pre-drafts gave way to the machine units
    assert writer.locator(".sentence-block:has(.badge.budget-human) li.draft").count() >= 1
    shoot(writer, "drafts-budget-editor")
    writer.context.close()
    page.context.close()


def writing_page(live_server, browser, author, tmp_path):
    """The author's page of the one reference assigned to them, loaded and saved, and the reference."""
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    reference = Reference.objects.get(writer=author)
    page = as_user(browser, live_server.url, author)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    page.wait_for_selector("#save-state.saved")
    return page, reference


LEAVING_WARNS = "() => { const e = new Event('beforeunload', {cancelable: true}); window.dispatchEvent(e); return e.defaultPrevented; }"


def test_a_draft_accepted_while_a_save_is_refused_is_not_lost(live_server, browser, author, tmp_path):
    """A refused save (an ACU over 1,000 characters) keeps the accepted draft on the page, and
    leaving the page asks first while the refusal stands; once the text is fixed both are stored."""
    page, reference = writing_page(live_server, browser, author, tmp_path)
    page.keyboard.press("Alt+Shift+G")
    page.wait_for_selector("li.draft .draft-text:focus")
    first = page.locator(".sentence-block").nth(0)
    draft = first.locator("li.draft .draft-text").first.input_value()
    first.locator(".acu-new").fill("y" * 1200)
    first.locator(".acu-new").press("Enter")
    page.wait_for_selector("#save-state.error")
    first.locator("li.draft .accept").first.click()
    page.wait_for_selector("#save-state.error")
    assert "at most 1,000 are allowed" in page.inner_text("#editor-alert")
    assert acu_texts(page, 0) == ["y" * 1200, draft]
    assert not ACU.objects.filter(reference=reference).exists()
    assert page.evaluate(LEAVING_WARNS)  # the refused changes are only on this page

    first.locator("li.acu .acu-text").nth(0).fill("A short ACU.")
    wait_saved(page)
    assert not page.evaluate(LEAVING_WARNS)
    assert list(ACU.objects.filter(reference=reference).order_by("position").values_list("text", "drafter")) == [
        ("A short ACU.", ""),
        (draft, "rules"),
    ]
    assert ACUChange.objects.filter(reference=reference, action="accept", drafter="rules").count() == 1
    page.context.close()


def test_the_read_only_page_keeps_its_drafts_under_the_keys(live_server, browser, author, make_user, tmp_path):
    """Another author reads the reference: Enter or Escape on a draft accepts or dismisses nothing
    (the page is read only: no save is tried, nothing is refused)."""
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    reference = Reference.objects.get(writer=author)
    drafting.suggest(reference_id=reference.pk, user=author, drafter="rules")
    pending = DraftACU.objects.filter(reference=reference, status="pending").count()
    reader = make_user("bea-author", "author")
    page = as_user(browser, live_server.url, reader)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    page.wait_for_selector("#save-state:has-text('Read only')")
    drafts = page.locator(".sentence-block").nth(0).locator("li.draft")
    before = drafts.count()
    assert before > 1
    drafts.first.locator(".draft-text").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    # No wait: accepting or dismissing a draft takes it off the list and marks the page unsaved at
    # once (authoring.js, in the key's handler), so what the keys did is on the page when they return.
    assert drafts.count() == before and page.locator("li.acu").count() == 0
    assert page.inner_text("#save-state") == "Read only" and page.locator("#editor-alert").is_hidden()
    assert DraftACU.objects.filter(reference=reference, status="pending").count() == pending
    page.context.close()


def test_drafts_asked_for_after_a_refused_save_keep_the_refusal_on_screen(live_server, browser, author, tmp_path):
    """Walk 62: an ACU over 1,000 characters is refused ("Not saved" and the reason); asking for
    drafts then hid the reason and said "✓ 2 drafts from rules" in the save state, as if all were
    saved, while the long ACU was still only on the page. The refusal stays until it is fixed."""
    page, reference = writing_page(live_server, browser, author, tmp_path)
    first = page.locator(".sentence-block").nth(0)
    first.locator(".acu-new").fill("y" * 1200)
    first.locator(".acu-new").press("Enter")
    page.wait_for_selector("#save-state.error")
    page.locator(".sentence-block").nth(1).locator("button.suggest").click()
    page.wait_for_selector(".sentence-block >> nth=1 >> li.draft")
    state = page.locator("#save-state")
    assert "error" in state.get_attribute("class").split()
    assert state.inner_text().startswith("Not saved") and "from rules" in state.inner_text()
    assert page.locator("#editor-alert").is_visible()
    assert "at most 1,000 are allowed" in page.inner_text("#editor-alert")
    assert not ACU.objects.filter(reference=reference).exists()

    first.locator("li.acu .acu-text").nth(0).fill("A short ACU.")  # fixed: saved, and the page says so
    wait_saved(page)
    assert page.locator("#editor-alert").is_hidden()
    assert list(ACU.objects.filter(reference=reference).values_list("text", flat=True)) == ["A short ACU."]
    page.context.close()
