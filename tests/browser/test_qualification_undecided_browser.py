"""A sheet a hair under the pass mark on few facts, in the browser at 1280 and 390 px: the worker
reads "Not decided yet" above a fresh sheet, and *My work* lists the sheet as not decided, no
attempt used. Every page is axe-scanned (conftest)."""

import pytest
from django.conf import settings
from django.urls import reverse
from playwright.sync_api import expect

from hits.models import QualificationAttempt, QualificationTest
from hits.services import qualification
from hits.views.worker import inhouse_worker

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, just_short, published_batch
from .conftest import answer_test_sheet, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_sheet_too_close_to_call_asks_for_one_more(live_server, page, shoot, worker, width):
    page.set_viewport_size({"width": width, "height": 860})
    dataset = demo_dataset(f"undecided-{width}")
    test = qualification.build_test(dataset=dataset, name="Screening", items=2, max_attempts=1, failure_budget=0)
    published_batch(dataset, assignments=3, qualification_test=test)
    sheet = qualification.worker_sheet(test, inhouse_worker(worker))
    given, mark = just_short(sheet)  # one fact wrong, a hair under the mark, not decided
    wrong = next(
        (item.pk, acu, given[qualification.answer_key(item.pk, acu)])
        for item in sheet
        for acu, truth in item.answers.items()
        if given[qualification.answer_key(item.pk, acu)] != truth
    )
    QualificationTest.objects.filter(pk=test.pk).update(pass_score=mark)

    login(page, live_server.url, worker.username, PASSWORD)
    page.goto(live_server.url + reverse("take_test", args=[test.pk]))
    answer_test_sheet(page, test)
    page.check(f"input[name='ans-{wrong[0]}:{wrong[1]}'][value='{int(wrong[2])}']")
    page.click("button[type=submit].big")
    page.wait_for_selector("#test-note")
    assert page.inner_text("#test-note") == qualification.UNDECIDED
    assert page.is_visible("button[type=submit].big")  # a fresh sheet, at once
    # Each radio sits beside its word inside a tap-sized label (it was a lone 13 px circle on a
    # line of its own above the word: the form rule gave every input the full width).
    boxes = page.eval_on_selector_all(
        ".acu-row.static .choices label",
        """labels => labels.map(l => { const r = l.getBoundingClientRect(), i = l.querySelector('input').getBoundingClientRect();
           return {h: r.height, inLine: i.top >= r.top && i.bottom <= r.bottom && i.right < r.left + r.width / 2, iw: i.width}; })""",
    )
    assert boxes and all(b["inLine"] and b["h"] >= 40 and b["iw"] < 30 for b in boxes), boxes[:2]
    assert page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth") <= 0
    shoot(page, f"qualification-undecided-{width}")
    assert QualificationAttempt.objects.get(test=test).decided is False

    page.goto(live_server.url + reverse("work"))
    text = page.inner_text("main")
    assert "not decided yet; no attempt used" in text and "Answer one more sheet" in text
    assert page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth") <= 0
    shoot(page, f"qualification-undecided-work-{width}")


def test_a_sheet_sent_after_the_session_ended_keeps_its_answers_through_the_sign_in(live_server, page, worker):
    """The worker answers the whole sheet, the session ends (the cookies go), Submit leads to the
    sign-in page; signed in again, the sheet comes back with every answer (kept in the browser,
    static/js/sheet.js) and one press grades it. Before, it came back blank."""
    page.set_viewport_size({"width": 390, "height": 860})
    dataset = demo_dataset("session-ends")
    test = qualification.build_test(dataset=dataset, name="Screening", items=2, max_attempts=1, failure_budget=0)
    published_batch(dataset, assignments=3, qualification_test=test)
    login(page, live_server.url, worker.username, PASSWORD)
    page.goto(live_server.url + reverse("take_test", args=[test.pk]))
    answer_test_sheet(page, test)
    total = page.locator("input[name^='ans-'][value='1']").count()
    page.context.clear_cookies(name=settings.SESSION_COOKIE_NAME)  # the session ended while the sheet was open
    page.click("button[type=submit].big")
    page.wait_for_selector("#id_username")
    assert not QualificationAttempt.objects.filter(test=test).exists()  # nothing graded yet
    page.fill("#id_username", worker.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    # Every answer is back: sheet.js puts them back once it has loaded, after the form is on the page.
    expect(page.locator("input[name^='ans-']:checked")).to_have_count(total)
    page.click("button[type=submit].big")
    page.wait_for_url(live_server.url + reverse("work"))
    assert QualificationAttempt.objects.get(test=test).passed is True
    # Graded, the page keeps nothing: a later sheet of this test starts empty (the work page's
    # sheet.js forgets the kept answers once it has loaded).
    page.wait_for_function("Object.keys(localStorage).filter(k => k.startsWith('sheet:')).length === 0")
