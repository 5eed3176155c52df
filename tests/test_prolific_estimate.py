"""The cost estimate of a Prolific batch (the new batch form's, and the draft's that publishing checks
against the budget) is what approving every session of the batch, fully done, writes to the ledger.
Prolific pays each session's reward whole with its fee on it, rounded once (hits.providers.prolific.
rewards): the estimate priced the fee per HIT, rounded per HIT (7 x £0.25: 7 x £0.08 = £0.56 where a
session's £1.75 pays £0.58), and each place at its HIT's reward (a last, shorter session is paid whole),
so a budget set at the estimate could be passed."""

from decimal import Decimal

import pytest

from hits.batch_fields import BatchSpec
from hits.money import Bucket
from hits.provider_interface import get_provider
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.sessions import SessionRefused, start_session
from hits.selectors.figures import batch_spend
from hits.services import batches, estimate
from hits.services.submission import submit_assignment

from .crowd_data import all_answers, demo_dataset
from .test_prolific_contract import api, expect_create, expect_transition, prolific_batch  # noqa: F401 (api: the fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

K = 7


def test_a_prolific_estimate_is_what_approving_every_session_of_the_batch_writes(api, settings):  # noqa: F811
    settings.PROLIFIC_FEE_RATE = "0.333"
    dataset = demo_dataset()
    systems = list(dataset.systems.filter(name="abs_bart_out"))
    spec = BatchSpec(
        provider="prolific",
        assignments=3,
        buckets=(Bucket(1, None, Decimal("0.25")),),
        provider_config={"hits_per_session": K},
    )
    figures = estimate.estimate(dataset, spec, systems=systems)
    batch = batches.create_batch(dataset=dataset, spec=spec, systems=systems)
    cost = batches.cost_estimate(batch)
    assert {k: cost[k] for k in ("rewards", "fees", "total")} == {k: figures[k] for k in ("rewards", "fees", "total")}
    places = batch.hits.count() * 3
    assert places % K  # a last session shorter than K HITs, paid whole
    provider = get_provider("prolific")
    assert K * provider.fee(Decimal("0.25"), 3) < provider.fee(K * Decimal("0.25"), 3)  # the case: £0.56 < £0.58

    expect_create(api)
    expect_transition(api, "STUDY1", "PUBLISH", "ACTIVE")
    batch = batches.publish_batch(batch)
    sessions = []
    while True:  # every place taken, every HIT answered
        n = len(sessions) + 1
        try:
            session = start_session(batch=batch, participant_id=f"PID{n}", study_id="STUDY1", session_id=f"{n:024x}")
        except SessionRefused:  # no task left
            break
        for a in session.assignments():
            submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=all_answers(a))
        sessions.append((session, f"PID{n}"))
    assert len(sessions) == -(-places // K)
    for session, pid in sessions:
        prolific_sync.apply_submission(batch, session.session_id, pid, "APPROVED")

    spend = batch_spend(batch)
    assert (spend["total"], cost["total"]) == (cost["total"], figures["total"])
    assert cost["sessions"].sessions == len(sessions)
    assert cost["total"] == len(sessions) * (K * Decimal("0.25") + Decimal("0.58"))


def test_the_batch_page_says_a_prolific_estimate_is_by_sessions(client, lead):
    batch = prolific_batch()
    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    sessions = batches.cost_estimate(batch)["sessions"]
    assert 'id="cost-sessions"' in page and f"{sessions.sessions} sessions of 3 HITs" in page


def test_the_api_cost_gives_the_sessions_the_batch_page_shows(client, lead):
    """GET /api/batches/<id>/cost/ gave the totals only; its `sessions` are the page's line, from the
    one estimate (`batches.cost_estimate`), as money strings."""
    batch = prolific_batch()
    client.force_login(lead)
    sessions = batches.cost_estimate(batch)["sessions"]
    cost = client.get(f"/api/batches/{batch.pk}/cost/").json()
    assert cost["sessions"] == {
        "sessions": sessions.sessions,
        "hits_per_session": 3,
        "reward": f"{sessions.reward:.2f}",
        "fee": f"{sessions.fee:.2f}",
        "rewards": f"{sessions.rewards:.2f}",
        "fees": f"{sessions.fees:.2f}",
    }
    assert (cost["rewards"], cost["fees"]) == (f"{sessions.rewards:.2f}", f"{sessions.fees:.2f}")
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert (
        f"{sessions.sessions} sessions of 3 HITs at ${cost['sessions']['reward']} + ${cost['sessions']['fee']}" in page
    )


def test_the_api_cost_of_a_batch_paid_per_assignment_has_no_sessions(client, lead):
    from .crowd_data import published_batch

    batch = published_batch()
    client.force_login(lead)
    assert client.get(f"/api/batches/{batch.pk}/cost/").json()["sessions"] is None
