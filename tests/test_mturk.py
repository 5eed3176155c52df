"""The MTurk provider against botocore's Stubber, which checks every request against the
real service model; assert_no_pending_responses proves each expected call happened."""

from datetime import UTC, datetime
from decimal import Decimal
from xml.etree import ElementTree as ET

import pytest
from botocore.stub import ANY, Stubber

from hits.models import Assignment, Batch, LedgerEntry, ProviderCall, Worker
from hits.providers.mturk import client as mturk_client
from hits.providers.mturk import provider as mturk
from hits.providers.mturk import questions as mturk_xml
from hits.providers.mturk.config import config as mturk_config
from hits.providers.mturk.sync import sync_batch
from hits.selectors.figures import batch_spend
from hits.services import batches, review
from hits.services.qualification import build_test
from hits.services.submission import submit_assignment

from .crowd_data import all_answers, batch_of, demo_dataset

pytestmark = pytest.mark.django_db
HIT_IDS = [f"{i:030d}".replace("0", "H", 2) for i in range(1, 60)]  # 30-character ids
GRADED_BY_MTURK = {"qualification_mode": "mturk_test"}  # the lead's explicit choice (not the default)


@pytest.fixture
def stub(monkeypatch, settings):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings.PUBLIC_BASE_URL = "https://acu.example.org"
    client = mturk_client.make_client(True)
    stubber = Stubber(client)
    monkeypatch.setattr(mturk, "CLIENT_FACTORY", lambda sandbox: client)
    with stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def mturk_batch(systems=("abs_bart_out",), **kwargs):
    dataset = kwargs.pop("dataset", None) or demo_dataset()
    batch = batch_of(dataset, provider="mturk", systems=list(dataset.systems.filter(name__in=systems)), **kwargs)
    return batch


def expect_balance(stub, amount="1000.00"):
    stub.add_response("get_account_balance", {"AvailableBalance": amount}, {})


def expect_types(stub, batch, qual_id=None):
    used = [b for b in batch.buckets.all() if batches.bucket_hits(batch, b).exists()]
    for i, bucket in enumerate(used):
        stub.add_response(
            "create_hit_type",
            {"HITTypeId": f"TYPE{i}"},
            {
                "Title": batch.title,
                "Description": batch.description,
                "Keywords": ANY,
                "Reward": f"{bucket.reward:.2f}",
                "AssignmentDurationInSeconds": 3600,
                "AutoApprovalDelayInSeconds": 72 * 3600,
                "QualificationRequirements": mturk.requirements(batch, qual_id),
            },
        )


def expect_hits(stub, hits, ids):
    for hit, hit_id in zip(hits, ids, strict=False):
        stub.add_response(
            "create_hit_with_hit_type",
            {"HIT": {"HITId": hit_id, "HITTypeId": "TYPE0"}},
            {
                "HITTypeId": ANY,
                "MaxAssignments": 3,
                "LifetimeInSeconds": 7 * 24 * 3600,
                "Question": mturk_xml.external_question("https://acu.example.org/mturk/task/"),
                "RequesterAnnotation": f"acu-batch:{hit.batch_id};hit:{hit.pk}",
                "UniqueRequestToken": mturk.request_token("hit", hit.pk),
            },
        )


def test_publish_creates_types_and_hits(stub):
    batch = mturk_batch()
    hits = list(batch.hits.order_by("pk"))
    expect_balance(stub)
    expect_types(stub, batch)
    expect_hits(stub, hits, HIT_IDS)
    batch = batches.publish_batch(batch)
    assert batch.status == Batch.Status.PUBLISHED
    assert [h.external_id for h in batch.hits.order_by("pk")] == HIT_IDS[: len(hits)]
    assert batch.buckets.exclude(external_type_id="").count() >= 1
    assert batches.publish_progress(batch) == {"done": 10, "total": 10, "percent": 100}


def test_crash_after_k_hits_then_rerun_creates_only_the_rest(stub):
    batch = mturk_batch()
    hits = list(batch.hits.order_by("pk"))
    expect_balance(stub)
    expect_types(stub, batch)
    expect_hits(stub, hits[:4], HIT_IDS)
    stub.add_client_error(
        "create_hit_with_hit_type",
        service_error_code="ServiceFault",
        service_message="Internal error",
        http_status_code=500,
    )
    with pytest.raises(batches.BatchError, match="publish again to resume"):
        batches.publish_batch(batch)
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHING and "ServiceFault" in batch.last_error
    assert batch.hits.exclude(external_id="").count() == 4
    # Rerun: the HIT types are kept, only the six missing HITs are created.
    expect_balance(stub)
    expect_hits(stub, hits[4:], HIT_IDS[4:])
    batches.publish_batch(batch)
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED and batch.last_error == ""
    assert len(set(batch.hits.values_list("external_id", flat=True))) == 10


def test_token_conflict_reuses_the_hit_mturk_already_made(stub):
    batch = mturk_batch()
    hits = list(batch.hits.order_by("pk"))
    expect_balance(stub)
    expect_types(stub, batch)
    expect_hits(stub, hits[:1], HIT_IDS)
    existing = "3XMQ7ZB1CVJ0EXAMPLEHIT0000AB"[:28] + "CD"
    stub.add_client_error(
        "create_hit_with_hit_type",
        service_error_code="RequestError",
        service_message=f'The HIT with ID "{existing}" already exists. (AWS.MechanicalTurk.HitAlreadyExists)',
    )
    expect_hits(stub, hits[2:], HIT_IDS[2:])
    batches.publish_batch(batch)
    assert batch.hits.get(pk=hits[1].pk).external_id == existing


def test_balance_too_low_refuses_before_creating_anything(stub):
    batch = mturk_batch()
    expect_balance(stub, "1.00")
    with pytest.raises(batches.BatchError, match=r"needs \$\d+\.\d\d .* account has \$1.00"):
        batches.publish_batch(batch)
    assert not batch.hits.exclude(external_id="").exists()


def test_unreachable_endpoint_is_a_clear_message_and_resumable(monkeypatch, settings):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings.PUBLIC_BASE_URL = "https://acu.example.org"
    client = mturk_client.make_client(True, endpoint_url="http://127.0.0.1:9", config=mturk_client.no_retry_config())
    monkeypatch.setattr(mturk, "CLIENT_FACTORY", lambda sandbox: client)
    batch = mturk_batch()
    with pytest.raises(batches.BatchError, match="Could not reach Amazon Mechanical Turk"):
        batches.publish_batch(batch)
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHING and "resumed" in batch.last_error
    assert ProviderCall.objects.filter(ok=False, action="get_account_balance").exists()


def test_qualification_type_with_question_form_and_answer_key(stub):
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.8)
    batch = mturk_batch(dataset=dataset, qualification_test=test, provider_config=GRADED_BY_MTURK)
    items = mturk.qualification_items(test)
    form, key = (
        mturk_xml.qualification_form(test.name, "Mark every fact Present or Not present.", items),
        mturk_xml.answer_key(items),
    )
    expect_balance(stub)
    stub.add_response(
        "create_qualification_type",
        {"QualificationType": {"QualificationTypeId": "QUALTYPE1", "Name": "x"}},
        {
            "Name": f"ACU test (#{test.pk})",
            "Description": ANY,
            "QualificationTypeStatus": "Active",
            "Keywords": ANY,
            "Test": form,
            "AnswerKey": key,
            "TestDurationInSeconds": 1800,
            "RetryDelayInSeconds": 24 * 3600,
        },
    )
    expect_types(stub, batch, "QUALTYPE1")
    expect_hits(stub, list(batch.hits.order_by("pk")), HIT_IDS)
    batches.publish_batch(batch)
    test.refresh_from_db()
    assert test.external_ids == {"mturk-sandbox": "QUALTYPE1"}
    assert mturk.requirements(batch, "QUALTYPE1")[-1]["IntegerValues"] == [80]

    ns = {"q": mturk_xml.QUESTION_FORM_NS, "k": mturk_xml.ANSWER_KEY_NS}
    form_root, key_root = ET.fromstring(form), ET.fromstring(key)
    assert form_root.tag == f"{{{mturk_xml.QUESTION_FORM_NS}}}QuestionForm"
    questions = form_root.findall("q:Question", ns)
    n_acus = sum(len(i["acus"]) for i in items)
    assert len(questions) == n_acus
    assert {q.find("q:QuestionIdentifier", ns).text for q in questions} == {
        k.find("k:QuestionIdentifier", ns).text for k in key_root.findall("k:Question", ns)
    }
    assert key_root.find("k:QualificationValueMapping/k:PercentageMapping/k:MaximumSummedScore", ns).text == str(n_acus)
    # The right option scores 1: check one known answer.
    item = items[0]
    acu_id, truth = next(iter(item["answers"].items()))
    question = next(
        q
        for q in key_root.findall("k:Question", ns)
        if q.find("k:QuestionIdentifier", ns).text == mturk_xml.question_id(item["id"], acu_id)
    )
    scores = {
        o.find("k:SelectionIdentifier", ns).text: o.find("k:AnswerScore", ns).text
        for o in question.findall("k:AnswerOption", ns)
    }
    assert scores == ({"present": "1", "absent": "0"} if truth else {"present": "0", "absent": "1"})


def test_grant_after_our_own_test(stub):
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=1)
    test.external_ids = {"mturk-sandbox": "QUALTYPE2"}
    test.save()
    worker = Worker.objects.create(provider="mturk", external_id="A1WORKER")
    stub.add_response(
        "associate_qualification_with_worker",
        {},
        {"QualificationTypeId": "QUALTYPE2", "WorkerId": "A1WORKER", "IntegerValue": 90, "SendNotification": False},
    )
    mturk.MTurkProvider().grant_qualification(test, worker, 0.9, sandbox=True)


def published(stub):
    batch = mturk_batch()
    hits = list(batch.hits.order_by("pk"))
    expect_balance(stub)
    expect_types(stub, batch)
    expect_hits(stub, hits, HIT_IDS)
    return batches.publish_batch(batch)


def worked(batch, worker_id="A1WORKER", assignment_id="ASSIGN1", hit=None):
    hit = hit or batch.hits.order_by("pk").first()
    worker, _ = Worker.objects.get_or_create(provider="mturk", external_id=worker_id)
    a = Assignment.objects.create(
        hit=hit,
        worker=worker,
        external_id=assignment_id,
        confirmed=False,
        deadline=datetime(2100, 1, 1, tzinfo=UTC),
    )
    submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=all_answers(a))
    a.refresh_from_db()
    return a


def test_sync_pages_through_more_than_100_assignments(stub):
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    mine = worked(batch, "W0000", "A0000", hit)
    records = [
        {
            "AssignmentId": f"A{i:04d}",
            "WorkerId": f"W{i:04d}",
            "HITId": hit.external_id,
            "AssignmentStatus": "Submitted",
        }
        for i in range(120)
    ]
    statuses = ["Submitted", "Approved", "Rejected"]
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": records[:100], "NextToken": "page2", "NumResults": 100},
        {"HITId": hit.external_id, "MaxResults": 100, "AssignmentStatuses": statuses},
    )
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": records[100:], "NumResults": 20},
        {"HITId": hit.external_id, "MaxResults": 100, "AssignmentStatuses": statuses, "NextToken": "page2"},
    )
    for other in batch.hits.order_by("pk")[1:]:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [], "NumResults": 0},
            {"HITId": other.external_id, "MaxResults": 100, "AssignmentStatuses": statuses},
        )
    counts = sync_batch(batch)
    assert counts == {"confirmed": 1, "flagged": 119, "hits": 10}
    mine.refresh_from_db()
    assert mine.confirmed and mine.flag == ""
    flagged = Assignment.objects.filter(hit=hit).exclude(pk=mine.pk)
    assert flagged.count() == 119 and not flagged.filter(confirmed=True).exists()
    assert "no answers were stored" in flagged.first().flag


def test_unconfirmed_submission_does_not_count_until_sync(stub):
    from hits.selectors import counted_judgments

    batch = published(stub)
    a = worked(batch)
    assert not counted_judgments(batch.dataset, batch).exists()
    Assignment.objects.filter(pk=a.pk).update(confirmed=True)
    assert counted_judgments(batch.dataset, batch).count() == a.judgments.count()


def test_a_bonus_retried_after_a_day_is_not_paid_twice(stub):
    """MTurk deduplicates a bonus's UniqueRequestToken for 24 hours only: a retry, a day after a call
    whose answer was lost (it paid at MTurk, nothing reached the ledger), paid the worker again. The
    Reason carries a reference of the form's token; a bonus already paid with it is recorded, not sent."""
    batch = published(stub)
    first = worked(batch, "A1W", "ASG1", batch.hits.order_by("pk").first())
    stub.add_response("approve_assignment", {}, {"AssignmentId": "ASG1"})
    review.approve(assignment_id=first.pk)
    digest = __import__("hashlib").sha256(b"form-88").hexdigest()[:32]
    earlier = {"WorkerId": "A1W", "AssignmentId": "ASG1", "BonusAmount": "0.50", "GrantTime": datetime(2026, 1, 1)}
    stub.add_response(
        "list_bonus_payments",
        {
            "NumResults": 2,
            "NextToken": "p2",
            "BonusPayments": [{**earlier, "Reason": "Another bonus (ref 0123456789)"}],
        },
        {"AssignmentId": "ASG1", "MaxResults": 100},
    )
    stub.add_response(
        "list_bonus_payments",
        {"NumResults": 1, "BonusPayments": [{**earlier, "Reason": f"Careful work (ref {digest[:10]})"}]},
        {"AssignmentId": "ASG1", "MaxResults": 100, "NextToken": "p2"},
    )
    entry, created = review.send_bonus(assignment_id=first.pk, amount="0.5", reason="Careful work", token="form-88")
    assert created and entry.amount == Decimal("0.50")  # recorded once, no send_bonus call (Stubber holds it)
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1


def test_a_worker_of_both_environments_is_blocked_in_both(stub):
    """block() used the environment of the worker's last batch only: a worker who also worked in the
    sandbox (or the other way round) stayed free to work in production."""
    live = published(stub)
    a = worked(live, "A9W", "ASG9", live.hits.order_by("pk").first())
    trial = mturk_batch(dataset=live.dataset)
    trial.provider_config = {**trial.provider_config, "sandbox": not mturk_config(live)["sandbox"]}
    trial.save(update_fields=["provider_config"])
    Assignment.objects.create(hit=trial.hits.order_by("pk").first(), worker=a.worker, external_id="ASG10")
    for _ in range(2):
        stub.add_response("create_worker_block", {}, {"WorkerId": "A9W", "Reason": "Random answers"})
    review.block_worker(worker_id=a.worker_id, reason="Random answers")
    for batch in (live, trial):
        assert batch.provider_calls.filter(action="create_worker_block", ok=True).count() == 1


def test_approve_reject_bonus_retry_block_and_expire(stub):
    batch = published(stub)
    hits = list(batch.hits.order_by("pk"))
    first, second = worked(batch, "A1W", "ASG1", hits[0]), worked(batch, "A2W", "ASG2", hits[1])

    stub.add_response("approve_assignment", {}, {"AssignmentId": "ASG1"})
    review.approve(assignment_id=first.pk)
    fee = LedgerEntry.objects.get(kind="fee", assignment=first).amount
    assert fee == max(Decimal("0.01"), (first.hit.reward * Decimal("0.2")).quantize(Decimal("0.01")))

    stub.add_response(
        "reject_assignment", {}, {"AssignmentId": "ASG2", "RequesterFeedback": "Answers contradict the summary."}
    )
    review.reject(assignment_id=second.pk, feedback="Answers contradict the summary.")

    digest = __import__("hashlib").sha256(b"form-77").hexdigest()[:32]
    bonus_params = {
        "WorkerId": "A1W",
        "AssignmentId": "ASG1",
        "BonusAmount": "0.50",
        "Reason": f"Careful work (ref {digest[:10]})",
        "UniqueRequestToken": mturk.request_token("bonus", digest),
    }
    paid = {"AssignmentId": "ASG1", "MaxResults": 100}
    stub.add_response("list_bonus_payments", {"NumResults": 0, "BonusPayments": []}, paid)
    stub.add_client_error(
        "send_bonus", service_error_code="ServiceFault", service_message="Try again", expected_params=bonus_params
    )
    with pytest.raises(review.ReviewError):
        review.send_bonus(assignment_id=first.pk, amount="0.5", reason="Careful work", token="form-77")
    assert not LedgerEntry.objects.filter(kind="bonus").exists()
    stub.add_response("list_bonus_payments", {"NumResults": 0, "BonusPayments": []}, paid)
    stub.add_response("send_bonus", {}, bonus_params)  # the retry carries the same token
    review.send_bonus(assignment_id=first.pk, amount="0.5", reason="Careful work", token="form-77")
    review.send_bonus(assignment_id=first.pk, amount="0.5", reason="Careful work", token="form-77")  # no call
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1

    stub.add_response("create_worker_block", {}, {"WorkerId": "A2W", "Reason": "Random answers"})
    review.block_worker(worker_id=second.worker_id, reason="Random answers")

    for hit in hits:
        stub.add_response(
            "update_expiration_for_hit",
            {},
            {"HITId": hit.external_id, "ExpireAt": datetime(2015, 1, 1, tzinfo=UTC)},
        )
    batches.stop_batch(batch)
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.STOPPED


def test_approving_twice_at_mturk_is_success_when_mturk_says_approved(stub):
    batch = published(stub)
    a = worked(batch)
    stub.add_client_error(
        "approve_assignment",
        service_error_code="RequestError",
        service_message="This operation can be called with a status of: Submitted",
    )
    stub.add_response(
        "get_assignment",
        {"Assignment": {"AssignmentId": "ASSIGN1", "AssignmentStatus": "Approved"}},
        {"AssignmentId": "ASSIGN1"},
    )
    review.approve(assignment_id=a.pk)
    assert Assignment.objects.get(pk=a.pk).status == "approved"


def test_a_rejection_mturk_made_though_its_answer_was_lost_is_success(stub):
    """botocore retries a call whose answer was lost (a read timeout, a 5xx); MTurk refuses the
    repeat of a rejection it made ("can be called with a status of: Submitted"). The lead was told
    the rejection failed though the worker was rejected at MTurk; approve already read the
    assignment back, reject now does too."""
    batch = published(stub)
    a = worked(batch)
    feedback = "Answers contradict the summary."
    stub.add_client_error(
        "reject_assignment",
        service_error_code="RequestError",
        service_message="This operation can be called with a status of: Submitted",
        expected_params={"AssignmentId": "ASSIGN1", "RequesterFeedback": feedback},
    )
    stub.add_response(
        "get_assignment",
        {"Assignment": {"AssignmentId": "ASSIGN1", "AssignmentStatus": "Rejected"}},
        {"AssignmentId": "ASSIGN1"},
    )
    review.reject(assignment_id=a.pk, feedback=feedback)
    assert Assignment.objects.get(pk=a.pk).status == Assignment.Status.REJECTED

    b = worked(batch, "A2W", "ASSIGN2", batch.hits.order_by("pk")[1])
    stub.add_client_error("reject_assignment", service_error_code="RequestError", service_message="Not yours")
    stub.add_response(
        "get_assignment",
        {"Assignment": {"AssignmentId": "ASSIGN2", "AssignmentStatus": "Submitted"}},
        {"AssignmentId": "ASSIGN2"},
    )
    with pytest.raises(review.ReviewError, match="Not yours"):
        review.reject(assignment_id=b.pk, feedback=feedback)
    assert Assignment.objects.get(pk=b.pk).status == Assignment.Status.SUBMITTED


# ---- our own formatting, which the Stubber does not check ----------------------------


@pytest.mark.parametrize(
    "amount, text", [("0.5", "0.50"), (Decimal("12"), "12.00"), ("0.015", "0.02"), ("3.999", "4.00")]
)
def test_reward_strings_match_mturks_pattern(amount, text):
    import re

    from hits.money import money_string

    assert money_string(amount) == text
    assert re.fullmatch(r"[0-9]+(\.)?[0-9]{0,2}", money_string(amount))


def test_tokens_are_at_most_64_characters(settings):
    settings.SECRET_KEY = "k" * 80
    for kind, key in [("hit", 1), ("hit", 10**18), ("bonus", "x" * 200)]:
        assert 1 <= len(mturk.request_token(kind, key)) <= 64
    assert mturk.request_token("hit", 5) == mturk.request_token("hit", 5)  # derived, not random
    assert mturk.request_token("hit", 5) != mturk.request_token("hit", 6)


def test_feedback_limit_and_question_size():
    with pytest.raises(ValueError, match="65535"):
        mturk_xml.external_question("https://example.org/" + "a" * 70000)
    with pytest.raises(ValueError, match="HTTPS"):
        mturk_xml.external_question("http://example.org/task/")
    xml = mturk_xml.external_question("https://example.org/task/?a=1&b=2")
    assert "&amp;" in xml and len(xml.encode()) <= 65535
    assert ET.fromstring(xml).find(f"{{{mturk_xml.EXTERNAL_QUESTION_NS}}}FrameHeight").text == "0"
    assert review.MAX_FEEDBACK == 1024


def test_fees_follow_mturk_rules():
    provider = mturk.MTurkProvider()
    assert provider.fee(Decimal("0.15"), 3) == Decimal("0.03")
    assert provider.fee(Decimal("0.04"), 3) == Decimal("0.01")  # at least a cent
    assert provider.fee(Decimal("1.00"), 10) == Decimal("0.40")  # 10+ assignments: 20% more


def test_lead_sees_a_clear_message_when_mturk_is_unreachable(client, lead, monkeypatch, settings, eager_celery):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings.PUBLIC_BASE_URL = "https://acu.example.org"
    client_ = mturk_client.make_client(True, endpoint_url="http://127.0.0.1:9", config=mturk_client.no_retry_config())
    monkeypatch.setattr(mturk, "CLIENT_FACTORY", lambda sandbox: client_)
    batch = mturk_batch()
    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert "Balance unavailable: Could not reach Amazon Mechanical Turk" in page
    response = client.post(f"/batches/{batch.pk}/publish", follow=True)
    text = response.content.decode()
    assert response.status_code == 200
    assert "Could not reach Amazon Mechanical Turk" in text and "publish again to resume" in text
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHING and not batch.hits.exclude(external_id="").exists()
    assert "Press Publish to resume" in client.get(f"/batches/{batch.pk}/").content.decode()


# The qualification page on our own pages: tests/test_mturk_identity.py (identity proven by MTurk).


def sync_one(stub, batch, hit, records):
    statuses = ["Submitted", "Approved", "Rejected"]
    for h in batch.hits.order_by("pk"):
        mine = records if h.pk == hit.pk else []
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": mine, "NumResults": len(mine)},
            {"HITId": h.external_id, "MaxResults": 100, "AssignmentStatuses": statuses},
        )
    return sync_batch(batch)


def test_an_approval_made_at_mturk_reaches_the_ledger_once(stub):
    """MTurk approves (auto-approval, or the requester elsewhere) work the lead never approved:
    the sync mirrors it through the review service: one reward row and one fee row, the spend is
    their sum, and syncing again adds nothing (no approve call is sent to MTurk either)."""
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    mine = worked(batch, "WAUTO", "AAUTO", hit)
    record = {"AssignmentId": "AAUTO", "WorkerId": "WAUTO", "HITId": hit.external_id, "AssignmentStatus": "Approved"}
    assert sync_one(stub, batch, hit, [record])["confirmed"] == 1
    mine.refresh_from_db()
    assert mine.status == Assignment.Status.APPROVED and mine.confirmed
    rows = LedgerEntry.objects.filter(assignment=mine)
    assert sorted(rows.values_list("kind", flat=True)) == ["fee", "reward"]
    reward, fee = rows.get(kind="reward").amount, rows.get(kind="fee").amount
    assert reward == hit.reward and fee == mturk.MTurkProvider().fee(hit.reward, batch.assignments_per_hit) > 0
    assert batch_spend(batch)["total"] == reward + fee
    sync_one(stub, batch, hit, [record])  # again: nothing more
    assert LedgerEntry.objects.filter(batch=batch).count() == 2
    review.approve(assignment_id=mine.pk)  # a later approve by the lead pays nothing more, calls nothing
    assert LedgerEntry.objects.filter(batch=batch).count() == 2


def test_a_rejection_made_at_mturk_is_mirrored_without_pay(stub):
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    mine = worked(batch, "WREJ", "AREJ", hit)
    record = {
        "AssignmentId": "AREJ",
        "WorkerId": "WREJ",
        "HITId": hit.external_id,
        "AssignmentStatus": "Rejected",
        "RequesterFeedback": "Answers do not match the summary.",
    }
    sync_one(stub, batch, hit, [record])
    mine.refresh_from_db()
    assert mine.status == Assignment.Status.REJECTED and mine.feedback == "Answers do not match the summary."
    assert not LedgerEntry.objects.filter(batch=batch).exists()


def test_a_refused_approval_is_listed_on_the_batch_page_and_pays_nothing(stub):
    """MTurk refuses an approval (the account is short of funds): the lead gets the message, the
    assignment stays submitted with no ledger row, and the refused call stays in the batch's
    provider calls (the batch page's list), as a refused publish does; so does a refused block."""
    batch = published(stub)
    a = worked(batch)
    stub.add_client_error("approve_assignment", service_error_code="RequestError", service_message="Insufficient funds")
    stub.add_response(
        "get_assignment",
        {"Assignment": {"AssignmentId": "ASSIGN1", "AssignmentStatus": "Submitted"}},
        {"AssignmentId": "ASSIGN1"},
    )
    with pytest.raises(review.ReviewError, match="Insufficient funds"):
        review.approve(assignment_id=a.pk)
    assert Assignment.objects.get(pk=a.pk).status == "submitted" and not LedgerEntry.objects.exists()
    refused = batch.provider_calls.filter(action="approve_assignment", ok=False)
    assert refused.count() == 1 and "Insufficient funds" in refused.get().error
    stub.add_client_error("create_worker_block", service_error_code="ServiceFault", service_message="Try later")
    with pytest.raises(review.ReviewError, match="Try later"):
        review.block_worker(worker_id=a.worker_id, reason="Random answers")
    assert batch.provider_calls.filter(action="create_worker_block", ok=False).count() == 1
    assert not Worker.objects.get(pk=a.worker_id).blocked


def test_a_bonus_paid_whose_ledger_row_was_lost_is_recorded_on_retry_even_past_the_budget(stub):
    """MTurk paid the bonus, our transaction was then lost (no ledger row), and meanwhile the batch's
    spend reached its budget: the retry was refused over the budget, so money paid was never recorded.
    A bonus the provider shows paid is recorded, never refused."""
    batch = published(stub)
    first = worked(batch, "A1W", "ASG1", batch.hits.order_by("pk").first())
    stub.add_response("approve_assignment", {}, {"AssignmentId": "ASG1"})
    review.approve(assignment_id=first.pk)
    batch.budget = batch_spend(batch)["total"]  # no room left
    batch.save(update_fields=["budget"])
    digest = __import__("hashlib").sha256(b"form-99").hexdigest()[:10]
    paid = {"WorkerId": "A1W", "AssignmentId": "ASG1", "BonusAmount": "0.50", "GrantTime": datetime(2026, 1, 1)}
    for _ in range(2):  # the budget asks whether it was paid, then the bonus call itself does
        stub.add_response(
            "list_bonus_payments",
            {"NumResults": 1, "BonusPayments": [{**paid, "Reason": f"Careful work (ref {digest})"}]},
            {"AssignmentId": "ASG1", "MaxResults": 100},
        )
    entry, created = review.send_bonus(assignment_id=first.pk, amount="0.5", reason="Careful work", token="form-99")
    assert created and entry.amount == Decimal("0.50")  # recorded, no send_bonus call (Stubber holds it)
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1
