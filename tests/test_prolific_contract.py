"""Every Prolific call checked against the request and response shapes of Prolific's API
documentation (docs.prolific.com), with `responses` mocking only the HTTP transport: any
request not expected here fails, and every expected request must happen."""

import base64
import hashlib
import hmac
import json
import re
import time
from datetime import timedelta
from decimal import Decimal

import pytest
import responses
from django.utils import timezone
from responses import matchers

from hits.batch_fields import BatchSpec
from hits.models import Assignment, Batch, LedgerEntry, ProviderCall, Worker
from hits.money import Bucket
from hits.provider_interface import ProviderError, get_provider
from hits.providers.prolific import bonuses as prolific_bonuses
from hits.providers.prolific import client as prolific_client
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.client import ProlificClient
from hits.providers.prolific.models import ProlificBonus, ProlificGroupMember, ProlificSession, ProlificStudy
from hits.providers.prolific.sessions import start_session
from hits.services import batches, review
from hits.services.qualification import answer_key, build_test
from hits.services.submission import submit_assignment

from .crowd_data import all_answers, demo_dataset

pytestmark = pytest.mark.django_db

API = "https://api.prolific.com/api/v1/"
TOKEN = "test-token-123"
SITE = "https://acu.example.org"
AUTH = matchers.header_matcher({"Authorization": f"Token {TOKEN}"})
SECRET = "hook-secret-abc"
STUDY_KEYS = {  # the create-study body fields documented by Prolific that we may send
    "name",
    "internal_name",
    "description",
    "external_study_url",
    "prolific_id_option",
    "completion_codes",
    "total_available_places",
    "estimated_completion_time",
    "maximum_allowed_time",
    "reward",
    "device_compatibility",
    "peripheral_requirements",
    "filters",
    "project",
    "study_labels",
    "submissions_config",
}


@pytest.fixture
def api(settings, monkeypatch):
    settings.PROLIFIC_API_TOKEN = TOKEN
    settings.PROLIFIC_API_URL = API
    settings.PUBLIC_BASE_URL = SITE
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    monkeypatch.setattr(prolific_client, "BACKOFF", 0)  # retries without sleeping in tests
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock
        unexpected = [c.request.url for c in mock.calls if "doesn't match any registered mock" in str(c.response)]
        assert unexpected == [], f"unexpected requests to Prolific: {unexpected}"


def body(request) -> dict:
    return json.loads(request.body or b"{}")


def study_request(**expected):
    """A matcher: the body has the documented shape of a study (types, enums, placeholders) and
    the given values."""

    def match(request):
        data = body(request)
        problems = [f"unknown field {k}" for k in set(data) - STUDY_KEYS]
        for key in (
            "name",
            "description",
            "external_study_url",
            "completion_codes",
            "total_available_places",
            "estimated_completion_time",
            "reward",
        ):
            if key not in data:
                problems.append(f"missing {key}")
        url = data.get("external_study_url", "")
        for placeholder in ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}"):
            if placeholder not in url:
                problems.append(f"URL lacks {placeholder}")
        if data.get("prolific_id_option") not in ("question", "url_parameters", "not_required"):
            problems.append("prolific_id_option")
        for name in ("total_available_places", "estimated_completion_time", "reward"):
            if not isinstance(data.get(name), int) or data[name] < 1:
                problems.append(f"{name} must be a positive integer (reward in cents)")
        if not set(data.get("device_compatibility", [])) <= {"desktop", "tablet", "mobile"}:
            problems.append("device_compatibility")
        for code in data.get("completion_codes", []):
            if set(code) != {"code", "code_type", "actions"} or not all("action" in a for a in code["actions"]):
                problems.append(f"completion code {code}")
        for f in data.get("filters", []):
            if "filter_id" not in f or not ({"selected_values", "selected_range"} & set(f)):
                problems.append(f"filter {f}")
        problems += [f"{k}={data.get(k)!r}, expected {v!r}" for k, v in expected.items() if data.get(k) != v]
        return not problems, "; ".join(problems)

    return match


def study_json(study_id, status="UNPUBLISHED", **extra) -> dict:
    """A study as Prolific returns it (the fields we read, and some we do not)."""
    return {
        "id": study_id,
        "name": "Check which facts a summary contains",
        "internal_name": "acu",
        "status": status,
        "total_available_places": 10,
        "places_taken": 0,
        "reward": 100,
        "estimated_completion_time": 5,
        "date_created": "2026-11-30T09:00:00Z",
        "currency_code": "USD",
        **extra,
    }


def prolific_batch(dataset=None, systems=("abs_bart_out",), **config):
    dataset = dataset or demo_dataset()
    return batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(provider="prolific", assignments=3, provider_config={"hits_per_session": 3, **config}),
        systems=list(dataset.systems.filter(name__in=systems)),
    )


def expect_create(api, study_id="STUDY1", **expected):
    api.post(API + "studies/", status=201, json=study_json(study_id), match=[AUTH, study_request(**expected)])


def expect_transition(api, study_id, action, status):
    api.post(
        API + f"studies/{study_id}/transition/",
        json=study_json(study_id, status),
        match=[AUTH, matchers.json_params_matcher({"action": action}, strict_match=True)],
    )


def published(api, **config) -> Batch:
    batch = prolific_batch(**config)
    expect_create(api)
    expect_transition(api, "STUDY1", "PUBLISH", "ACTIVE")
    return batches.publish_batch(batch)


def sign(payload: bytes, secret=SECRET, timestamp=None) -> dict:
    timestamp = str(int(time.time())) if timestamp is None else timestamp
    digest = base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + payload, hashlib.sha256).digest()).decode()
    return {"HTTP_X_PROLIFIC_REQUEST_TIMESTAMP": timestamp, "HTTP_X_PROLIFIC_REQUEST_SIGNATURE": digest}


def worked_session(batch, pid, session_id, answer=True):
    """A participant's session with every HIT answered through the submission service."""
    session = start_session(batch=batch, participant_id=pid, study_id="STUDY1", session_id=session_id)
    for a in session.assignments():
        submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=all_answers(a, answer))
    return session


# ---- studies ---------------------------------------------------------------------------


def test_cost_then_draft_then_publish(api):
    batch = prolific_batch()
    provider = get_provider("prolific")
    hits = batch.hits.count()
    mean = sum(batch.hits.values_list("reward", flat=True)) / hits
    per_hit_cents = int((mean * 100).to_integral_value(rounding="ROUND_CEILING"))
    reward, places = per_hit_cents * 3, -(-hits * 3 // 3)
    api.post(
        API + "study-cost-calculator/",
        json={"total_cost": 1840.0},
        match=[
            AUTH,
            matchers.json_params_matcher({"reward": reward, "total_available_places": places}, strict_match=True),
        ],
    )
    cost = provider.cost(batch)
    assert cost["total"] == Decimal("18.40") and cost["error"] == ""

    expect_create(
        api,
        name=batch.title,
        internal_name=f"acu-batch-{batch.pk}",
        reward=reward,
        total_available_places=places,
        prolific_id_option="url_parameters",
        device_compatibility=["desktop"],
        external_study_url=f"{SITE}/prolific/batch/{batch.pk}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        filters=[
            {"filter_id": "approval_rate", "selected_range": {"lower": 95, "upper": 100}},
            {"filter_id": "fluent-languages", "selected_values": ["19"]},
        ],
    )
    main, plan, created = provider.create_draft(batch)
    assert created and main.study_id == "STUDY1" and main.status == "UNPUBLISHED"
    assert api.calls[-1].request.headers["Content-Type"] == "application/json"
    sent = body(api.calls[-1].request)
    assert sent["completion_codes"] == [
        {"code": main.completion_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}
    ]
    assert set(batch.hits.values_list("reward", flat=True)) == {Decimal(per_hit_cents) / 100}  # priced alike

    # Publishing a draft made earlier reads it back and brings it up to date first.
    api.get(API + "studies/STUDY1/", json=study_json("STUDY1"), match=[AUTH])
    api.patch(
        API + "studies/STUDY1/",
        json=study_json("STUDY1"),
        match=[
            AUTH,
            matchers.json_params_matcher(
                {
                    "reward": reward,
                    "total_available_places": places,
                    "estimated_completion_time": plan.estimated_minutes,
                    "filters": sent["filters"],
                },
                strict_match=True,
            ),
        ],
    )
    expect_transition(api, "STUDY1", "PUBLISH", "ACTIVE")
    batch = batches.publish_batch(batch)
    assert batch.status == Batch.Status.PUBLISHED and batch.last_error == ""
    assert ProlificStudy.objects.get(batch=batch, kind="main").status == "ACTIVE"
    assert ProviderCall.objects.filter(batch=batch, ok=True).count() == 5


def test_a_reward_below_prolifics_minimum_is_refused_before_any_call(api):
    batch = prolific_batch()
    batches.set_buckets(batch, [Bucket(1, None, Decimal("0.01"))])
    with pytest.raises(batches.BatchError, match=r"below Prolific's minimum of \$8\.00/hour"):
        batches.publish_batch(batch)
    assert len(api.calls) == 0 and not ProlificStudy.objects.exclude(study_id="").exists()
    assert "minimum" in Batch.objects.get(pk=batch.pk).last_error


def test_publishing_resumes_after_a_failed_publish(api):
    batch = prolific_batch()
    expect_create(api)
    api.post(
        API + "studies/STUDY1/transition/", status=500, json={"error": {"detail": "boom"}}
    )  # sent once, not retried
    with pytest.raises(batches.BatchError, match=r"server error \(500\).*publish again to resume"):
        batches.publish_batch(batch)
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.PUBLISHING
    api.get(API + "studies/STUDY1/", json=study_json("STUDY1", "ACTIVE"))  # it did publish after all
    assert batches.publish_batch(batch).status == Batch.Status.PUBLISHED  # no second create, no second PUBLISH


def test_pause_resume_add_places_and_stop(api):
    batch = published(api)
    provider = get_provider("prolific")
    expect_transition(api, "STUDY1", "PAUSE", "PAUSED")
    provider.pause(batch)
    expect_transition(api, "STUDY1", "START", "ACTIVE")
    provider.resume(batch)
    places = ProlificStudy.objects.get(batch=batch).places
    api.patch(
        API + "studies/STUDY1/",
        json=study_json("STUDY1", "ACTIVE", total_available_places=places + 4),
        match=[matchers.json_params_matcher({"total_available_places": places + 4}, strict_match=True)],
    )
    assert provider.add_places(batch, 4) == places + 4
    # Stopping twice: Prolific refuses the repeat, and reading the study shows it is stopped.
    expect_transition(api, "STUDY1", "STOP", "COMPLETED")
    batches.stop_batch(batch)
    assert ProlificStudy.objects.get(batch=batch).status == "COMPLETED"
    provider.stop(batch)  # nothing left to do: no request


# ---- transport -------------------------------------------------------------------------


def test_retries_idempotent_calls_on_429_and_5xx_but_never_a_create(api):
    client = ProlificClient()
    api.get(API + "studies/500000000000000000000009/", status=503)
    api.get(API + "studies/500000000000000000000009/", status=429, headers={"Retry-After": "0"})
    api.get(API + "studies/500000000000000000000009/", json=study_json("500000000000000000000009", "ACTIVE"))
    assert client.get_study("500000000000000000000009")["status"] == "ACTIVE" and len(api.calls) == 3
    api.post(API + "studies/", status=502)
    with pytest.raises(ProviderError, match=r"server error \(502\) on POST studies/"):
        client.create_study({"name": "x"})
    assert len(api.calls) == 4  # one attempt only: a retried create could make two studies


def test_errors_become_clear_messages(api, settings):
    client = ProlificClient()
    api.get(API + "studies/500000000000000000000001/", status=401, json={"error": {"detail": "Invalid token."}})
    with pytest.raises(ProviderError, match="refused the API token"):
        client.get_study("500000000000000000000001")
    api.get(API + "studies/500000000000000000000002/", status=400, json={"error": {"detail": {"reward": ["too low"]}}})
    with pytest.raises(
        ProviderError, match=r"refused GET studies/500000000000000000000002/ \(400\): reward: \['too low'\]"
    ):
        client.get_study("500000000000000000000002")
    api.get(API + "studies/500000000000000000000003/", body=responses.ConnectionError("Name or service not known"))
    with pytest.raises(ProviderError, match="Could not reach Prolific"):
        client.get_study("500000000000000000000003")
    settings.PROLIFIC_API_TOKEN = ""
    with pytest.raises(ProviderError, match="set PROLIFIC_API_TOKEN"):
        ProlificClient()


# ---- submissions -----------------------------------------------------------------------


def submission(sid, pid, status) -> dict:
    return {
        "id": sid,
        "participant_id": pid,
        "status": status,
        "started_at": "2026-11-30T09:10:00Z",
        "completed_at": None,
        "study_code": "",
        "reward": 100,
    }


def test_sync_pages_through_submissions_and_confirms_only_the_reported_participant(api):
    batch = published(api)
    done = worked_session(batch, "PID_A", "f2ee9638b74f8fb4ecaa9d60")
    returned = start_session(
        batch=batch, participant_id="PID_B", study_id="STUDY1", session_id="385523179934c375024d6720"
    )
    wrong = worked_session(batch, "PID_C", "11df475341b84b3bd9f09edf")
    api.get(API + "studies/STUDY1/", json=study_json("STUDY1", "ACTIVE"))
    page2 = API + "submissions/?study=STUDY1&page=2&page_size=100"
    api.get(
        API + "submissions/",
        match=[AUTH, matchers.query_param_matcher({"study": "STUDY1", "page_size": "100"})],
        json={
            "results": [
                submission("f2ee9638b74f8fb4ecaa9d60", "PID_A", "AWAITING REVIEW"),
                submission("385523179934c375024d6720", "PID_B", "RETURNED"),
            ],
            "_links": {"next": {"href": page2, "title": "Next"}, "previous": {"href": None}},
            "meta": {"count": 4},
        },
    )
    api.get(
        API + "submissions/",
        match=[matchers.query_param_matcher({"study": "STUDY1", "page": "2", "page_size": "100"})],
        json={
            "results": [
                submission("11df475341b84b3bd9f09edf", "SOMEONE_ELSE", "AWAITING REVIEW"),
                submission("c00fbec0798a0812089b3af4", "PID_X", "AWAITING REVIEW"),
            ],
            "_links": {"next": {"href": None}, "previous": {"href": API + "submissions/?study=STUDY1"}},
            "meta": {"count": 4},
        },
    )
    counts = prolific_sync.sync_batch(batch)
    assert counts == {"submissions": 4, "confirmed": 1, "released": 1, "flagged": 2, "in progress": 0, "ignored": 0}
    assert all(a.confirmed for a in done.assignments()) and ProlificSession.objects.get(pk=done.pk).confirmed
    assert not returned.assignments().filter(status=Assignment.Status.ASSIGNED).exists()  # released
    assert not any(a.confirmed for a in wrong.assignments())
    assert "not PID_C" in ProlificSession.objects.get(pk=wrong.pk).flag
    assert "no session was started here" in ProlificSession.objects.get(session_id="c00fbec0798a0812089b3af4").flag


def reviewable(api, batch, *sessions):
    """Mark the sessions as Prolific reports them: completed, awaiting review."""
    for s in sessions:
        prolific_sync.apply_submission(batch, s.session_id, s.worker.external_id, "AWAITING REVIEW")
        s.refresh_from_db()


def test_bulk_approve_pays_each_hit_once(api):
    batch = published(api)
    one, two = (
        worked_session(batch, "PID1", "5ab000000000000000000001"),
        worked_session(batch, "PID2", "5ab000000000000000000002"),
    )
    reviewable(api, batch, one, two)
    api.post(
        API + "submissions/bulk-approve/",
        json={"message": "The request has been scheduled."},
        match=[
            AUTH,
            matchers.json_params_matcher(
                {"submission_ids": ["5ab000000000000000000001", "5ab000000000000000000002"]},
                strict_match=True,
            ),
        ],
    )
    done, errors = prolific_sync.approve_sessions(batch, [one.pk, two.pk])
    assert (done, errors) == (2, [])
    assert (
        Assignment.objects.filter(
            external_id__in=["5ab000000000000000000001", "5ab000000000000000000002"], status="approved"
        ).count()
        == 6
    )
    rewards = LedgerEntry.objects.filter(batch=batch, kind="reward")
    assert rewards.count() == 6
    study = ProlificStudy.objects.get(batch=batch)
    assert sum(e.amount for e in rewards) == Decimal(study.reward_cents * 2) / 100  # ledger = Prolific's rewards
    assert prolific_sync.approve_sessions(batch, [one.pk, two.pk]) == (2, [])  # again: no call, nothing paid twice
    assert LedgerEntry.objects.filter(batch=batch, kind="reward").count() == 6


def test_bulk_approve_sends_at_most_the_recommended_ids_a_call_and_keeps_the_parts_approved(api, monkeypatch):
    """Prolific recommends at most 1,000 ids a bulk call (here 1, patched): one call a part; a part
    Prolific refuses stops there, the parts before it stay approved and paid, and approving again
    sends only what is left."""
    monkeypatch.setattr(prolific_sync, "BULK_APPROVE_MAX", 1)
    batch = published(api)
    one, two = (
        worked_session(batch, "PID1", "5ab000000000000000000001"),
        worked_session(batch, "PID2", "5ab000000000000000000002"),
    )
    reviewable(api, batch, one, two)
    url = API + "submissions/bulk-approve/"
    first = matchers.json_params_matcher({"submission_ids": ["5ab000000000000000000001"]}, strict_match=True)
    second = matchers.json_params_matcher({"submission_ids": ["5ab000000000000000000002"]}, strict_match=True)
    api.post(url, json={"message": "scheduled"}, match=[AUTH, first])
    api.post(url, json={"error": {"detail": "Try again later."}}, status=400, match=[AUTH, second])
    done, errors = prolific_sync.approve_sessions(batch, [one.pk, two.pk])
    assert done == 1 and len(errors) == 1 and "Try again later" in errors[0], errors
    assert LedgerEntry.objects.filter(batch=batch, kind="reward").count() == 3  # the first session's HITs
    api.post(url, json={"message": "scheduled"}, match=[AUTH, second])
    assert prolific_sync.approve_sessions(batch, [one.pk, two.pk]) == (2, [])
    assert LedgerEntry.objects.filter(batch=batch, kind="reward").count() == 6  # each HIT paid once


def test_approving_one_hit_approves_its_submission_once(api):
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    reviewable(api, batch, session)
    first, second, _ = session.assignments().order_by("pk")
    api.post(
        API + "submissions/5ab000000000000000000001/transition/",
        json={"id": "5ab000000000000000000001", "status": "APPROVED"},
        match=[AUTH, matchers.json_params_matcher({"action": "APPROVE"}, strict_match=True)],
    )
    review.approve(assignment_id=first.pk)
    review.approve(assignment_id=second.pk)  # the submission is approved already: no second call
    assert ProlificSession.objects.get(pk=session.pk).decision == "approved"


def test_reject_needs_a_category_and_a_100_character_message(api):
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    reviewable(api, batch, session)
    done, errors = prolific_sync.reject_sessions(batch, [session.pk], category="LOW_EFFORT", message="Too short.")
    assert done == 0 and "at least 100 characters" in errors[0] and len(api.calls) == 2  # publish only
    done, errors = prolific_sync.reject_sessions(batch, [session.pk], category="BAD", message="x" * 120)
    assert done == 0 and "category" in errors[0]
    message = "Your answers marked every fact as present, including facts the summary plainly does not state. " * 2
    api.post(
        API + "submissions/5ab000000000000000000001/transition/",
        json={"id": "5ab000000000000000000001", "status": "REJECTED"},
        match=[
            AUTH,
            matchers.json_params_matcher(
                {"action": "REJECT", "message": message.strip(), "rejection_category": "LOW_EFFORT"}, strict_match=True
            ),
        ],
    )
    assert prolific_sync.reject_sessions(batch, [session.pk], category="LOW_EFFORT", message=message) == (1, [])
    assert set(session.assignments().values_list("status", flat=True)) == {"rejected"}
    assert not LedgerEntry.objects.filter(batch=batch).exists()


# ---- bonuses ---------------------------------------------------------------------------


def test_bulk_bonus_is_set_up_once_and_paid_once(api):
    batch = published(api)
    one, two = (
        worked_session(batch, "PID1", "5ab000000000000000000001"),
        worked_session(batch, "PID2", "5ab000000000000000000002"),
    )
    setup = api.post(
        API + "submissions/bonus-payments/",
        json={"id": "BULK1", "study": "STUDY1", "amount": 150, "fees": 50, "total_amount": 200},
        match=[
            AUTH,
            matchers.json_params_matcher(
                {"study_id": "STUDY1", "csv_bonuses": "5ab000000000000000000001,1.00\n5ab000000000000000000002,0.50\n"},
                strict_match=True,
            ),
        ],
    )
    api.post(API + "bulk-bonus-payments/BULK1/pay/", status=400, json={"error": {"detail": "Insufficient balance"}})
    amounts = {one: Decimal("1"), two: Decimal("0.5")}
    with pytest.raises(ProviderError, match="Insufficient balance"):
        prolific_bonuses.pay_bonus(batch, amounts, "Careful work", key="form:abc")
    assert ProlificBonus.objects.get(key="form:abc").state == "set_up"  # refused: nothing paid, may be paid later
    # Paid on the second try without setting it up again; a third call pays nothing.
    api.post(API + "bulk-bonus-payments/BULK1/pay/", status=202, json={})
    prolific_bonuses.pay_bonus(batch, amounts, "Careful work", key="form:abc")
    prolific_bonuses.pay_bonus(batch, amounts, "Careful work", key="form:abc")
    assert setup.call_count == 1
    bonus = ProlificBonus.objects.get(key="form:abc")
    assert bonus.state == "paid" and bonus.bulk_id == "BULK1" and bonus.total_cents == 200
    assert sorted(LedgerEntry.objects.filter(kind="bonus").values_list("amount", flat=True)) == [
        Decimal("0.50"),
        Decimal("1.00"),
    ]


def test_a_pay_call_with_a_lost_answer_is_never_sent_again(api):
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK2", "total_amount": 66})
    api.post(API + "bulk-bonus-payments/BULK2/pay/", status=503)  # not retried: it is not idempotent
    with pytest.raises(ProviderError, match=r"server error \(503\)"):
        prolific_bonuses.pay_bonus(batch, {session: Decimal("0.50")}, "Thanks", key="form:lost")
    with pytest.raises(ProviderError, match="never sent twice"):
        prolific_bonuses.pay_bonus(batch, {session: Decimal("0.50")}, "Thanks", key="form:lost")
    assert not LedgerEntry.objects.filter(kind="bonus").exists()


# ---- qualification: screening study and participant groups ----------------------------------


def test_screening_study_group_and_passers_added(api, client):
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.8)
    batch = prolific_batch(dataset=dataset, workspace_id="WS1")
    batch.qualification_test = test
    batch.save(update_fields=["qualification_test"])
    api.post(
        API + "participant-groups/",
        status=201,
        json={
            "id": "GROUP1",
            "name": f"ACU batch {batch.pk} qualified",
            "workspace_id": "WS1",
            "participant_count": 0,
            "description": "",
            "is_deleted": False,
            "feeder_studies": [],
        },
        match=[
            AUTH,
            matchers.json_params_matcher(
                {
                    "name": f"ACU batch {batch.pk} qualified",
                    "workspace_id": "WS1",
                    "description": f"Passed the qualification test of batch {batch.pk} ({batch.name}).",
                },
                strict_match=True,
            ),
        ],
    )
    expect_create(
        api,
        "SCREEN1",
        internal_name=f"acu-batch-{batch.pk}-screening",
        filters=[
            {"filter_id": "approval_rate", "selected_range": {"lower": 95, "upper": 100}},
            {"filter_id": "fluent-languages", "selected_values": ["19"]},
            {"filter_id": "participant_group_blocklist", "selected_values": ["GROUP1"]},
        ],
    )
    expect_create(
        api,
        "STUDY1",
        internal_name=f"acu-batch-{batch.pk}",
        filters=[
            {"filter_id": "approval_rate", "selected_range": {"lower": 95, "upper": 100}},
            {"filter_id": "fluent-languages", "selected_values": ["19"]},
            {"filter_id": "participant_group_allowlist", "selected_values": ["GROUP1"]},
        ],
    )
    expect_transition(api, "SCREEN1", "PUBLISH", "ACTIVE")
    expect_transition(api, "STUDY1", "PUBLISH", "ACTIVE")
    batch = batches.publish_batch(batch)
    screening = ProlificStudy.objects.get(batch=batch, kind="screening")
    assert screening.participant_group_id == "GROUP1"
    assert "/prolific/screening/" in body(api.calls[1].request)["external_study_url"]

    url = f"/prolific/screening/{batch.pk}/"
    ids = {"PROLIFIC_PID": "PID9", "STUDY_ID": "SCREEN1", "SESSION_ID": "5c5b00000000000000000009"}
    page = client.get(url, ids)
    assert page.status_code == 200 and "Submit the test" in page.content.decode()
    answers = {
        f"ans-{answer_key(i.pk, acu)}": "1" if truth else "0"
        for i in test.items.all()
        for acu, truth in i.answers.items()
    }
    api.get(
        API + "submissions/5c5b00000000000000000009/",
        match=[AUTH],
        json={
            "id": "5c5b00000000000000000009",
            "study_id": "SCREEN1",
            "participant": "PID9",
            "status": "ACTIVE",
            "started_at": "2026-11-30T09:00:00Z",
        },
    )
    api.post(
        API + "participant-groups/GROUP1/participants/",
        json={"results": [{"participant_id": "PID9", "datetime_created": "2026-11-30T09:05:00Z"}]},
        match=[AUTH, matchers.json_params_matcher({"participant_ids": ["PID9"]}, strict_match=True)],
    )
    result = client.post(url, {**ids, **answers}).content.decode()
    assert "Passed: you will be invited" in result and f"cc={screening.completion_code}" in result
    assert "100%" not in result  # pass or fail only: no score for a panel participant
    member = ProlificGroupMember.objects.get(worker__external_id="PID9")
    assert member.added_at is not None and member.submission_id == "5c5b00000000000000000009"
    # The passer may now start a work session of the main study.
    assert (
        start_session(batch=batch, participant_id="PID9", study_id="STUDY1", session_id="3a1000000000000000000009").size
        == 3
    )
    with pytest.raises(Exception, match="qualification test first"):
        start_session(batch=batch, participant_id="PID10", study_id="STUDY1", session_id="3a1000000000000000000010")


def test_a_group_member_is_added_only_for_their_own_screening_submission(api):
    batch = published(api)
    ProlificStudy.objects.create(
        batch=batch,
        kind="screening",
        study_id="SCREEN1",
        completion_code="C",
        participant_group_id="GROUP1",
        status="ACTIVE",
    )
    worker = Worker.objects.create(provider="prolific", external_id="PID7")
    ProlificGroupMember.objects.create(group_id="GROUP1", worker=worker, batch=batch, submission_id="SOMEONE_ELSES")
    api.get(
        API + "submissions/SOMEONE_ELSES/",
        json={"id": "SOMEONE_ELSES", "study_id": "SCREEN1", "participant": "PID8", "status": "ACTIVE"},
    )
    assert prolific_sync.push_group_members(batch)["added"] == 0
    assert "not this participant's" in ProlificGroupMember.objects.get(worker=worker).error


def test_the_sync_records_each_paid_screening_submission_once_in_the_ledger(api, client, lead):
    """The screening study approves automatically, so Prolific pays every completed screening
    submission: the sync lists the screening study's submissions and records each APPROVED one
    once (its reward and Prolific's fee), a RETURNED one not at all, and a second sync nothing."""
    from django.urls import reverse

    from hits.selectors.figures import batch_spend

    batch = published(api)
    ProlificStudy.objects.create(
        batch=batch, kind="screening", study_id="SCREEN1", completion_code="C", reward_cents=67, status="ACTIVE"
    )
    api.get(API + "studies/STUDY1/", json=study_json("STUDY1", "ACTIVE"))
    api.get(
        API + "submissions/",
        match=[AUTH, matchers.query_param_matcher({"study": "STUDY1", "page_size": "100"})],
        json={"results": [], "_links": {"next": {"href": None}, "previous": {"href": None}}, "meta": {"count": 0}},
    )
    listing = api.get(
        API + "submissions/",
        match=[AUTH, matchers.query_param_matcher({"study": "SCREEN1", "page_size": "100"})],
        json={
            "results": [
                submission("5c5b00000000000000000001", "PID1", "APPROVED"),
                submission("5c5b00000000000000000002", "PID2", "APPROVED"),
                submission("5c5b00000000000000000003", "PID3", "RETURNED"),
            ],
            "_links": {"next": {"href": None}, "previous": {"href": None}},
            "meta": {"count": 3},
        },
    )
    reward, fee = Decimal("0.67"), get_provider("prolific").fee(Decimal("0.67"), batch.assignments_per_hit)
    assert fee == Decimal("0.22")

    counts = prolific_sync.sync_batch(batch)
    rows = LedgerEntry.objects.filter(batch=batch)
    assert sorted((e.kind, e.worker.external_id, e.amount) for e in rows) == [
        ("fee", "PID1", fee),
        ("fee", "PID2", fee),
        ("reward", "PID1", reward),
        ("reward", "PID2", reward),
    ]
    assert all("Screening" in e.note for e in rows.filter(kind="reward"))
    assert not Worker.objects.filter(external_id="PID3").exists()  # returned: nothing paid, nothing recorded
    assert counts["screening paid"] == 2
    assert "2 paid screening submissions recorded" in prolific_sync.summary(counts)

    assert "screening paid" not in prolific_sync.sync_batch(batch)  # the same submissions again
    assert listing.call_count == 2 and LedgerEntry.objects.filter(batch=batch).count() == 4

    spend = batch_spend(batch)
    assert (spend["reward"], spend["fee"], spend["total"]) == (2 * reward, 2 * fee, 2 * (reward + fee))
    client.force_login(lead)
    for name in ("batch_ledger", "batch_detail"):
        page = client.get(reverse(name, args=[batch.pk])).content.decode()
        assert f"${2 * (reward + fee):.2f}" in page, name


# ---- hooks -------------------------------------------------------------------------------


def test_hook_with_a_valid_signature_confirms_and_an_invalid_one_changes_nothing(api, client):
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    payload = json.dumps(
        {
            "resource_id": "5ab000000000000000000001",
            "event_type": "submission.status.change",
            "participant_id": "PID1",
            "status": "AWAITING REVIEW",
        }
    ).encode()
    bad = client.post("/prolific/hooks/", payload, content_type="application/json", **sign(payload, secret="wrong"))
    assert bad.status_code == 403 and not ProlificSession.objects.get(pk=session.pk).confirmed
    stale = client.post(
        "/prolific/hooks/",
        payload,
        content_type="application/json",
        **sign(payload, timestamp=str(int(time.time()) - 3600)),
    )
    assert stale.status_code == 403
    tampered = client.post(
        "/prolific/hooks/", payload.replace(b"PID1", b"PID2"), content_type="application/json", **sign(payload)
    )
    assert tampered.status_code == 403
    good = client.post("/prolific/hooks/", payload, content_type="application/json", **sign(payload))
    assert good.status_code == 200 and good.json() == {"ok": True, "outcome": "confirmed"}
    assert ProlificSession.objects.get(pk=session.pk).confirmed
    assert all(a.confirmed for a in session.assignments())


def test_hook_mirrors_an_approval_made_on_prolific_and_a_study_status(api, client, settings):
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    for status in ("AWAITING REVIEW", "APPROVED"):
        payload = json.dumps(
            {
                "resource_id": "5ab000000000000000000001",
                "event_type": "submission.status.change",
                "participant_id": "PID1",
                "status": status,
            }
        ).encode()
        assert (
            client.post("/prolific/hooks/", payload, content_type="application/json", **sign(payload)).status_code
            == 200
        )
    assert set(session.assignments().values_list("status", flat=True)) == {"approved"}  # no call to Prolific
    assert LedgerEntry.objects.filter(kind="reward", batch=batch).count() == 3
    payload = json.dumps(
        {"resource_id": "STUDY1", "event_type": "study.status.change", "status": "PAUSED", "metadata": {}}
    ).encode()
    assert client.post("/prolific/hooks/", payload, content_type="application/json", **sign(payload)).status_code == 200
    assert ProlificStudy.objects.get(batch=batch).status == "PAUSED"
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    assert client.post("/prolific/hooks/", payload, content_type="application/json", **sign(payload)).status_code == 503


def test_a_partial_session_is_paid_the_whole_study_reward(api):
    batch = published(api)
    ProlificStudy.objects.filter(batch=batch).update(hits_per_session=3)
    session = start_session(
        batch=batch, participant_id="PID1", study_id="STUDY1", session_id="5ab000000000000000000001"
    )
    first = session.assignments().order_by("pk").first()
    session.assignments().exclude(pk=first.pk).delete()  # as if only one HIT had been left for this session
    ProlificSession.objects.filter(pk=session.pk).update(size=1, deadline=timezone.now() + timedelta(hours=1))
    submit_assignment(assignment_id=first.pk, worker_id=first.worker_id, answers=all_answers(first))
    reviewable(api, batch, session)
    api.post(API + "submissions/bulk-approve/", json={})
    assert prolific_sync.approve_sessions(batch, [session.pk]) == (1, [])
    study = ProlificStudy.objects.get(batch=batch)
    paid = sum(LedgerEntry.objects.filter(batch=batch, kind="reward").values_list("amount", flat=True))
    assert paid == Decimal(study.reward_cents) / 100


def test_without_an_https_address_nothing_is_created(api, settings):
    settings.PUBLIC_BASE_URL = "http://localhost:8000"
    batch = prolific_batch()
    with pytest.raises(batches.BatchError, match="Set PUBLIC_BASE_URL to this site's https:// address"):
        batches.publish_batch(batch)
    assert len(api.calls) == 0


def test_a_bonus_from_the_batch_page_whose_pay_answer_was_lost_is_never_sent_again(api):
    """The lead's bonus on one HIT (review.send_bonus, as the batch page sends it): Prolific's pay
    call fails with a 503 (it may have paid); sending the same form again must not pay again."""
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    assignment = session.assignments().first()
    setup = api.post(API + "submissions/bonus-payments/", json={"id": "BULK3", "total_amount": 66})
    pay = api.post(API + "bulk-bonus-payments/BULK3/pay/", status=503)
    form = {"assignment_id": assignment.pk, "amount": "0.50", "reason": "Thanks", "token": "tok-lost"}
    with pytest.raises(review.ReviewError, match=r"server error \(503\)"):
        review.send_bonus(**form)
    assert ProlificBonus.objects.get(key="assignment:tok-lost").state == "sent"
    with pytest.raises(review.ReviewError, match="never sent twice"):
        review.send_bonus(**form)
    assert setup.call_count == 1 and pay.call_count == 1
    assert not LedgerEntry.objects.filter(kind="bonus").exists()


def test_a_gbp_batch_shows_its_money_in_pounds_on_every_page(client, lead):
    """A Prolific account in GBP pays in pounds: the batch page (estimate, spend, budget), the
    ledger and the assignment page read £, as the Prolific section does, never $."""
    from django.urls import reverse

    from hits.ledger import record

    batch = prolific_batch(currency="GBP")
    batch.budget = Decimal("50.00")
    batch.save(update_fields=["budget"])
    worker = Worker.objects.create(provider="prolific", external_id="5ab0000000000000000000aa")
    hit = batch.hits.order_by("pk").first()
    assignment = Assignment.objects.create(hit=hit, worker=worker, status=Assignment.Status.APPROVED)
    record(
        key="reward:gbp", kind="reward", assignment=assignment, worker=worker, batch=batch, amount=hit.reward, by=None
    )
    client.force_login(lead)
    for name, arg in (("batch_ledger", batch.pk), ("batch_detail", batch.pk), ("assignment_review", assignment.pk)):
        page = client.get(reverse(name, args=[arg])).content.decode()
        assert f"£{hit.reward:.2f}" in page, name
        assert not re.search(r"\$\d", page), (name, re.findall(r".{40}\$\d.{10}", page)[:3])
        assert "$/hour" not in page, name  # the calibration table's heading said dollars too
    spend = client.get(f"/api/batches/{batch.pk}/").json()["spend"]
    assert spend["currency"] == "GBP" and spend["total"] == f"{hit.reward:.2f}"  # the API says which
