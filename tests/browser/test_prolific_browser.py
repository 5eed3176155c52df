"""A Prolific participant in a real browser: arrives with Prolific's parameters, works through
a session of three HITs with the keyboard only, and lands on Prolific's completion URL with
the study's code; arriving again (a new session) gives none of those HITs again."""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from hits.batch_fields import BatchSpec
from hits.models import Assignment, Batch
from hits.providers.prolific.models import ProlificSession, ProlificStudy
from hits.services import batches

from ..crowd_data import demo_dataset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CODE = "ACUBROWSER1"
DONE = f"https://app.prolific.com/submissions/complete?cc={CODE}"


def open_prolific_batch(dataset=None, study_id: str = "STUDY1", code: str = CODE):
    """A published Prolific batch of the demo dataset's abs_bart_out summaries, with its main study."""
    dataset = dataset or demo_dataset()
    batch = batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(provider="prolific", assignments=3, provider_config={"hits_per_session": 3}),
        systems=list(dataset.systems.filter(name="abs_bart_out")),
    )
    ProlificStudy.objects.create(
        batch=batch,
        kind="main",
        study_id=study_id,
        status="ACTIVE",
        completion_code=code,
        hits_per_session=3,
        places=10,
    )
    Batch.objects.filter(pk=batch.pk).update(
        status=Batch.Status.PUBLISHED, published_at=timezone.now(), expires_at=timezone.now() + timedelta(days=7)
    )
    return batch


def test_a_session_of_three_hits_with_the_keyboard_then_back_to_prolific(live_server, page, shoot):
    batch = open_prolific_batch()
    landed = []

    def prolific(route):  # stands in for Prolific's completion page (no network here)
        landed.append(route.request.url)
        route.fulfill(
            status=200,
            content_type="text/html",
            body="<!doctype html><html lang='en'><title>Prolific</title><h1 id='prolific-done'>Submission complete</h1>",
        )

    page.route("https://app.prolific.com/**", prolific)
    params = {"PROLIFIC_PID": "PID_BROWSER", "STUDY_ID": "STUDY1", "SESSION_ID": "d61e3e4761d18916449a2f6e"}
    page.goto(f"{live_server.url}/prolific/batch/{batch.pk}/?{urlencode(params)}")
    for n in range(1, 4):
        page.locator("#session-progress").filter(has_text=f"Task {n} of 3").wait_for()
        assert page.locator(".topbar").count() == 0  # participants see no app navigation
        rows = page.locator(".acu-row").count()
        page.locator(".acu-row.current").first.wait_for()
        for i in range(rows):
            page.keyboard.press("y" if i % 3 else "n")
        assert page.evaluate("document.activeElement.id") == "submit-task"
        if n == 1:
            shoot(page, "prolific-task")
        page.keyboard.press("Enter")
        if n < 3:
            page.locator("#session-progress").filter(has_text=f"Task {n + 1} of 3").wait_for()
    page.wait_for_url(DONE)
    page.locator("#prolific-done").wait_for()
    shoot(page, "prolific-complete")
    assert landed == [DONE]

    session = ProlificSession.objects.get(session_id="d61e3e4761d18916449a2f6e")
    assert session.status == ProlificSession.Status.COMPLETED
    first = set(session.assignments().values_list("hit_id", flat=True))
    assert len(first) == 3 and set(session.assignments().values_list("status", flat=True)) == {
        Assignment.Status.SUBMITTED
    }
    assert not any(session.assignments().values_list("confirmed", flat=True))  # counts once Prolific confirms

    # The same participant in a new session (another study place) gets none of those HITs again.
    page.goto(
        f"{live_server.url}/prolific/batch/{batch.pk}/?{urlencode({**params, 'SESSION_ID': '5ece21baee54fb9d2f838190'})}"
    )
    page.locator("#session-progress").filter(has_text="Task 1 of 3").wait_for()
    second = set(
        ProlificSession.objects.get(session_id="5ece21baee54fb9d2f838190")
        .assignments()
        .values_list("hit_id", flat=True)
    )
    assert len(second) == 3 and not first & second


def test_refusals_are_plain_pages(live_server, page):
    batch = open_prolific_batch()
    page.goto(
        f"{live_server.url}/prolific/batch/{batch.pk}/?PROLIFIC_PID=P1&STUDY_ID=WRONG&SESSION_ID=500000000000000000000001"
    )
    assert "another Prolific study" in page.locator("#prolific-message").inner_text()
    page.goto(f"{live_server.url}/prolific/session/not-a-token/")
    assert "not valid" in page.locator("#prolific-message").inner_text()


def test_the_lead_sees_the_study_and_its_sessions(live_server, page, shoot, lead):
    from hits.providers.prolific.sessions import start_session

    from ..conftest import PASSWORD
    from .conftest import login

    batch = open_prolific_batch()
    batch.refresh_from_db()
    start_session(batch=batch, participant_id="PID_LEAD_VIEW", study_id="STUDY1", session_id="789d914c0613cf2f5d83787a")
    from hits.models import Worker
    from hits.providers.prolific.models import ProlificGroupMember

    refused = Worker.objects.create(provider="prolific", external_id="MADEUP_PASS")
    ProlificGroupMember.objects.create(
        group_id="GROUP1",
        worker=refused,
        batch=batch,
        submission_id="0a" * 12,
        error="Prolific could not confirm submission 0a0a0a0a0a0a0a0a0a0a0a0a: Prolific refused GET (404): Not found.",
    )
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    panel = page.locator("#prolific-panel")
    panel.wait_for()
    assert "STUDY1" in panel.locator("#prolific-studies").inner_text()
    assert "789d914c0613cf2f5d83787a" in panel.locator("#prolific-sessions").inner_text()
    assert panel.locator("#prolific-category option").count() == 12
    failures = panel.locator("#prolific-group-failures")
    assert "not added to the participant group" in failures.inner_text() and "MADEUP_PASS" in failures.inner_text()
    shoot(page, "prolific-lead-panel")


def test_a_task_refused_for_good_still_offers_the_way_on(live_server, page):
    """A submission no retry can succeed with (here the session's time ran out while the page was
    open) must not leave the participant on a page with every button off and no way on: the
    session's Continue shows, as it does when the page is opened again, and says what happened."""
    batch = open_prolific_batch()
    params = {"PROLIFIC_PID": "PID_LATE", "STUDY_ID": "STUDY1", "SESSION_ID": "aa1e3e4761d18916449a2f6e"}
    page.goto(f"{live_server.url}/prolific/batch/{batch.pk}/?{urlencode(params)}")
    page.locator("#session-progress").filter(has_text="Task 1 of 3").wait_for()
    page.locator(".acu-row.current").first.wait_for()
    for _ in range(page.locator(".acu-row").count()):
        page.keyboard.press("y")
    session = ProlificSession.objects.get(session_id=params["SESSION_ID"])
    late = timezone.now() - timedelta(seconds=1)
    session.assignments().update(deadline=late)
    ProlificSession.objects.filter(pk=session.pk).update(deadline=late)
    page.keyboard.press("Enter")
    page.locator("#task-notice").filter(has_text="ran out").wait_for()
    assert page.locator("#continue").is_visible()
    page.locator("#continue a").click()
    assert "return the study on Prolific" in page.locator("#prolific-message").inner_text()


@pytest.mark.parametrize("width", [390, 1280])
def test_the_add_places_box_lines_up_with_the_buttons_beside_it(live_server, browser, shoot, lead, width):
    """The Add places number box sat 8 px above the Pause and Add places buttons: its form centred
    the buttons with their 1rem top margin. Every control of the row now has the same top and
    bottom edges (within 1 px), at a phone's width and a laptop's, and the row starts at the
    section's left edge, as the table above it."""
    from ..conftest import PASSWORD
    from .conftest import ARTIFACTS, login

    batch = open_prolific_batch()
    page = browser.new_page(viewport={"width": width, "height": 900})
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    row = page.locator("#prolific-panel > .actions")
    row.wait_for()
    edges = page.evaluate(
        """() => [...document.querySelectorAll('#prolific-panel > .actions button, #prolific-places')]
            .map(e => { const r = e.getBoundingClientRect();
                return {name: e.id || e.textContent.trim(), top: r.top, bottom: r.bottom, left: r.left}; })"""
    )
    assert [e["name"] for e in edges] == ["Pause", "prolific-places", "Add places"]
    pause = edges[0]
    for e in edges[1:]:
        assert abs(e["top"] - pause["top"]) <= 1 and abs(e["bottom"] - pause["bottom"]) <= 1, edges
    table = page.locator("#prolific-panel > .table-scroll").bounding_box()
    assert abs(pause["left"] - table["x"]) <= 1 and edges[1]["left"] > pause["left"]
    assert page.locator("#prolific-places").bounding_box()["width"] < 100  # a number's box, not the row's
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    row.scroll_into_view_if_needed()
    shoot(page, f"prolific-add-places-{width}")
    row.screenshot(path=str(ARTIFACTS / f"prolific-add-places-row-{width}.png"))  # the row itself, to look at
