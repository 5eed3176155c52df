"""The task page as MTurk shows it: inside an iframe of another site, previewed, accepted,
submitted, and handed back to a local stand-in for MTurk's externalSubmit."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode

import pytest

from hits.batch_fields import BatchSpec
from hits.models import Assignment, Batch
from hits.providers.mturk.models import MTurkHeldSubmission
from hits.services import batches

from ..crowd_data import demo_dataset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class StandIn(BaseHTTPRequestHandler):
    """Plays MTurk: a page framing our task, and the externalSubmit endpoint."""

    frame_url = ""
    posts: list = []

    def do_GET(self):
        body = f'<!doctype html><html lang="en"><title>MTurk stand-in</title><h1>Worker site</h1><iframe id="task" title="Task" src="{self.frame_url}" width="1000" height="1400"></iframe>'
        self._send(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        StandIn.posts.append((self.path, parse_qs(self.rfile.read(length).decode())))
        self._send('<p id="done">Submitted to MTurk</p>')

    def _send(self, body: str):
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def standin():
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    StandIn.posts = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_preview_then_submit_inside_mturks_frame(live_server, browser, shoot, standin, settings, monkeypatch):
    settings.MTURK_WORKER_SITES = [standin]
    # MTurk itself is not reachable here, and the page never calls it: the answers are held.
    dataset = demo_dataset()
    batch = batches.create_batch(
        dataset=dataset, spec=BatchSpec(provider="mturk"), systems=list(dataset.systems.filter(name="abs_bart_out"))
    )
    hit = batch.hits.order_by("pk").first()
    hit.external_id = "3HITEXAMPLE0000000000000000001"
    hit.save()
    Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.PUBLISHED)
    page = browser.new_page(viewport={"width": 1100, "height": 1000})

    def open_frame(assignment_id):
        params = {
            "assignmentId": assignment_id,
            "hitId": hit.external_id,
            "workerId": "A2TESTWORKER",
            "turkSubmitTo": standin,
        }
        StandIn.frame_url = f"{live_server.url}/mturk/task/?{urlencode(params)}"
        page.goto(standin)
        return page.frame_locator("#task")

    frame = open_frame("ASSIGNMENT_ID_NOT_AVAILABLE")
    frame.locator("text=Preview: accept the HIT on MTurk to answer it.").wait_for()  # worded for a worker, not a lead
    assert frame.locator("#submit-task").count() == 0
    assert frame.locator(".topbar").count() == 0
    assert not Assignment.objects.filter(hit=hit).exists()
    shoot(page, "mturk-preview")

    frame = open_frame("3ASSIGNEXAMPLE00000000000000001")
    frame.locator(".acu-row").first.click()
    rows = frame.locator(".acu-row").count()
    for _ in range(rows):
        page.keyboard.press("y")
    frame.locator("#submit-task").click()
    frame.locator("#done").wait_for()  # the frame moved on to MTurk's externalSubmit
    shoot(page, "mturk-submitted")

    path, form = StandIn.posts[-1]
    assert path == "/mturk/externalSubmit"
    assert form["assignmentId"] == ["3ASSIGNEXAMPLE00000000000000001"] and form["answersStored"] == ["1"]
    held = MTurkHeldSubmission.objects.get(hit=hit, assignment_id="3ASSIGNEXAMPLE00000000000000001")
    assert held.worker_id == "A2TESTWORKER" and len(held.answers) == rows
    assert not Assignment.objects.filter(hit=hit).exists()  # counts once a sync sees MTurk report it


def test_frame_policy_and_refusals(client, settings):
    dataset = demo_dataset()
    batch = batches.create_batch(dataset=dataset, spec=BatchSpec(provider="mturk"))
    hit = batch.hits.first()
    hit.external_id = "3HITEXAMPLE0000000000000000002"
    hit.save()
    Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.PUBLISHED)
    response = client.get("/mturk/task/", {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": hit.external_id})
    assert response.status_code == 200
    assert response["Content-Security-Policy"].endswith(
        "; frame-ancestors 'self' https://www.mturk.com https://workersandbox.mturk.com"
    )
    assert "default-src 'self'" in response["Content-Security-Policy"]
    assert "X-Frame-Options" not in response and "sessionid" not in response.cookies
    evil = client.get(
        "/mturk/task/",
        {"assignmentId": "A1", "hitId": hit.external_id, "workerId": "W", "turkSubmitTo": "https://evil.example"},
    )
    assert evil.status_code == 400 and "unknown turkSubmitTo" in evil.content.decode()
    assert client.get("/mturk/task/", {"hitId": "NOPE"}).status_code == 404
    assert not Assignment.objects.filter(hit=hit).exists()
