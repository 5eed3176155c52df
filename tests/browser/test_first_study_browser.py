"""Issue 27 in a real browser: back after submitting, the fair handout's notice, the work page's
bonuses and the People page, at 1280 px and 390 px."""

import pytest

from hits.services import batches, handout, review
from hits.services.submission import submit_assignment
from hits.views.worker import inhouse_worker

from ..conftest import PASSWORD
from ..crowd_data import all_answers, demo_dataset, published_batch
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"wide": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


def answer_all_and_submit(page):
    page.wait_for_selector(".acu-row.current")
    for _ in range(page.locator(".acu-row").count()):
        page.keyboard.press("y")
    page.keyboard.press("Enter")
    page.wait_for_selector("#task-notice:has-text('your answers are saved')")


@pytest.mark.parametrize("size", ["wide", "phone"])
def test_back_after_submitting_says_already_submitted_and_the_work_page_is_current(
    live_server, browser, shoot, worker, size
):
    published_batch()
    context = browser.new_context(viewport=SIZES[size])
    page = context.new_page()
    login(page, live_server.url, worker.username, PASSWORD)
    page.click("#start-next")
    answer_all_and_submit(page)
    assert page.locator("#key-hint").is_hidden()  # the keys answer nothing once stored
    page.click("#after-submit button")  # the next task
    page.wait_for_selector(".acu-row.current")
    page.go_back()
    page.wait_for_selector("#already-submitted:visible")
    assert page.inner_text("#progress") == "Submitted"
    assert page.locator("#task-form button:enabled").count() == 0
    assert page.locator("#key-hint").count() == 0
    shoot(page, f"i27-back-after-submit-{size}")

    page.goto(f"{live_server.url}/work/")
    assert page.inner_text("#start-next") == "Continue my task"  # the second task is open
    page.click("#start-next")
    answer_all_and_submit(page)
    page.go_back()
    page.wait_for_selector("h1:text('My work')")
    assert page.inner_text("#start-next") == "Start next task"  # not the stale "Continue my task"
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= SIZES[size]["width"], f"the work page is {width} px wide"
    shoot(page, f"i27-work-after-back-{size}")
    context.close()


@pytest.mark.parametrize("size", ["wide", "phone"])
def test_lead_pages_of_the_first_study(live_server, browser, shoot, worker, lead, size):
    dataset = demo_dataset()
    old = published_batch(dataset, name="Demo round")
    new = published_batch(dataset, name="New study")
    batches.set_priority(new, 1)
    assignment = handout.next_assignment(inhouse_worker(worker))
    assert assignment.hit.batch_id == new.pk  # the higher priority first
    submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment))
    review.send_bonus(assignment_id=assignment.pk, amount="0.40", reason="Careful answers", token="b1", by=lead)

    context = browser.new_context(viewport=SIZES[size])
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/batches/{old.pk}/")
    notice = page.inner_text("#handout-share")
    assert notice.startswith("Another batch is taking the workers: New study (priority 1)")
    width = page.evaluate("document.documentElement.scrollWidth")
    wide = page.evaluate(
        """Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > 392 && !e.closest('.table-scroll')).slice(0, 8).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""
    )
    assert width <= SIZES[size]["width"], f"the batch page is {width} px wide: {wide}"
    shoot(page, f"i27-batch-share-{size}")

    page.goto(f"{live_server.url}/people/")
    page.fill("#id_username", "new worker!")
    page.select_option("#id_role", "worker")
    page.click("#add-person button[type=submit]")
    page.wait_for_selector(".messages li:has-text('A username is')")
    assert page.input_value("#id_username") == "new worker!"
    assert page.input_value("#id_role") == "worker"
    page.on("dialog", lambda dialog: dialog.accept())
    page.click(f"tr[data-person='{worker.username}'] button:text('Deactivate')")
    page.wait_for_selector(f"#people-inactive tr[data-person='{worker.username}']")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= SIZES[size]["width"], f"the People page is {width} px wide"
    shoot(page, f"i27-people-{size}")
    page.click(f"#people-inactive tr[data-person='{worker.username}'] button:text('Reactivate')")
    page.wait_for_selector(".messages li:has-text('can sign in again')")
    context.close()

    context = browser.new_context(viewport=SIZES[size])
    page = context.new_page()
    login(page, live_server.url, worker.username, PASSWORD)
    page.wait_for_selector("#bonuses")
    assert "Careful answers" in page.inner_text("#bonuses")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= SIZES[size]["width"], f"the work page is {width} px wide"
    shoot(page, f"i27-work-bonus-{size}")
    context.close()


def test_the_task_page_on_a_phone_opens_at_the_summary_and_keeps_it_in_view(live_server, browser, worker):
    from hits.services.submission import task_token

    from .conftest import ARTIFACTS

    batch = published_batch()
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    context = browser.new_context(viewport=SIZES["phone"], is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(f"{live_server.url}/task/{task_token(assignment)}/")
    page.wait_for_selector(".acu-row.current")
    assert page.evaluate("window.scrollY") == 0  # not scrolled to fact 1 past the summary
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "i27-task-phone-open.png"))
    rows = page.locator(".acu-row").count()
    for _ in range(rows - 1):
        page.keyboard.press("y")
    assert page.evaluate("window.scrollY") > 0
    box = page.evaluate(
        "(() => { const r = document.querySelector('.summary-card').getBoundingClientRect(); return [r.top, r.bottom]; })()"
    )
    assert box[0] >= 0 and box[1] <= SIZES["phone"]["height"] * 0.5  # the summary stays at the top
    current = page.evaluate("document.querySelector('.acu-row.current').getBoundingClientRect().top")
    assert current >= box[1]  # the current fact is below it, not hidden under it
    page.screenshot(path=str(ARTIFACTS / "i27-task-phone-scrolled.png"))
    context.close()


def test_the_review_page_does_not_number_a_sentence_without_acus(live_server, browser, lead, tmp_path):
    from annotation.models import Reference

    from ..authoring_data import unauthored_dataset

    dataset = unauthored_dataset(tmp_path, documents=1)
    reference = Reference.objects.get(document__dataset=dataset)
    context = browser.new_context(viewport=SIZES["wide"])
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/review/")
    # Said once, by the sentence's hint (not again by the list), and nothing numbered under it.
    assert page.locator(".sentence-block").first.locator(".sentence-hints li").all_inner_texts() == [
        "No ACU for this sentence yet."
    ]
    assert page.locator("ol.acu-list > li").count() == 0
    assert page.locator("ol.acu-list").first.inner_text() == ""
    context.close()


@pytest.mark.parametrize("size", ["wide", "phone"])
def test_metric_scores_on_the_metrics_page(live_server, browser, shoot, lead, size, tmp_path, eager_celery):
    dataset = demo_dataset()
    document = dataset.documents.order_by("position").first().external_id
    system = dataset.systems.order_by("name").first().name
    context = browser.new_context(viewport=SIZES[size])
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/metrics/")
    page.click("#metric-sources summary")
    assert f"{document},{system},my_metric,0.42" in page.inner_text("#metric-sources")
    shoot(page, f"i27-metrics-empty-{size}")
    page.click("#rouge-form button")
    page.wait_for_selector(".messages li:has-text('ROUGE computed for 40 summaries')")
    scores = tmp_path / "bleu.csv"
    scores.write_text("example_id,system,metric,score\n" + f"{document},{system},bleu,0.3\n")
    page.set_input_files("#id_metrics_file", str(scores))
    page.click("#metrics-upload button")
    page.wait_for_selector(".messages li:has-text('Imported 1 score of bleu')")
    assert "rouge1_recall" in page.inner_text("#metric-sources")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= SIZES[size]["width"], f"the metrics page is {width} px wide"
    shoot(page, f"i27-metrics-{size}")
    context.close()
