"""Nobody can act as another MTurk worker: typed task links and qualification posts count only
when MTurk (botocore's Stubber standing in for it) confirms the assignment for that worker."""

import pytest
from django.core.cache import cache

from hits.models import Assignment, QualificationAttempt, Worker
from hits.services.qualification import answer_key, build_test

from .test_mturk import published, stub  # noqa: F401 - the Stubber fixture

pytestmark = pytest.mark.django_db
SUBMIT_TO = "https://workersandbox.mturk.com"


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


def record(assignment_id, worker_id, hit_id):
    return {
        "Assignment": {
            "AssignmentId": assignment_id,
            "WorkerId": worker_id,
            "HITId": hit_id,
            "AssignmentStatus": "Submitted",
        }
    }


def open_task(client, hit, assignment_id, worker_id):
    return client.get(
        "/mturk/task/",
        {"hitId": hit.external_id, "assignmentId": assignment_id, "workerId": worker_id, "turkSubmitTo": SUBMIT_TO},
    )


def test_made_up_assignment_ids_take_no_place_and_do_not_block_the_real_worker(stub, client):  # noqa: F811
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    for i in range(30):  # MTurk knows none of these ids
        stub.add_client_error(
            "get_assignment", "RequestError", "Assignment does not exist.", expected_params={"AssignmentId": f"FAKE{i}"}
        )
        page = open_task(client, hit, f"FAKE{i}", "VICTIM")
        assert page.status_code == 403 and "MTurk has not confirmed this assignment" in page.content.decode()
    assert not Assignment.objects.filter(hit=hit).exists()
    # An id MTurk knows, but as another worker's or another HIT's, is refused too.
    stub.add_response("get_assignment", record("REAL1", "SOMEONE", hit.external_id), {"AssignmentId": "REAL1"})
    assert open_task(client, hit, "REAL1", "VICTIM").status_code == 403
    assert not Assignment.objects.filter(hit=hit).exists()

    stub.add_response("get_assignment", record("REAL2", "VICTIM", hit.external_id), {"AssignmentId": "REAL2"})
    page = open_task(client, hit, "REAL2", "VICTIM")
    assert page.status_code == 200 and "already submitted" not in page.content.decode().lower()
    mine = Assignment.objects.get(hit=hit)
    assert (mine.worker.external_id, mine.external_id, mine.status) == ("VICTIM", "REAL2", Assignment.Status.ASSIGNED)
    assert open_task(client, hit, "REAL2", "VICTIM").status_code == 200  # a reload: no second call (none stubbed)


def _our_pages_test(stub):  # noqa: F811
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
    return test, batch.hits.order_by("pk").first(), answers


def test_an_anonymous_post_cannot_burn_a_workers_qualification_attempt(stub, client):  # noqa: F811
    test, hit, answers = _our_pages_test(stub)
    url = f"/mturk/qualification/{test.pk}/"
    post = client.post(url, {"workerId": "VICTIM", "env": "sandbox", **answers})
    assert post.status_code == 403
    forged = client.post(url, {"token": "forged", **answers})
    assert forged.status_code == 403
    assert not QualificationAttempt.objects.filter(worker__external_id="VICTIM").exists()
    # A GET with a made-up assignment id is refused as well.
    stub.add_client_error(
        "get_assignment", "RequestError", "no such assignment", expected_params={"AssignmentId": "FAKE"}
    )
    assert client.get(url, {"workerId": "VICTIM", "assignmentId": "FAKE", "hitId": hit.external_id}).status_code == 403
    # Any other test id is not open.
    assert client.get(f"/mturk/qualification/{test.pk + 999}/", {"workerId": "VICTIM"}).status_code == 404


def test_a_confirmed_worker_takes_the_test_with_a_signed_form(stub, client):  # noqa: F811
    test, hit, answers = _our_pages_test(stub)
    url = f"/mturk/qualification/{test.pk}/"
    stub.add_response("get_assignment", record("QA1", "A9WORKER", hit.external_id), {"AssignmentId": "QA1"})
    page = client.get(url, {"workerId": "A9WORKER", "assignmentId": "QA1", "hitId": hit.external_id})
    assert page.status_code == 200 and "frame-ancestors" in page["Content-Security-Policy"]
    token = page.context["mturk_token"]
    assert 'name="workerId"' not in page.content.decode()
    stub.add_response(
        "associate_qualification_with_worker",
        {},
        {"QualificationTypeId": "QUALTYPE3", "WorkerId": "A9WORKER", "IntegerValue": 100, "SendNotification": False},
    )
    result = client.post(url, {"token": token, "workerId": "VICTIM", **answers})  # the typed id is ignored
    assert "the qualification is granted on MTurk" in result.content.decode()
    assert QualificationAttempt.objects.filter(worker__external_id="A9WORKER").count() == 1
    assert not Worker.objects.filter(external_id="VICTIM").exists()
