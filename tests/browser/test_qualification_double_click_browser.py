"""A double click on a qualification sheet's Submit in a real browser: the sheet is sent once
(sheet.js disables the button on submit) and the worker reads its result once."""

import contextlib

import pytest
from django.urls import reverse

from hits.models import QualificationAttempt
from hits.services import qualification

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch
from .conftest import BROWSER_TIMEOUT_MS, answer_test_sheet, login, submits_kept, watch_submits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_double_click_on_submit_sends_the_sheet_once(live_server, page, shoot, worker):
    dataset = demo_dataset()
    test = qualification.build_test(dataset=dataset, name="Screening", items=2, max_attempts=3, retry_after_hours=0)
    published_batch(dataset, assignments=3, qualification_test=test)
    url = live_server.url + reverse("take_test", args=[test.pk])
    login(page, live_server.url, worker.username, PASSWORD)
    page.goto(url)
    answer_test_sheet(page, test, right=False)

    # The sheet's posts are held until both clicks are in, as on a slow connection: the second
    # click lands while the first post is still on its way (a browser sends the form again then).
    held, released = [], []

    def hold(route):
        if route.request.method == "POST" and not released:
            held.append(route)
        else:
            route.continue_()

    page.route(url, hold)
    watch_submits(page)
    # The clicks go to the button's place on the screen: bring it into view first (the sheet is
    # longer than the window, and where the last answer left the page scrolled varies).
    submit = page.locator("button[type=submit].big")
    submit.scroll_into_view_if_needed()
    box = submit.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    # The second click once the first post has reached the route (route handlers run while the
    # page waits): it is on its way, however long a busy machine took to send it.
    for _ in range(BROWSER_TIMEOUT_MS // 50):
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    posts = len(held)
    released.append(True)
    for route in held:
        with contextlib.suppress(Exception):  # a post the browser dropped for the next one
            route.continue_()
    page.wait_for_url(live_server.url + reverse("work"))
    # What the browser sent is told by the sheet page's submit events, over when the click returned
    # (counting the posts at the route after a fixed wait let a second post a busy machine sent late
    # pass unseen): the second click found Submit disabled, one submission, sent.
    assert submits_kept(page) == (1, 1)
    page.unroute(url)
    page.locator(".messages, [role=alert], [role=status]", has_text="Not passed").first.wait_for()
    assert posts == 1
    assert page.inner_text("main").count("Not passed:") == 1
    assert QualificationAttempt.objects.filter(test=test).count() == 1
    shoot(page, "qualification-double-click")

    # Back to the sheet's page from history: a fresh sheet, its button usable again.
    page.goto(url)
    assert page.is_enabled("button[type=submit].big")
