"""From batch creation to approved submissions and computed scores on Prolific, with the HTTP
layer replaced only at the transport (`responses`): the lead's pages, the participants' pages,
the submission service, the sync, bulk approval, the ledger and the scoring service all run
for real."""

import re
from decimal import Decimal
from urllib.parse import urlencode

import pytest
import responses
from django.test import Client
from responses import matchers

from hits.models import Assignment, Batch, Judgment, LedgerEntry
from hits.providers.prolific import client as prolific_client
from hits.providers.prolific.models import ProlificSession, ProlificStudy
from scoring.runs.services import compute_scores

from .crowd_data import demo_dataset
from .test_prolific_contract import API, AUTH, SITE, TOKEN, study_json, study_request

pytestmark = pytest.mark.django_db
SYSTEMS = ("abs_bart_out", "ext_matchsumm_out")


def answer(acu_id: int, participant: int) -> bool:
    """A deterministic crowd: most participants agree, some do not."""
    return (acu_id * 7 + participant) % 5 not in (0, 1) if participant % 4 else acu_id % 2 == 0


def work_session(client, batch, participant: int, session_id: str, study_id="STUDY1") -> str:
    """One participant's whole session through the pages; returns where they end up."""
    ids = {"PROLIFIC_PID": f"PID{participant:02d}", "STUDY_ID": study_id, "SESSION_ID": session_id}
    response = client.get(f"/prolific/batch/{batch.pk}/?{urlencode(ids)}")
    for _ in range(20):
        if response.status_code == 200:  # the completion page, which sends them back to Prolific
            return response.context["link"]
        assert response.status_code == 302, response.content.decode()[:300]
        location = response["Location"]
        if "/prolific/task/" in location:
            page = client.get(location)
            assert page.status_code == 200 and "in this session" in page.content.decode()
            token = location.rstrip("/").rsplit("/", 1)[1]
            acus = [int(x) for x in re.findall(r'data-acu="(\d+)"', page.content.decode())]
            stored = client.post(
                f"/task/{token}/submit",
                {"answers": {str(a): answer(a, participant) for a in acus}, "active_seconds": 40},
                content_type="application/json",
            )
            assert stored.json()["ok"]
            location = page.context["continue_url"]
        response = client.get(location)
    raise AssertionError("the session never ended")


def test_prolific_batch_from_creation_to_scores(client, lead, settings, monkeypatch, eager_celery):
    settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL, settings.PUBLIC_BASE_URL = TOKEN, API, SITE
    settings.PROLIFIC_SESSIONS_PER_ADDRESS = 1000  # every participant here comes from 127.0.0.1
    monkeypatch.setattr(prolific_client, "BACKOFF", 0)
    dataset = demo_dataset()
    client.force_login(lead)
    with responses.RequestsMock(assert_all_requests_are_fired=True) as api:
        # 1. The lead creates the batch: 20 summaries x 3 assignments, sessions of 4 HITs.
        form = {
            "name": "Prolific round",
            "provider": "prolific",
            "assignments": 3,
            "systems": [s.pk for s in dataset.systems.filter(name__in=SYSTEMS)],
            "lifetime_hours": 168,
            "assignment_minutes": 60,
            "auto_approve_hours": 72,
            "gold_share": 0,
            "mturk_min_approval_rate": 98,
            "mturk_min_approved_hits": 10000,
            "mturk_qualification_mode": "mturk_test",
            "mturk_locales": "US",
            "prolific_hits_per_session": 4,
            "prolific_session_minutes": 10,
            "prolific_currency": "USD",
            "prolific_min_approval_rate": 97,
            "prolific_languages": "19",
            "prolific_devices": ["desktop", "tablet"],
            "prolific_group_mode": "allow",
        }
        response = client.post(f"/datasets/{dataset.pk}/batches/new", form)
        assert response.status_code == 302, response.content.decode()[:2000]
        batch = Batch.objects.get(name="Prolific round")
        assert batch.provider_config["hits_per_session"] == 4 and batch.hits.count() == 20

        # 2. Its page shows the cost from Prolific's calculator; publishing creates and publishes the study.
        api.post(API + "study-cost-calculator/", json={"total_cost": 2500.0}, match=[AUTH])
        page = client.get(f"/batches/{batch.pk}/").content.decode()
        assert 'id="prolific-cost">$25.00<' in page and "15</b> places" in page
        expect = {"total_available_places": 15, "device_compatibility": ["desktop", "tablet"]}
        api.post(API + "studies/", status=201, json=study_json("STUDY1"), match=[AUTH, study_request(**expect)])
        api.post(
            API + "studies/STUDY1/transition/",
            json=study_json("STUDY1", "ACTIVE"),
            match=[matchers.json_params_matcher({"action": "PUBLISH"})],
        )
        client.post(f"/batches/{batch.pk}/publish")
        batch.refresh_from_db()
        assert batch.status == Batch.Status.PUBLISHED, batch.last_error
        code = ProlificStudy.objects.get(batch=batch, kind="main").completion_code

        # 3. Fifteen participants arrive from Prolific; one of them was never sent by Prolific.
        participant = Client()  # no login, no cookie: participants are named by Prolific's parameters
        ends = [work_session(participant, batch, i, f"5ab{i:021d}") for i in range(15)]
        assert set(ends) == {f"https://app.prolific.com/submissions/complete?cc={code}"}
        assert Assignment.objects.filter(hit__batch=batch, status="submitted").count() == 60
        assert not Judgment.objects.filter(assignment__hit__batch=batch, assignment__confirmed=True).exists()

        # 4. The sync: Prolific reports fourteen submissions completed; 5ab000000000000000000014 is unknown to it.
        sessions = list(ProlificSession.objects.filter(batch=batch).order_by("pk"))
        records = [
            {"id": s.session_id, "participant_id": s.worker.external_id, "status": "AWAITING REVIEW"}
            for s in sessions
            if s.session_id != "5ab000000000000000000014"
        ]
        api.get(API + "studies/STUDY1/", json=study_json("STUDY1", "AWAITING REVIEW"))
        api.get(
            API + "submissions/",
            json={"results": records, "_links": {"next": {"href": None}}, "meta": {"count": 14}},
            match=[matchers.query_param_matcher({"study": "STUDY1", "page_size": "100"})],
        )
        client.post(f"/batches/{batch.pk}/sync")
        assert ProlificSession.objects.filter(batch=batch, confirmed=True).count() == 14

        # 5. Approve every session in bulk: the unreported one is refused with a reason.
        api.post(
            API + "submissions/bulk-approve/",
            json={},
            match=[matchers.json_params_matcher({"submission_ids": [r["id"] for r in records]}, strict_match=True)],
        )
        page = client.post(
            f"/batches/{batch.pk}/prolific/review",
            {"action": "approve", "session": [s.pk for s in sessions]},
            follow=True,
        ).content.decode()
        assert (
            "Approved 14 session(s)" in page
            and "5ab000000000000000000014: Prolific reports it not completed yet" in page
        )
        assert not [c for c in api.calls if "doesn't match any registered mock" in str(c.response)]

    approved = Assignment.objects.filter(hit__batch=batch, status="approved")
    assert approved.count() == 56 and not approved.filter(external_id="5ab000000000000000000014").exists()
    study = ProlificStudy.objects.get(batch=batch, kind="main")
    rewards = sum(LedgerEntry.objects.filter(batch=batch, kind="reward").values_list("amount", flat=True))
    assert rewards == Decimal(study.reward_cents * 14) / 100

    # 6. Scores come from the confirmed judgments only, majority vote per ACU as in RoSE.
    run = compute_scores(dataset, batch, n_resamples=200)
    assert run.outputs["counts"]["workers"] == 14
    votes: dict[tuple[int, int], list[bool]] = {}
    for summary, acu, present in Judgment.objects.filter(
        assignment__hit__batch=batch, assignment__confirmed=True
    ).values_list("assignment__hit__summary_id", "acu_id", "present"):
        votes.setdefault((summary, acu), []).append(present)
    assert run.outputs["counts"]["judgments"] == sum(len(v) for v in votes.values())
    expected = {}
    for hit in batch.hits.select_related("summary__system", "summary__document__reference"):
        acus = list(hit.summary.document.reference.acus.values_list("pk", flat=True))
        present = sum(1 for a in acus if sum(votes[(hit.summary_id, a)]) * 2 > len(votes[(hit.summary_id, a)]))
        expected.setdefault(hit.summary.system.name, []).append(present / len(acus))
    assert set(run.outputs["systems"]) == set(SYSTEMS)
    for name, values in expected.items():
        assert run.outputs["systems"][name]["acu"] == pytest.approx(sum(values) / len(values))
