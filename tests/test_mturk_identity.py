"""Nobody can act as another MTurk worker, and no anonymous request calls AWS.

MTurk's API reference: GetAssignment "retrieves an assignment with an AssignmentStatus value of
Submitted, Approved, or Rejected", and ListAssignmentsForHIT lists those statuses only; an
assignment that was just accepted is neither. So the task page trusts MTurk's query parameters
for display only (no AWS call, nothing written); the answers it posts are held and count only
once ListAssignmentsForHIT reports that worker's submitted assignment (botocore's Stubber stands
in for MTurk and fails the test on any call it was not given)."""

import pytest
from django.core.cache import cache

from hits.models import Assignment, LedgerEntry, QualificationAttempt, Worker
from hits.providers.mturk import client as mturk_client
from hits.providers.mturk.models import MTurkHeldSubmission
from hits.providers.mturk.provider import MTurkProvider
from hits.providers.mturk.sync import sync_batch
from hits.selectors import counted_judgments
from hits.selectors.figures import batch_spend
from hits.services.qualification import answer_key, build_test

from .test_mturk import published, stub, sync_one  # noqa: F401 - the Stubber fixture

pytestmark = pytest.mark.django_db
SUBMIT_TO = "https://workersandbox.mturk.com"


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


def listed(assignment_id, worker_id, hit, status="Submitted"):
    """One entry of ListAssignmentsForHIT, as MTurk documents it."""
    return {"AssignmentId": assignment_id, "WorkerId": worker_id, "HITId": hit.external_id, "AssignmentStatus": status}


def open_task(client, hit, assignment_id, worker_id):
    return client.get(
        "/mturk/task/",
        {"hitId": hit.external_id, "assignmentId": assignment_id, "workerId": worker_id, "turkSubmitTo": SUBMIT_TO},
    )


def answers_for(hit, present: bool) -> dict:
    return {str(pk): present for pk in hit.task_acus().values_list("pk", flat=True)}


def post_answers(client, page, answers):
    return client.post(page.context["submit_url"], {"answers": answers}, content_type="application/json")


def test_the_task_page_calls_no_aws_and_writes_nothing(stub, client):  # noqa: F811
    """A worker who has just accepted the HIT sees the task (MTurk has nothing to confirm yet);
    made-up ids call no AWS API (the Stubber has no response queued) and write no row."""
    hit = published(stub).hits.order_by("pk").first()
    workers_before = Worker.objects.count()
    for i in range(30):
        page = open_task(client, hit, f"FAKE{i}", "VICTIM")
        assert page.status_code == 200 and "submit-task" in page.content.decode()
    assert not Assignment.objects.filter(hit=hit).exists()
    assert Worker.objects.count() == workers_before and not MTurkHeldSubmission.objects.exists()
    # Ids MTurk never gives (lower case, punctuation, over 64 characters) are refused with a message.
    for bad in ("x/../y", "A" * 65, "a1b2"):
        refused = open_task(client, hit, bad, "VICTIM")
        assert refused.status_code == 400 and "not one MTurk gives" in refused.content.decode()


def test_held_answers_count_only_for_the_assignment_mturk_reports(stub, client):  # noqa: F811
    """An attacker posting under the victim's worker id with made-up assignment ids takes no
    place and does not block the victim; only the assignment ListAssignmentsForHIT reports for
    that worker becomes an Assignment, with the answers posted for it."""
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    for fake in ("FAKE1", "FAKE2"):
        posted = post_answers(client, open_task(client, hit, fake, "VICTIM"), answers_for(hit, False))
        assert posted.status_code == 200 and posted.json()["ok"]
    real_page = open_task(client, hit, "REAL1", "VICTIM")
    assert "already submitted" not in real_page.content.decode().lower()  # not blocked by the fakes
    assert post_answers(client, real_page, answers_for(hit, True)).json()["ok"]
    # Held: no assignment, no place taken, nothing counts.
    assert not Assignment.objects.filter(hit=hit).exists() and not counted_judgments(batch.dataset, batch).exists()
    hit.refresh_from_db()
    assert hit.open_places == hit.max_assignments
    assert MTurkHeldSubmission.objects.filter(hit=hit, worker_id="VICTIM").count() == 3
    # A repeat of the same answers is the same reply; other answers for the same assignment are refused.
    assert post_answers(client, real_page, answers_for(hit, True)).json()["repeated"]
    assert post_answers(client, real_page, answers_for(hit, False)).status_code == 409
    # A fourth made-up assignment of the same worker and HIT is refused (bounded rows).
    fourth = post_answers(client, open_task(client, hit, "FAKE3", "VICTIM"), answers_for(hit, False))
    assert fourth.status_code == 409 and "Too many" in fourth.json()["error"]

    assert sync_one(stub, batch, hit, [listed("REAL1", "VICTIM", hit)])["confirmed"] == 1
    mine = Assignment.objects.get(hit=hit)
    assert (mine.worker.external_id, mine.external_id, mine.status, mine.confirmed) == (
        "VICTIM",
        "REAL1",
        Assignment.Status.SUBMITTED,
        True,
    )
    assert set(mine.judgments.values_list("present", flat=True)) == {True}  # the real worker's answers
    assert counted_judgments(batch.dataset, batch).count() == mine.judgments.count()
    assert not MTurkHeldSubmission.objects.filter(hit=hit).exists()  # the fakes are dropped
    assert "already submitted" in open_task(client, hit, "REAL1", "VICTIM").content.decode()


def test_an_assignment_mturk_reports_without_answers_is_flagged(stub, client):  # noqa: F811
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    assert sync_one(stub, batch, hit, [listed("LOST1", "W1", hit, "Approved")])["flagged"] == 1
    lost = Assignment.objects.get(hit=hit)
    assert not lost.confirmed and "no answers were stored" in lost.flag


def test_an_approval_at_mturk_of_work_without_answers_here_reaches_the_ledger_once(stub, client):  # noqa: F811
    """MTurk approved (auto-approval) an assignment whose answers never reached us: MTurk paid its
    reward and fee, so the ledger records them, once; its work still does not count. A rejected
    one costs nothing."""
    batch = published(stub)
    first, second = batch.hits.order_by("pk")[:2]
    records = [listed("LOST1", "W1", first, "Approved")]
    assert sync_one(stub, batch, first, records)["flagged"] == 1
    lost = Assignment.objects.get(hit=first)
    assert lost.status == Assignment.Status.APPROVED and not lost.confirmed
    rows = LedgerEntry.objects.filter(assignment=lost)
    assert sorted(rows.values_list("kind", "amount")) == [
        ("fee", MTurkProvider().fee(first.reward, batch.assignments_per_hit)),
        ("reward", first.reward),
    ]
    assert batch_spend(batch)["total"] == first.reward + MTurkProvider().fee(first.reward, batch.assignments_per_hit)
    sync_one(stub, batch, first, records)  # again: nothing more
    assert LedgerEntry.objects.filter(batch=batch).count() == 2
    assert not counted_judgments(batch.dataset, batch).exists()
    assert sync_one(stub, batch, second, [listed("LOST2", "W2", second, "Rejected")])["flagged"] == 1
    assert LedgerEntry.objects.filter(batch=batch).count() == 2


def test_the_mturk_client_has_bounded_retries_and_timeouts(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    config = mturk_client.make_client(True).meta.config
    assert config.retries == {"mode": "standard", "total_max_attempts": 3}  # first call + 2 retries
    assert (config.connect_timeout, config.read_timeout) == (5, 20)


def our_pages_test(stub):  # noqa: F811 - the Stubber fixture, passed in
    """A published MTurk batch whose test is graded on our pages: (batch, test, HIT, right answers)."""
    batch = published(stub)
    test = build_test(dataset=batch.dataset, name="ACU test", items=2, pass_score=0.8)
    test.external_ids = {"mturk-sandbox": "QUALTYPE3"}
    test.save()
    batch.qualification_test = test
    batch.provider_config = {**batch.provider_config, "qualification_mode": "our_pages"}
    batch.save()
    answers = {
        f"ans-{answer_key(item.pk, acu)}": "1" if truth else "0"
        for item in test.items.all()
        for acu, truth in item.answers.items()
    }
    return batch, test, batch.hits.order_by("pk").first(), answers


def test_an_anonymous_post_cannot_burn_a_workers_qualification_attempt(stub, client):  # noqa: F811
    batch, test, hit, answers = our_pages_test(stub)
    url = f"/mturk/qualification/{test.pk}/"
    assert client.post(url, {"workerId": "VICTIM", "env": "sandbox", **answers}).status_code == 403
    assert client.post(url, {"token": "forged", **answers}).status_code == 403
    # A made-up assignment id: the page shows (no AWS call), the answers are only held ...
    page = client.get(url, {"workerId": "VICTIM", "assignmentId": "FAKE", "hitId": hit.external_id})
    assert page.status_code == 200
    wrong = dict.fromkeys(answers, "0")
    assert (
        "Your answers are saved" in client.post(url, {"token": page.context["mturk_token"], **wrong}).content.decode()
    )
    assert not QualificationAttempt.objects.exists() and not Worker.objects.filter(external_id="VICTIM").exists()
    # ... and MTurk never reports that assignment, so no attempt is used up.
    sync_one(stub, batch, hit, [])
    assert not QualificationAttempt.objects.exists()
    # Any other test id is not open.
    assert client.get(f"/mturk/qualification/{test.pk + 999}/", {"workerId": "VICTIM"}).status_code == 404


def test_a_worker_mturk_reports_is_graded_and_granted(stub, client):  # noqa: F811
    batch, test, hit, answers = our_pages_test(stub)
    url = f"/mturk/qualification/{test.pk}/"
    page = client.get(url, {"workerId": "A9WORKER", "assignmentId": "QA1", "hitId": hit.external_id})
    assert page.status_code == 200 and "frame-ancestors" in page["Content-Security-Policy"]
    assert 'name="workerId"' not in page.content.decode()
    result = client.post(url, {"token": page.context["mturk_token"], "workerId": "VICTIM", **answers})
    assert "Your answers are saved" in result.content.decode()  # the typed id is ignored
    assert not QualificationAttempt.objects.exists()
    statuses = ["Submitted", "Approved", "Rejected"]
    for h in batch.hits.order_by("pk"):
        mine = [listed("QA1", "A9WORKER", hit)] if h.pk == hit.pk else []
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": mine, "NumResults": len(mine)},
            {"HITId": h.external_id, "MaxResults": 100, "AssignmentStatuses": statuses},
        )
        if mine:  # graded as MTurk reports the assignment, then granted
            stub.add_response(
                "associate_qualification_with_worker",
                {},
                {
                    "QualificationTypeId": "QUALTYPE3",
                    "WorkerId": "A9WORKER",
                    "IntegerValue": 100,
                    "SendNotification": False,
                },
            )
    sync_batch(batch)
    attempt = QualificationAttempt.objects.get(worker__external_id="A9WORKER")
    assert attempt.passed and attempt.score == 1.0
    assert not Worker.objects.filter(external_id="VICTIM").exists()
    assert not MTurkHeldSubmission.objects.filter(kind="qualification").exists()


def test_held_answers_mturk_never_reports_are_dropped_once_it_could_not(stub, client):  # noqa: F811
    from datetime import timedelta

    from django.utils import timezone

    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    for fake in ("OLD1", "NEW1"):
        post_answers(client, open_task(client, hit, fake, "W7"), answers_for(hit, True))
    window = batch.lifetime_seconds + batch.assignment_duration_seconds + batch.auto_approve_seconds + 86400
    MTurkHeldSubmission.objects.filter(assignment_id="OLD1").update(
        created_at=timezone.now() - timedelta(seconds=window + 60)
    )
    sync_one(stub, batch, hit, [])
    assert list(MTurkHeldSubmission.objects.values_list("assignment_id", flat=True)) == ["NEW1"]


def test_held_answers_are_capped_per_hit_at_a_multiple_of_its_places(stub, client):  # noqa: F811
    """Issue 45 item 9: made-up worker ids cannot store held rows without bound: a HIT holds at
    most HELD_PER_PLACE x its places, then posts are refused (409, nothing stored); other HITs
    and the qualification page are bounded by the same count."""
    from hits.providers.mturk.views import HELD_PER_PLACE, held_cap

    batch = published(stub)
    hit, other = batch.hits.order_by("pk")[:2]
    cap = held_cap(hit)
    assert cap == HELD_PER_PLACE * hit.max_assignments
    statuses = []
    for i in range(cap + 3):
        page = open_task(client, hit, f"A{i}", f"MADEUP{i}")
        statuses.append(post_answers(client, page, answers_for(hit, True)).status_code)
    assert statuses == [200] * cap + [409] * 3
    assert MTurkHeldSubmission.objects.filter(hit=hit).count() == cap
    refused = post_answers(client, open_task(client, hit, "REAL9", "REALWORKER"), answers_for(hit, True))
    assert refused.status_code == 409 and "too many submissions waiting for MTurk" in refused.json()["error"]
    # Another HIT is not affected.
    ok = post_answers(client, open_task(client, other, "B1", "W1"), answers_for(other, True))
    assert ok.status_code == 200 and MTurkHeldSubmission.objects.filter(hit=other).count() == 1


def test_a_hit_whose_answers_are_held_but_not_handed_to_mturk_can_still_be_submitted(stub, client):  # noqa: F811
    """The answers are stored here, then the frame posts the assignment to MTurk; when that post
    never happened (the tab closed, the connection dropped), opening the HIT again said "already
    submitted" with no way to hand it to MTurk: the HIT stayed unsubmitted, unpaid and uncounted.
    The page offers the hand-back; once MTurk reports the assignment, it does not any more."""
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    assert post_answers(client, open_task(client, hit, "REAL1", "A9WORKER"), answers_for(hit, True)).json()["ok"]
    again = open_task(client, hit, "REAL1", "A9WORKER")
    html = again.content.decode()
    assert 'id="hand-back-submit"' in html and f'action="{SUBMIT_TO}/mturk/externalSubmit"' in html
    assert '<form id="external-submit" method="post" action="' + SUBMIT_TO + '/mturk/externalSubmit">' in html  # shown
    assert 'name="assignmentId" value="REAL1"' in html
    assert 'href="/work/"' not in html  # inside MTurk's frame: no link to our in-house work page
    # A fresh assignment of the same HIT shows the task, its hand-back form hidden until stored.
    fresh = open_task(client, hit, "REAL2", "A9OTHER").content.decode()
    assert 'id="hand-back"' not in fresh and f'action="{SUBMIT_TO}/mturk/externalSubmit" hidden>' in fresh
    # Reported by MTurk: submitted there, nothing more to hand in.
    assert sync_one(stub, batch, hit, [listed("REAL1", "A9WORKER", hit)])["confirmed"] == 1
    reported = open_task(client, hit, "REAL1", "A9WORKER").content.decode()
    assert "already submitted" in reported and 'id="hand-back"' not in reported


def test_a_preview_speaks_to_the_worker(stub, client):  # noqa: F811
    """MTurk's preview told the worker "Preview: this is what workers see", the lead's wording."""
    hit = published(stub).hits.order_by("pk").first()
    preview = client.get("/mturk/task/", {"hitId": hit.external_id, "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    assert "accept the HIT on MTurk to answer it" in preview.content.decode()
    assert "what workers see" not in preview.content.decode()


def test_a_malformed_hit_id_is_a_plain_404(stub, client):  # noqa: F811
    """A hitId holding a NUL made the database refuse the query: a 500 instead of the page that
    says the HIT is not known."""
    hit = published(stub).hits.order_by("pk").first()
    for bad in ("\x00", hit.external_id + "\x00", "<script>"):
        page = client.get("/mturk/task/", {"hitId": bad, "assignmentId": "A1", "workerId": "W1"})
        assert page.status_code == 404 and "This HIT is not known here" in page.content.decode()


def test_a_comment_holding_a_nul_is_held_without_it(stub, client):  # noqa: F811
    """The held answers' comment kept a NUL the database refuses: a 500 to the page's post."""
    hit = published(stub).hits.order_by("pk").first()
    page = open_task(client, hit, "REAL1", "A9WORKER")
    body = {"answers": answers_for(hit, True), "comment": "odd\x00 text"}
    posted = client.post(page.context["submit_url"], body, content_type="application/json")
    assert posted.status_code == 200 and posted.json()["ok"]
    assert MTurkHeldSubmission.objects.get(assignment_id="REAL1").comment == "odd text"
