"""A rating batch (issue 46) on every session provider: a Ref-free batch on Prolific (its HTTP API
faked at the transport, as tests/test_prolific_contract.py does) and one on a panel. Participants
enter with the study link, get the rating task page (the article, every summary of the example with
its 1-5 choices), submit their ratings through the pages, and the ratings reach the rating round's
ProtocolRating rows once the provider's flow counts them; approval puts each assignment's reward in
the ledger once."""

import json
import re
from decimal import Decimal
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from responses import matchers

from annotation.models import ProtocolRating, Summary
from hits.models import Assignment, LedgerEntry
from hits.providers.panel import payouts
from hits.providers.panel.config import completion_code
from hits.providers.panel.models import PanelSession
from hits.providers.prolific.models import ProlificSession, ProlificStudy
from hits.ratings.models import Rating
from hits.services import batches, ratings

from .crowd_data import batch_of, demo_dataset
from .test_panel import DONE_URL, start, study_link
from .test_prolific_contract import API, AUTH, api, expect_create, expect_transition, study_json  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

DOCUMENTS = 3  # examples in each batch: one HIT each, four summaries (one per system of the demo set)
RATERS = ("PID01", "PID02", "PID03")


def first_documents(dataset) -> list:
    return list(dataset.documents.order_by("position")[:DOCUMENTS])


def score(summary_id: int, rater: int) -> int:
    return (summary_id + rater) % 5 + 1


def rate_page(client, location: str, rater: int, capture) -> dict[int, int]:
    """Open a session's rating task page, check what it shows, and submit a rating per summary."""
    page = client.get(location)
    assert page.status_code == 200
    html = page.content.decode()
    hit = page.context["hit"]
    assert hit.batch.protocol == "ref_free"
    # Ref-free shows the article, not the reference; every summary of the example once, with 1 to 5.
    assert 'id="rating-document"' in html and 'id="rating-reference"' not in html
    assert escape(hit.summary.document.source) in html
    ids = [int(x) for x in re.findall(r'class="acu-row rate-row"[^>]*data-acu="(\d+)"', html)]
    assert sorted(ids) == sorted(Summary.objects.filter(document=hit.summary.document).values_list("pk", flat=True))
    assert len(ids) == 4
    for summary_id in ids:
        row = html.split(f'data-acu="{summary_id}"', 1)[1].split("</li>", 1)[0]
        assert re.findall(r'class="choice score" data-value="(\d)"', row) == ["1", "2", "3", "4", "5"]
    answers = {i: score(i, rater) for i in ids}
    token = location.rstrip("/").rsplit("/", 1)[1]
    with capture(execute=True):
        stored = client.post(
            reverse("task_submit", args=[token]),
            json.dumps({"answers": {str(k): v for k, v in answers.items()}, "active_seconds": 40}),
            content_type="application/json",
        )
    assert stored.status_code == 200 and stored.json()["ok"], stored.content
    return answers


def expected_rows(given: dict[str, dict[int, int]], provider: str) -> list[tuple[int, str, int]]:
    return sorted((s, f"{provider}:{pid}", v) for pid, scores in given.items() for s, v in scores.items())


def round_rows(batch) -> list[tuple[int, str, int]]:
    rows = ProtocolRating.objects.filter(round=batch.rating_round)
    assert set(rows.values_list("protocol", flat=True)) <= {"ref_free"}
    return sorted(rows.values_list("summary_id", "rater", "score"))


# ---- Prolific ------------------------------------------------------------------------------


def prolific_session(client, batch, rater: int, session_id: str, capture) -> tuple[str, dict[int, int]]:
    """One participant's whole session through the pages: (where they end up, their ratings)."""
    ids = {"PROLIFIC_PID": RATERS[rater], "STUDY_ID": "STUDY1", "SESSION_ID": session_id}
    response = client.get(f"/prolific/batch/{batch.pk}/?{urlencode(ids)}")
    given: dict[int, int] = {}
    for _ in range(20):
        if response.status_code == 200:  # the completion page, which sends them back to Prolific
            return response.context["link"], given
        assert response.status_code == 302, response.content.decode()[:300]
        location = response["Location"]
        if "/prolific/task/" in location:
            given |= rate_page(client, location, rater, capture)
            location = client.get(location).context["continue_url"]
        response = client.get(location)
    raise AssertionError("the session never ended")


def test_a_ref_free_batch_on_prolific_counts_once_prolific_reports_and_pays_once(
    api,  # noqa: F811 - the faked Prolific API
    client,
    lead,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.PROLIFIC_SESSIONS_PER_ADDRESS = 1000  # every participant here comes from 127.0.0.1
    dataset = demo_dataset()
    batch = batch_of(
        dataset,
        provider="prolific",
        protocol="ref_free",
        rating_round="prolific study",
        assignments=3,
        provider_config={"hits_per_session": DOCUMENTS},
        documents=first_documents(dataset),
    )
    assert batch.hits.count() == DOCUMENTS
    expect_create(api, total_available_places=3)  # 3 examples x 3 ratings, in sessions of 3 examples
    expect_transition(api, "STUDY1", "PUBLISH", "ACTIVE")
    batch = batches.publish_batch(batch)
    code = ProlificStudy.objects.get(batch=batch, kind="main").completion_code

    participant = Client()  # no login: participants are named by Prolific's parameters
    given = {}
    for rater, pid in enumerate(RATERS):
        end, given[pid] = prolific_session(
            participant, batch, rater, f"5ab{rater:021d}", django_capture_on_commit_callbacks
        )
        assert end == f"https://app.prolific.com/submissions/complete?cc={code}"
        assert len(given[pid]) == DOCUMENTS * 4
    assigned = Assignment.objects.filter(hit__batch=batch)
    assert assigned.filter(status="submitted").count() == assigned.count() == DOCUMENTS * 3
    assert Rating.objects.filter(assignment__hit__batch=batch).count() == 3 * DOCUMENTS * 4
    # Held until Prolific reports the submissions: nothing in the round yet, even projected again now.
    assert round_rows(batch) == []
    assert ratings.project(batch.pk) == 0 and round_rows(batch) == []

    sessions = list(ProlificSession.objects.filter(batch=batch).order_by("pk"))
    records = [
        {"id": s.session_id, "participant_id": s.worker.external_id, "status": "AWAITING REVIEW"} for s in sessions
    ]
    api.get(API + "studies/STUDY1/", json=study_json("STUDY1", "AWAITING REVIEW"))
    api.get(
        API + "submissions/",
        json={"results": records, "_links": {"next": {"href": None}}, "meta": {"count": len(records)}},
        match=[AUTH, matchers.query_param_matcher({"study": "STUDY1", "page_size": "100"})],
    )
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/batches/{batch.pk}/sync")
    assert ProlificSession.objects.filter(batch=batch, confirmed=True).count() == 3
    assert round_rows(batch) == expected_rows(given, "prolific")

    bulk = api.post(
        API + "submissions/bulk-approve/",
        json={},
        match=[
            AUTH,
            matchers.json_params_matcher({"submission_ids": [r["id"] for r in records]}, strict_match=True),
        ],
    )
    for _ in range(2):  # approved twice: one call to Prolific, each assignment paid once
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                f"/batches/{batch.pk}/prolific/review", {"action": "approve", "session": [s.pk for s in sessions]}
            )
        assert response.status_code == 302
    assert bulk.call_count == 1
    assert assigned.filter(status="approved").count() == DOCUMENTS * 3
    rewards = LedgerEntry.objects.filter(batch=batch, kind=LedgerEntry.Kind.REWARD)
    assert sorted(rewards.values_list("assignment_id", flat=True)) == sorted(assigned.values_list("pk", flat=True))
    study = ProlificStudy.objects.get(batch=batch, kind="main")
    assert sum(r.amount for r in rewards) == Decimal(study.reward_cents * 3) / 100  # the study's reward per session
    assert round_rows(batch) == expected_rows(given, "prolific")  # approved work still counts, once


# ---- panel ---------------------------------------------------------------------------------


def panel_session(client, batch, rater: int, capture) -> tuple[str, dict[int, int]]:
    """One participant's session: the study link, Start, each task rated, then the completion code."""
    pid = RATERS[rater]
    entry = client.get(study_link(batch, pid))
    assert entry.status_code == 302
    welcome = client.get(entry["Location"])
    assert welcome.status_code == 200 and "Start task 1" in welcome.content.decode()
    given: dict[int, int] = {}
    for _ in range(20):
        response = start(client, batch, pid)
        if response.status_code == 200:
            return response.content.decode(), given
        assert response.status_code == 302 and response["Location"].startswith("/panel/task/"), response
        given |= rate_page(client, response["Location"], rater, capture)
    raise AssertionError("the session never ended")


def test_a_ref_free_batch_on_a_panel_counts_at_submission_and_pays_once(
    client, lead, settings, django_capture_on_commit_callbacks
):
    settings.PANEL_SESSIONS_PER_ADDRESS = 1000
    dataset = demo_dataset()
    config = {
        "panel_name": "Connect",
        "id_parameter": "participantId",
        "tasks_per_session": DOCUMENTS,
        "completion_url": DONE_URL,
    }
    batch = batches.publish_batch(
        batch_of(
            dataset,
            provider="panel",
            protocol="ref_free",
            rating_round="panel study",
            assignments=3,
            provider_config=config,
            documents=first_documents(dataset),
        )
    )
    assert batch.hits.count() == DOCUMENTS
    participant = Client()
    given = {}
    for rater, pid in enumerate(RATERS):
        done, given[pid] = panel_session(participant, batch, rater, django_capture_on_commit_callbacks)
        assert completion_code(batch, pid) in done and DONE_URL.format(code=completion_code(batch, pid)) in done
        assert len(given[pid]) == DOCUMENTS * 4
        # A panel's place is confirmed when taken: the ratings count at submission.
        assert round_rows(batch) == expected_rows(given, "panel")
    assert PanelSession.objects.filter(batch=batch, status=PanelSession.Status.COMPLETED).count() == 3

    assigned = Assignment.objects.filter(hit__batch=batch)
    ids = list(assigned.values_list("pk", flat=True))
    assert len(ids) == DOCUMENTS * 3
    client.force_login(lead)
    for _ in range(2):  # approved twice: each assignment paid once, to pay at the panel
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(reverse("batch_review", args=[batch.pk]), {"assignment": ids, "action": "approve"})
        assert response.status_code == 302
    entries = LedgerEntry.objects.filter(batch=batch)
    assert set(entries.values_list("kind", "note")) == {("reward", "to pay at the panel")}  # no fee at a panel
    assert sorted(entries.values_list("assignment_id", flat=True)) == sorted(ids)
    assert sum(e.amount for e in entries) == sum(a.hit.reward for a in assigned.select_related("hit"))
    lists = payouts.lists(batch)
    assert payouts.approval_text(lists) == "".join(f"{pid}\n" for pid in sorted(RATERS))
    assert lists.total == sum(e.amount for e in entries)
    assert round_rows(batch) == expected_rows(given, "panel")  # approved work still counts, once
