"""What a walk through the worker's pages found, in Chromium (the server side:
tests/test_worker_pages_walkthrough.py): the task's deadline as a clock time, counted down while the
page stays open; touch targets of at least 44 px on a phone (390x844); a task taken back from a
blocked worker reads "Taken back"; a rejected task's badge is not the grey of submitted and expired."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from hits.models import Assignment
from hits.release import release_overdue
from hits.services import handout, qualification, review
from hits.services.submission import submit_assignment, task_token
from hits.views.worker import inhouse_worker

from ..conftest import PASSWORD
from ..crowd_data import all_answers, demo_dataset, published_batch
from .conftest import ARTIFACTS, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
NARROW = {"viewport": {"width": 390, "height": 844}}  # a narrow window: a mouse, no touch
DESKTOP = {"viewport": {"width": 1280, "height": 860}}
TOUCH_MIN = 44


def minutes_left(page) -> int:
    text = page.inner_text("#task-deadline .time-left")
    found = re.fullmatch(r"within (\d+)\W+minutes?", text)
    assert found, text
    return int(found[1])


def test_the_deadline_says_the_clock_time_and_counts_down_by_the_servers_time(live_server, browser, worker):
    """The line said "Submit within 59 minutes": no clock time, and it never changed while the page stayed open.
    It says "Submit by 10:49 UTC (within 59 minutes)" and counts down every 30 s, from the server's
    deadline: a browser whose clock is years off still shows the server's time left."""
    batch = published_batch(gold_share=0.0)
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    context = browser.new_context(**PHONE)
    page = context.new_page()
    page.clock.install(time="2001-02-03T04:05:06Z")  # the browser's clock is wrong by decades
    page.goto(f"{live_server.url}/task/{task_token(assignment)}/")
    page.wait_for_selector(".acu-row.current")
    clock = timezone.localtime(assignment.deadline).strftime("%H:%M %Z")
    line = page.inner_text("#task-deadline")
    assert line.startswith(f"Submit by {clock} (within "), line
    assert clock.endswith(" UTC")
    start = minutes_left(page)
    assert 57 <= start <= 59, line  # the server's hour, less the seconds the test took
    page.screenshot(path=ARTIFACTS / "walkthrough-deadline-phone-screen.png")

    # Five minutes on the page (the due 30-second timer runs before fast_forward returns): the line says so.
    page.clock.fast_forward("05:00")
    assert minutes_left(page) == start - 5
    assert page.inner_text("#task-deadline").startswith(f"Submit by {clock} (")  # the clock time stays
    page.clock.fast_forward("01:00:00")
    assert page.inner_text("#task-deadline .time-left") == "time is up"
    context.close()


def test_a_deadline_days_away_says_its_day_and_counts_down_in_days(live_server, browser, worker):
    """ "Submit by 10:49 UTC (within 2 days)" read as today's 10:49: the line says the day too
    ("Submit by 9 Dec 10:49 UTC (within 2 days, 2 hours)"), and keeps it while the time left
    counts down in days and hours."""
    batch = published_batch(gold_share=0.0)
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    due = timezone.now() + timedelta(days=2, hours=2, minutes=30)
    Assignment.objects.filter(pk=assignment.pk).update(deadline=due)
    context = browser.new_context(**DESKTOP)
    page = context.new_page()
    page.clock.install(time="2001-02-03T04:05:06Z")  # the browser's clock is wrong by decades
    page.goto(f"{live_server.url}/task/{task_token(assignment)}/")
    page.wait_for_selector(".acu-row.current")
    local = timezone.localtime(due)
    clock = f"{local.day} {local:%b %H:%M %Z}"
    assert page.inner_text("#task-deadline").startswith(f"Submit by {clock} (within 2\u00a0days, 2\u00a0hours)")
    page.clock.fast_forward("24:00:00")  # a day on the page
    assert page.inner_text("#task-deadline").startswith(f"Submit by {clock} (within 1\u00a0day, 2\u00a0hours)")
    page.clock.fast_forward("27:00:00")
    assert page.inner_text("#task-deadline .time-left") == "time is up"
    context.close()


def heights(page, selector: str) -> list[float]:
    return [box["height"] for box in (el.bounding_box() for el in page.locator(selector).all()) if box]


@pytest.mark.parametrize("screen", ["phone", "narrow"])
def test_what_a_finger_taps_is_at_least_44_px_tall_on_a_phone(live_server, browser, shoot, worker, screen):
    """At 390x844 the task page's Present / Not present were 39 px tall, the header's "My work" 18
    and "Log out" 23, the fold-outs' headings 23, a qualification sheet's answers 39."""
    dataset = demo_dataset()
    test = qualification.build_test(dataset=dataset, name="ACU matching qualification", items=2)
    published_batch(dataset, qualification_test=test, gold_share=0.0)  # offers the test
    assignment = handout.next_assignment(inhouse_worker(worker), published_batch(dataset, gold_share=0.0))
    context = browser.new_context(**(PHONE if screen == "phone" else NARROW))
    page = context.new_page()
    login(page, live_server.url, worker.username, PASSWORD)
    page.goto(f"{live_server.url}/work/")
    targets = {
        "My work": page.locator(".topbar nav a", has_text="My work"),
        "Log out": page.locator(".topbar button", has_text="Log out"),
    }
    for name, target in targets.items():
        box = target.bounding_box()
        assert box and box["height"] >= TOUCH_MIN, (name, box)
    shoot(page, f"walkthrough-work-{screen}")

    page.goto(f"{live_server.url}/task/{task_token(assignment)}/")
    page.wait_for_selector(".acu-row.current")
    choices = heights(page, ".acu-row .choice")
    assert choices and min(choices) >= TOUCH_MIN, choices
    folds = {s.inner_text(): s.bounding_box()["height"] for s in page.locator("summary").all()}
    assert set(folds) >= {"Instructions and examples", "Reference summary (context)"}, folds
    assert min(folds.values()) >= TOUCH_MIN, folds
    nav = page.locator(".topbar nav a", has_text="My work").bounding_box()
    assert nav and nav["height"] >= TOUCH_MIN, nav
    page.screenshot(path=ARTIFACTS / f"walkthrough-task-{screen}-screen.png")

    page.goto(f"{live_server.url}/work/qualification/{test.pk}/")
    answers = heights(page, ".choices label")
    assert answers and min(answers) >= TOUCH_MIN, answers
    context.close()

    # A desktop keeps its sizes: the rule is for phones and touch screens.
    page = browser.new_context(**DESKTOP).new_page()
    page.goto(f"{live_server.url}/task/{task_token(assignment)}/")
    page.wait_for_selector(".acu-row.current")
    assert max(heights(page, ".acu-row .choice")) < 42 and max(heights(page, "summary")) < 30
    page.context.close()


def test_a_task_taken_back_from_a_blocked_worker_reads_taken_back(live_server, browser, worker):
    """Its progress line said "Expired", as for a task whose time ran out."""
    me = inhouse_worker(worker)
    held = handout.next_assignment(me, published_batch(gold_share=0.0))
    review.block_worker(worker_id=me.pk, reason="copied answers")
    context = browser.new_context(**NARROW)
    page = context.new_page()
    page.goto(f"{live_server.url}/task/{task_token(held)}/")
    page.wait_for_function("document.getElementById('progress').textContent !== ''")
    assert page.inner_text("#progress") == "Taken back"
    assert page.locator("#submit-task").count() == 0 and page.locator(".choice:enabled").count() == 0
    page.screenshot(path=ARTIFACTS / "walkthrough-taken-back-screen.png")
    context.close()


def contrast(page, selector: str) -> tuple[float, str, str]:
    """The WCAG contrast ratio of an element's text on its background, and both colours."""
    return page.eval_on_selector(
        selector,
        """el => {
          const style = getComputedStyle(el);
          const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
          const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                             return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
          const [a, b] = [lum(rgb(style.color)), lum(rgb(style.backgroundColor))].sort((x, y) => y - x);
          return [(a + 0.05) / (b + 0.05), style.color, style.backgroundColor];
        }""",
    )


def test_rejected_work_does_not_look_like_submitted_or_expired(live_server, browser, shoot, worker, lead):
    """On My work the three badges were the same grey: only the word told them apart."""
    me = inhouse_worker(worker)
    batch = published_batch(gold_share=0.0)
    rejected = handout.next_assignment(me, batch)
    submit_assignment(assignment_id=rejected.pk, worker_id=me.pk, answers=all_answers(rejected))
    review.reject(assignment_id=rejected.pk, feedback="Every fact marked present.", by=lead)
    submitted = handout.next_assignment(me, batch)
    submit_assignment(assignment_id=submitted.pk, worker_id=me.pk, answers=all_answers(submitted))
    expired = handout.next_assignment(me, batch)
    Assignment.objects.filter(pk=expired.pk).update(deadline=timezone.now() - timedelta(minutes=1))
    release_overdue()
    page = browser.new_context(**NARROW).new_page()
    login(page, live_server.url, worker.username, PASSWORD)
    page.goto(f"{live_server.url}/work/")
    looks = {s: contrast(page, f"#recent-tasks .status-{s}") for s in ("rejected", "submitted", "expired")}
    assert page.inner_text("#recent-tasks .status-rejected") == "Rejected"
    ratio, color, background = looks["rejected"]
    assert ratio >= 4.5, looks
    assert background not in (looks["submitted"][2], looks["expired"][2]), looks
    red, green, blue = (int(v) for v in re.findall(r"\d+", background)[:3])
    assert red > green + 8 and red > blue + 8, background  # a red tint
    shoot(page, "walkthrough-work-statuses-narrow")
    page.context.close()
