"""Walk (a crowd worker who cannot do a task): the task page had no way to give it back, so the
worker held it until its deadline (*Start next task* only resumed it) and its place stayed shut."""

import pytest

from hits.models import HIT, Assignment

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_worker_gives_a_task_back_and_gets_another(live_server, browser, shoot, worker):
    dataset = demo_dataset()
    batch = published_batch(dataset, assignments=1)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    asked = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))
    login(page, live_server.url, worker.username, PASSWORD)
    page.click("#start-next")
    page.wait_for_selector(".acu-row.current")
    task_url = page.url
    first = Assignment.objects.get(worker__user=worker)
    assert HIT.objects.get(pk=first.hit_id).open_places == 0
    page.keyboard.press("y")  # an answer on the page: dropped, after the question
    shoot(page, "task-give-back")

    page.click("#give-back button")
    page.wait_for_selector(".messages li:has-text('You gave the task back')")
    assert asked == [
        "Give this task back? Another worker gets it, your answers on this page are dropped, and it is not paid."
    ]
    first.refresh_from_db()
    assert first.status == Assignment.Status.EXPIRED and first.judgments.count() == 0
    assert HIT.objects.get(pk=first.hit_id).open_places == 1  # its place is open for another worker
    assert page.locator("#recent-tasks tbody tr").first.locator(".badge").inner_text() == "Taken back"
    assert not batch.ledger.exists()  # not paid

    page.click("#start-next")  # other work at once, never the HIT given back
    page.wait_for_selector(".acu-row.current")
    second = Assignment.objects.get(worker__user=worker, status=Assignment.Status.ASSIGNED)
    assert second.hit_id != first.hit_id

    page.goto(task_url)  # the given-back task's page: closed, nothing to give back or submit
    assert "taken back before its time ran out" in page.inner_text("#task-expired")
    assert page.locator("#give-back, #submit-task").count() == 0
    context.close()
