"""Issue 46's walk in Chromium: a lead creates a Ref-free and a Prior batch on the same examples on
the new batch page, three workers rate every summary with the keys 1-5 (at 1280 and 390 px), and
the Protocols page shows α, the matrices and the annotator case study of the round."""

import pytest

from annotation.models import ProtocolRating, RatingRound
from hits.models import Batch

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORKERS = (("rita-rater", 1280), ("ravi-rater", 390), ("rosa-rater", 1280))


def new_context(browser, width: int):
    phone = width < 600
    context = browser.new_context(
        viewport={"width": width, "height": 844 if phone else 900}, is_mobile=phone, has_touch=phone
    )
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    return context, page


def create_batch(page, base: str, dataset, protocol: str, name: str, instructions: str = ""):
    page.goto(f"{base}/datasets/{dataset.pk}/batches/new")
    page.fill("#id_name", name)
    page.select_option("#id_protocol", protocol)
    page.fill("#id_rating_round", "study")
    if instructions:
        page.fill("#id_instructions", instructions)
    page.select_option("#id_provider", "inhouse")
    page.click("#batch-form button[type=submit]")
    page.wait_for_selector("#rating-note")
    page.click("#publish")
    page.wait_for_selector(".messages li:has-text('Published')")


def score(text: str, worker: int, prior: bool) -> str:
    """Raters who like long summaries, a little more so in Prior, each with their own offset."""
    words = len(text.split())
    base = 1 + min(4, words // 15) + (worker % 2 if prior else 0)
    return str(max(1, min(5, base)))


def rate_all(page, base: str, worker: int, shoot, name: str) -> int:
    """Take tasks from the work page until none is left, each rated by keyboard only."""
    page.goto(f"{base}/work/")
    page.click("#start-next")
    done = 0
    while True:
        page.wait_for_selector(".rate-row.current, .messages li")
        if page.locator(".rate-row").count() == 0:
            return done
        prior = "How good is each summary?" in page.inner_text("h1")
        if done < 2:
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= page.viewport_size["width"] + 1, f"the task page scrolls sideways: {width}px"
            shoot(page, f"rating-task-{name}-{'prior' if prior else 'ref-free'}")
        texts = page.locator(".rate-row .acu-fact").all_inner_texts()
        for text in texts:  # 1-5 rate the highlighted summary and move to the next
            page.keyboard.press(score(text.split("\n", 1)[-1], worker, prior))
        assert page.inner_text("#progress") == f"{len(texts)} of {len(texts)} rated"
        assert page.evaluate("document.activeElement.id") == "submit-task"
        page.keyboard.press("Enter")
        page.wait_for_selector("#task-notice:has-text('your answers are saved')")
        done += 1
        page.click("#after-submit button[type=submit]")


def test_lead_creates_two_rating_batches_three_workers_rate_protocols_page_shows_them(
    live_server, browser, shoot, lead, make_user, eager_celery
):
    dataset = demo_dataset()
    base = live_server.url
    context, page = new_context(browser, 1280)
    login(page, base, lead.username, PASSWORD)
    create_batch(page, base, dataset, "ref_free", "Ref-free study")
    shoot(page, "rating-batch-detail")
    create_batch(page, base, dataset, "prior", "Prior study", "Imagine each summary summarizes a news article.")
    context.close()
    free, prior = Batch.objects.get(name="Ref-free study"), Batch.objects.get(name="Prior study")
    assert free.rating_round_id == prior.rating_round_id and prior.instructions.startswith("Imagine each summary")
    assert free.hits.count() == prior.hits.count() == 10

    for index, (name, width) in enumerate(WORKERS):
        user = make_user(name, "worker")
        context, page = new_context(browser, width)
        login(page, base, user.username, PASSWORD)
        assert rate_all(page, base, index, shoot, f"{width}") == 20
        context.close()

    round_ = RatingRound.objects.get(dataset=dataset, name="study")
    assert ProtocolRating.objects.filter(round=round_).count() == 2 * 3 * 40

    for width in (1280, 390):
        context, page = new_context(browser, width)
        login(page, base, lead.username, PASSWORD)
        page.goto(f"{base}/datasets/{dataset.pk}/dashboard/protocols/?rating_round={round_.pk}")
        alpha = page.inner_text("#protocol-alpha")
        assert "Prior" in alpha and "Ref-free" in alpha and "120" in alpha
        rows = page.locator("#protocol-alpha tbody tr").all_inner_texts()
        assert all("–" not in row for row in rows if row.startswith(("Prior", "Ref-free"))), rows
        assert "Prior" in page.inner_text("#protocol-summary-matrix")
        assert "Ref-free" in page.inner_text("#protocol-system-matrix")
        raters = page.locator("#protocol-case-study tbody tr").all_inner_texts()
        assert len(raters) == 4 and any("inhouse:rita-rater" in r for r in raters)  # three raters and the mean
        width_now = page.evaluate("document.documentElement.scrollWidth")
        assert width_now <= width + 1, width_now
        shoot(page, f"rating-protocols-{width}")
        context.close()
