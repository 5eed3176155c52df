"""Issue 47, item 14 and the dead ends, in Chromium at 1280 and 390 px: a worker's recent tasks tell their
tasks apart and say the table scrolls on a phone; no key hints on a touch screen; the hint for two facts
joined by "and"; the People page's role change and add form; a draft batch's task preview.
axe-core scans every page (conftest.py)."""

import pytest

from hits.services import handout
from hits.services.submission import submit_assignment, task_token
from hits.views.worker import inhouse_worker

from ..conftest import PASSWORD
from ..crowd_data import all_answers, batch_of, demo_dataset, published_batch
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {
    1280: {"viewport": {"width": 1280, "height": 860}},
    390: {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}


@pytest.mark.parametrize("width", [1280, 390])
def test_worker_pages(live_server, browser, shoot, worker, width):
    batch = published_batch()
    me = inhouse_worker(worker)
    for _ in range(2):
        done = handout.next_assignment(me, batch)
        submit_assignment(assignment_id=done.pk, worker_id=me.pk, answers=all_answers(done))
    current = handout.next_assignment(me, batch)
    context = browser.new_context(**SIZES[width])
    page = context.new_page()
    login(page, live_server.url, worker.username, PASSWORD)
    page.goto(f"{live_server.url}/work/")
    words = page.locator("#recent-tasks .task-words").all_inner_texts()
    assert len(words) == 3 and len(set(words)) == 3  # three tasks told apart, not one document id three times
    assert page.locator(".scroll-cue").is_visible() == (width == 390)
    shoot(page, f"i47-work-{width}")

    page.goto(f"{live_server.url}/task/{task_token(current)}/")
    page.wait_for_selector(".acu-row")
    page.locator(".instructions summary").first.click()
    assert page.locator("#two-facts-hint").is_visible()
    hints = page.locator(".choice kbd").first
    assert hints.is_visible() == (width == 1280)  # no "1"/"2" keys on a touch screen
    assert page.locator(".key-hint").is_visible() == (width == 1280)
    shoot(page, f"i47-task-{width}")
    context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_lead_pages(live_server, browser, shoot, lead, author, width):
    batch = batch_of(demo_dataset(), assignments=3)
    context = browser.new_context(**SIZES[width])
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{live_server.url}/people/")
    box = page.locator("#id_password").bounding_box()
    placeholder_width = page.evaluate(
        "() => { const i = document.querySelector('#id_password'); const c = document.createElement('canvas').getContext('2d');"
        " c.font = getComputedStyle(i).font; return c.measureText(i.placeholder).width; }"
    )
    assert placeholder_width < box["width"] - 10, "the password placeholder is cut"
    role_label = page.locator("label[for=id_role]").bounding_box()
    role_field = page.locator("#id_role").bounding_box()
    assert role_field["y"] > role_label["y"] and abs(role_field["x"] - role_label["x"]) < 4  # label above its own field
    row = page.locator(f"tr[data-person='{author.username}']")
    row.locator("select[name=role]").select_option("worker")
    row.locator("button:text('Change')").click()
    page.wait_for_selector(".messages li:has-text('is now worker')")
    assert author.groups.filter(name="worker").exists() and not author.groups.filter(name="author").exists()
    shoot(page, f"i47-people-{width}")

    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    page.click("#pilot-preview")
    page.wait_for_selector(".acu-row")
    assert "Answers cannot be submitted" in page.inner_text("main")
    assert page.locator("#submit-task").count() == 0
    width_now = page.evaluate("document.documentElement.scrollWidth")
    assert width_now <= width, f"the preview scrolls sideways: {width_now}px"
    shoot(page, f"i47-preview-{width}")
    context.close()
