"""Our qualification test as MTurk maps it: the retry rule of a test MTurk grades, the pass bar
as a whole percentage, and the grant after a test taken on our pages (botocore's Stubber checks
each call against the service model and fails on any call it was not given)."""

import pytest
from botocore.stub import ANY

from hits.models import HIT, ProviderCall, QualificationAttempt
from hits.providers.mturk import provider as mturk
from hits.providers.mturk.models import MTurkHeldSubmission
from hits.providers.mturk.sync import sync_batch
from hits.services.qualification import build_test

from .crowd_data import demo_dataset, just_short
from .test_mturk import GRADED_BY_MTURK, mturk_batch, stub  # noqa: F401 - the Stubber fixture
from .test_mturk_identity import listed, our_pages_test

pytestmark = pytest.mark.django_db
STATUSES = ["Submitted", "Approved", "Rejected"]


def expect_type(stub, test, graded_by_mturk=True, **extra):  # noqa: F811
    """The one create_qualification_type call the Stubber accepts: with MTurk's Test and AnswerKey
    when MTurk grades the test, without them when our pages do."""
    graded = {"Test": ANY, "AnswerKey": ANY, "TestDurationInSeconds": 1800} if graded_by_mturk else {}
    stub.add_response(
        "create_qualification_type",
        {"QualificationType": {"QualificationTypeId": "QUALTYPE9", "Name": "x"}},
        {
            "Name": f"{test.name} (#{test.pk})",
            "Description": ANY,
            "QualificationTypeStatus": "Active",
            "Keywords": ANY,
            **graded,
            **extra,
        },
    )


def test_a_one_attempt_test_graded_by_mturk_cannot_be_retaken_there(stub):  # noqa: F811
    """MTurk: without RetryDelayInSeconds "retries are disabled"; with it a worker retries after
    the delay as often as they like. A test of one attempt sent a delay, so MTurk workers could
    retake it (against a fixed AnswerKey) every day."""
    dataset = demo_dataset()
    once = build_test(dataset=dataset, name="Once", items=2, max_attempts=1, retry_after_hours=24)
    expect_type(stub, once)  # no RetryDelayInSeconds
    assert (
        mturk.MTurkProvider().qualification_type(
            mturk_batch(dataset=dataset, qualification_test=once, provider_config=GRADED_BY_MTURK)
        )
        == "QUALTYPE9"
    )

    twice = build_test(dataset=dataset, name="Twice", items=2, max_attempts=2, retry_after_hours=6)
    expect_type(stub, twice, RetryDelayInSeconds=6 * 3600)
    mturk.MTurkProvider().qualification_type(
        mturk_batch(dataset=dataset, qualification_test=twice, provider_config=GRADED_BY_MTURK)
    )


@pytest.mark.parametrize(
    "share, percent", [(0.8, 80), (0.29, 29), (0.575, 58), (0.825, 83), (0.845, 85), (1.0, 100), (0.7999, 80)]
)
def test_shares_become_whole_percentages_rounded_up(share, percent):
    assert mturk.percent_at_least(share) == percent


def test_the_pass_bar_is_never_below_the_pass_score(stub):  # noqa: F811
    """A pass score of 57.5% asked MTurk for 57 (0.575 * 100 is 57.4999... in floats): a worker at
    57% passed there."""
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.575)
    batch = mturk_batch(dataset=dataset, qualification_test=test)
    assert mturk.requirements(batch, "QUALTYPE9")[-1]["IntegerValues"] == [58]


def test_a_worker_who_passed_is_granted_at_least_the_bar(stub):  # noqa: F811
    """Pass score 82.5%, score exactly 82.5%: passed here, but granted round(82.5) = 82 while the
    HITs required 83, so the worker who passed could not work."""
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.825)
    test.external_ids = {"mturk-sandbox": "QUALTYPE9"}
    test.save()
    batch = mturk_batch(dataset=dataset, qualification_test=test)
    bar = mturk.requirements(batch, "QUALTYPE9")[-1]["IntegerValues"][0]
    from hits.models import Worker

    worker = Worker.objects.create(provider="mturk", external_id="A1PASSED")
    stub.add_response(
        "associate_qualification_with_worker",
        {},
        {"QualificationTypeId": "QUALTYPE9", "WorkerId": "A1PASSED", "IntegerValue": bar, "SendNotification": False},
    )
    mturk.MTurkProvider().grant_qualification(test, worker, 0.825, sandbox=True)


def test_a_worker_passed_under_the_mark_is_granted_the_bar(stub):  # noqa: F811
    """A worker whose last sheet allowed still left them undecided passes (the benefit of the
    doubt: hits.qualification_bound.verdict) with a score under the mark: granted that score (70),
    they met no requirement (80) and could not work."""
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.8)
    test.external_ids = {"mturk-sandbox": "QUALTYPE9"}
    test.save()
    from hits.models import Worker

    worker = Worker.objects.create(provider="mturk", external_id="A1DOUBT")
    stub.add_response(
        "associate_qualification_with_worker",
        {},
        {"QualificationTypeId": "QUALTYPE9", "WorkerId": "A1DOUBT", "IntegerValue": 80, "SendNotification": False},
    )
    mturk.MTurkProvider().grant_qualification(test, worker, 0.7, sandbox=True)


def _sync(stub, batch, hit, records, grant=None):  # noqa: F811
    for h in batch.hits.order_by("pk"):
        mine = records if h.pk == hit.pk else []
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": mine, "NumResults": len(mine)},
            {"HITId": h.external_id, "MaxResults": 100, "AssignmentStatuses": STATUSES},
        )
        if mine and grant is not None:
            grant()
    return sync_batch(batch)


def test_a_refused_grant_is_on_the_batch_page_and_retried_by_the_next_sync(stub, client):  # noqa: F811
    """A passed worker's grant that MTurk refused (a ServiceFault) was logged with no batch, so the
    lead never saw it, and the held answers were dropped, so no sync granted it again: the worker
    had passed and could never work."""
    batch, test, hit, answers = our_pages_test(stub)
    url = f"/mturk/qualification/{test.pk}/"
    page = client.get(url, {"workerId": "A9WORKER", "assignmentId": "QA1", "hitId": hit.external_id})
    assert (
        "Your answers are saved" in client.post(url, {"token": page.context["mturk_token"], **answers}).content.decode()
    )
    params = {
        "QualificationTypeId": "QUALTYPE3",
        "WorkerId": "A9WORKER",
        "IntegerValue": 100,
        "SendNotification": False,
    }

    def refused():
        stub.add_client_error(
            "associate_qualification_with_worker",
            service_error_code="ServiceFault",
            service_message="Try again later",
            http_status_code=500,
            expected_params=params,
        )

    _sync(stub, batch, hit, [listed("QA1", "A9WORKER", hit)], grant=refused)
    call = ProviderCall.objects.get(action="associate_qualification_with_worker")
    assert call.batch_id == batch.pk and not call.ok and "Try again later" in call.error
    assert QualificationAttempt.objects.get(worker__external_id="A9WORKER").passed
    assert MTurkHeldSubmission.objects.filter(kind="qualification").count() == 1

    _sync(
        stub,
        batch,
        hit,
        [listed("QA1", "A9WORKER", hit)],
        grant=lambda: stub.add_response("associate_qualification_with_worker", {}, params),
    )
    assert batch.provider_calls.filter(action="associate_qualification_with_worker", ok=True).count() == 1
    assert QualificationAttempt.objects.filter(worker__external_id="A9WORKER").count() == 1  # graded once
    assert not MTurkHeldSubmission.objects.filter(kind="qualification").exists()


def test_requirements_are_mturks_documented_system_qualifications(stub):  # noqa: F811
    """Written out, not derived from `requirements` (the HIT type tests compare it with itself)."""
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.8)
    batch = mturk_batch(dataset=dataset, qualification_test=test)
    guarded = {"Comparator": "GreaterThanOrEqualTo", "ActionsGuarded": "DiscoverPreviewAndAccept"}
    assert mturk.requirements(batch, "QUALTYPE9") == [
        {"QualificationTypeId": "000000000000000000L0", "IntegerValues": [98], **guarded},
        {"QualificationTypeId": "00000000000000000040", "IntegerValues": [10000], **guarded},
        {
            "QualificationTypeId": "00000000000000000071",
            "Comparator": "In",
            "LocaleValues": [{"Country": "US"}, {"Country": "GB"}],
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        },
        {"QualificationTypeId": "QUALTYPE9", "IntegerValues": [80], **guarded},
    ]


def test_an_undecided_sheet_on_our_pages_is_answered_again_from_a_new_hit(stub, client):  # noqa: F811
    """A sheet a hair under the mark is graded not decided yet by the sync (no grant, no attempt
    used); the worker's next test page (a new HIT's assignment) says so above a fresh sheet, and
    the graded assignment's page takes no second sheet (its answers would never be graded)."""
    from hits.models import QualificationTest
    from hits.services import qualification
    from hits.sheets import sheet as sheet_of

    batch, test, hit, _ = our_pages_test(stub)
    sheet = sheet_of(test, "mturk", "A9UNSURE")
    given, mark = just_short(sheet)  # one fact wrong, a hair under the mark, not decided
    QualificationTest.objects.filter(pk=test.pk).update(pass_score=mark)
    url = f"/mturk/qualification/{test.pk}/"
    page = client.get(url, {"workerId": "A9UNSURE", "assignmentId": "QA1", "hitId": hit.external_id})
    form = {f"ans-{k}": "1" if v else "0" for k, v in given.items()}
    assert "Your answers are saved" in client.post(url, {"token": page.context["mturk_token"], **form}).content.decode()
    _sync(stub, batch, hit, [listed("QA1", "A9UNSURE", hit)])  # no grant call: the stub refuses any other
    attempt = QualificationAttempt.objects.get(worker__external_id="A9UNSURE")
    assert not attempt.decided and not attempt.passed and attempt.external_id == "mturk:QA1"

    again = client.get(url, {"workerId": "A9UNSURE", "assignmentId": "QA1", "hitId": hit.external_id})
    body = again.content.decode()
    assert "Open the test again from a new HIT" in body and "Submit the test" not in body
    fresh = client.get(url, {"workerId": "A9UNSURE", "assignmentId": "QA2", "hitId": hit.external_id})
    body = fresh.content.decode()
    assert qualification.UNDECIDED in body and "Submit the test" in body
    assert {i["item"].pk for i in fresh.context["items"]} == {i.pk for i in sheet_of(test, "mturk", "A9UNSURE")}


def test_by_default_a_test_of_an_mturk_batch_is_taken_on_our_pages(stub, client):  # noqa: F811
    """The product's rule: a worker fails a test only when gold shows them below the pass score
    with a confidence bound. MTurk's own grading (QuestionForm + AnswerKey) compares a plain share
    right on one fixed sheet with the pass score, a point score, and it was the default: a lead who
    left the option alone had workers failed on a point estimate. By default the qualification
    type now carries no Test and no AnswerKey (MTurk grades nothing; we grant the score on a pass,
    the Stubber refuses any other parameters) and our test page opens for the batch."""
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.8)
    batch = mturk_batch(dataset=dataset, qualification_test=test)
    expect_type(stub, test, graded_by_mturk=False)
    assert mturk.MTurkProvider().qualification_type(batch) == "QUALTYPE9"
    HIT.objects.filter(pk=batch.hits.order_by("pk").first().pk).update(external_id="3HITOFTHEBATCH")  # as published
    page = client.get(
        f"/mturk/qualification/{test.pk}/", {"workerId": "A9WORKER", "assignmentId": "QA1", "hitId": "3HITOFTHEBATCH"}
    )
    assert page.status_code == 200 and "Submit the test" in page.content.decode()


def test_the_batch_form_defaults_to_our_pages_and_says_mturk_grades_by_a_point_score(client, lead):
    """The new-batch form preselects our pages; choosing MTurk's own grading is the lead's explicit
    choice, and the form says what it is (a point score, no confidence bound)."""
    dataset = demo_dataset()
    client.force_login(lead)
    page = client.get(f"/datasets/{dataset.pk}/batches/new")
    assert page.status_code == 200
    assert page.context["form"]["mturk_qualification_mode"].value() == "our_pages"
    body = page.content.decode()
    assert "a point score, no confidence bound" in body and "fails workers on a point score alone" in body
