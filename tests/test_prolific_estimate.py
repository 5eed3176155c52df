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


def qualified_batch(**config):
    from hits.services.qualification import build_test

    dataset = demo_dataset()
    batch = prolific_batch(dataset=dataset, **config)
    batch.qualification_test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.8)
    batch.save(update_fields=["qualification_test"])
    return batch


def test_a_screening_study_is_a_line_of_the_estimate_in_its_totals(client, lead, settings):
    """A batch with a qualification test gets a Prolific screening study, paid apart (each submission
    approved automatically: its reward and Prolific's fee); the estimate, and so the budget check, left
    it out. It is a line of its own now, on the page and in the API, counted in the totals."""
    from hits.providers.prolific.config import config
    from hits.providers.prolific.plans import session_plan
    from hits.providers.prolific.provider import screening_reward_cents

    settings.PROLIFIC_FEE_RATE = "0.333"
    batch = qualified_batch()
    cost = batches.cost_estimate(batch)
    sessions, (line,) = cost["sessions"], cost["extras"]
    reward = Decimal(screening_reward_cents(batch)) / 100
    places = session_plan(batch, config(batch)).places  # no screening_places: the main study's
    fee = get_provider("prolific").fee(reward, batch.assignments_per_hit)
    assert (line.places, line.reward, line.fee) == (places, reward, fee) and fee > 0
    assert cost["rewards"] == sessions.rewards + places * reward
    assert cost["fees"] == sessions.fees + places * fee
    assert cost["total"] == sessions.rewards + sessions.fees + places * (reward + fee)

    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert f'<td>Screening study (qualification test)</td><td class="num">${reward:.2f}</td>' in page
    assert f"at most {places} places × (${reward:.2f} + ${fee:.2f} fee), counted in the totals" in page
    assert f"${cost['total']:,.2f}" in page
    answer = client.get(f"/api/batches/{batch.pk}/cost/").json()
    assert answer["extras"] == [
        {
            "label": "Screening study (qualification test)",
            "places": places,
            "reward": f"{reward:.2f}",
            "fee": f"{fee:.2f}",
            "rewards": f"{places * reward:.2f}",
            "fees": f"{places * fee:.2f}",
            "total": f"{places * (reward + fee):.2f}",
            "note": line.note,
        }
    ]
    assert answer["total"] == f"{cost['total']:.2f}"


def test_a_created_screening_study_is_priced_by_its_own_places_and_reward(settings):
    """Once the screening study exists at Prolific its places and reward are the line's: the 0.67 + 0.22
    each approved submission records (test_prolific_contract's sync test), times its places."""
    from hits.providers.prolific.models import ProlificStudy

    settings.PROLIFIC_FEE_RATE = "0.333"
    batch = qualified_batch(screening_places=40)
    assert batches.cost_estimate(batch)["extras"][0].places == 40  # the option, before the study exists
    ProlificStudy.objects.create(batch=batch, kind="screening", study_id="SCREEN1", reward_cents=67, places=2)
    (line,) = batches.cost_estimate(batch)["extras"]
    assert (line.places, line.reward, line.fee, line.total) == (2, Decimal("0.67"), Decimal("0.22"), Decimal("1.78"))


def test_a_batch_without_a_qualification_test_has_no_screening_line():
    assert batches.cost_estimate(prolific_batch())["extras"] == []


PROLIFIC_FORM = {  # the Prolific options of the new batch form, as the page sends them
    "provider": "prolific",
    "prolific_hits_per_session": 3,
    "prolific_session_minutes": 10,
    "prolific_currency": "USD",
    "prolific_min_approval_rate": 95,
    "prolific_languages": "19",
    "prolific_devices": "desktop",
    "prolific_workspace_id": "WORKSPACE1",
    "prolific_group_mode": "allow",
    "prolific_screening_minutes": 5,
}


def test_the_new_batch_forms_live_estimate_has_the_screening_line_and_counts_it(client, lead, settings):
    """The form's live estimate left the screening study out (the spec named no test), so the lead saw a
    lower total there than on the draft's page, and a budget set from it was refused at publishing. It
    has the line now, from the same rule (`plans.screening_cost`), and the draft's total."""
    from django.urls import reverse

    from hits.models import Batch
    from hits.money import format_money
    from hits.services.qualification import build_test

    from .crowd_data import BATCH_FORM

    settings.PROLIFIC_FEE_RATE = "0.333"
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU test", items=2, pass_score=0.8)
    form = {**BATCH_FORM, **PROLIFIC_FORM, "gold_share": 0, "allocation": "fixed", "qualification_test": test.pk}
    client.force_login(lead)
    url = reverse("batch_estimate", args=[dataset.pk])
    without = client.get(url, {**form, "qualification_test": ""}).json()
    figures = client.get(url, form).json()

    response = client.post(reverse("batch_new", args=[dataset.pk]), {**form, "name": "draft"})
    assert response.status_code == 302, response.context["form"].errors
    batch = Batch.objects.get(name="draft")
    assert batch.qualification_test == test
    cost = batches.cost_estimate(batch)
    (line,) = cost["extras"]
    money = lambda amount: format_money(amount, "USD")  # noqa: E731
    # the draft's total (its page's, the budget check's): the old live estimate was line.total lower
    assert [figures[k] for k in ("rewards", "fees", "total")] == [money(cost[k]) for k in ("rewards", "fees", "total")]
    assert (
        Decimal(figures["total"].lstrip("$").replace(",", ""))
        == Decimal(without["total"].lstrip("$").replace(",", "")) + line.total
    )
    assert without["extras"] == []
    assert figures["extras"] == [
        {
            "label": "Screening study (qualification test)",
            "places": line.places,
            "reward": money(line.reward),
            "fee": money(line.fee),
            "total": money(line.total),
        }
    ]
    assert line.places == cost["sessions"].sessions and line.fee > 0  # the main study's places

    with_places = client.get(url, {**form, "prolific_screening_places": 40}).json()
    assert with_places["extras"][0]["places"] == 40  # the option, as the draft's line takes it
