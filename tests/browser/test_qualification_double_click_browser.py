"""A double click on a qualification sheet's Submit in a real browser: the sheet is sent once
(sheet.js disables the button on submit) and the worker reads its result once."""

import contextlib

import pytest
from django.urls import reverse

from hits.models import QualificationAttempt
from hits.services import qualification

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch
from .conftest import answer_test_sheet, login

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
    # The clicks go to the button's place on the screen: bring it into view first (the sheet is
    # longer than the window, and where the last answer left the page scrolled varies).
    submit = page.locator("button[type=submit].big")
    submit.scroll_into_view_if_needed()
    box = submit.bounding_box()
    for _ in range(2):
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_timeout(400)
    # A busy machine may take longer than the clicks to hand the first post to the route: wait for it
    # (route handlers run while the page waits), so no post is left held once the rest are let go.
    for _ in range(300):
        if held:
            break
        page.wait_for_timeout(100)
    page.wait_for_timeout(400)
    posts = len(held)
    released.append(True)
    for route in held:
        with contextlib.suppress(Exception):  # a post the browser dropped for the next one
            route.continue_()
    page.wait_for_url(live_server.url + reverse("work"))
    page.unroute(url)
    page.locator(".messages, [role=alert], [role=status]", has_text="Not passed").first.wait_for()
    assert posts == 1
    assert page.inner_text("main").count("Not passed:") == 1
    assert QualificationAttempt.objects.filter(test=test).count() == 1
    shoot(page, "qualification-double-click")

    # Back to the sheet's page from history: a fresh sheet, its button usable again.
    page.goto(url)
    assert page.is_enabled("button[type=submit].big")
