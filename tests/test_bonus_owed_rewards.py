"""A bonus leaves room in the budget for the rewards already owed: work workers submitted that the
lead has not yet approved or rejected. Approvals are never held to the budget (publishing's
estimate counts every reward) and never wait for the bonus turn, so the bonus check counted only the
ledger and the unsettled bonuses: a lead with a $500 budget could pay $500 of bonuses before
approving, and the approvals then took the batch over it. The check now counts what approving that
work will write to the ledger (`CrowdProvider.owed_rewards`): each HIT's reward and fee, and on
Prolific the rest of its session's reward, exactly as the approval records it; approved work once
(in the ledger), rejected work not at all."""

from decimal import Decimal

import pytest
from django.urls import reverse

from hits.ledger import reward_and_fee
from hits.models import Assignment, LedgerEntry
from hits.provider_interface import get_provider
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.models import ProlificSession
from hits.providers.prolific.rewards import rest_key
from hits.providers.prolific.sessions import start_session
from hits.selectors.figures import batch_spend
from hits.services import money_budget, review
from hits.services.submission import submit_assignment

from .crowd_data import all_answers, published_batch
from .test_money_input import submitted_assignments
from .test_mturk import published as mturk_published
from .test_mturk import stub, sync_one, worked  # noqa: F401 (stub: the fixture)
from .test_prolific_contract import API, api, published, worked_session  # noqa: F401 (api: the fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def owed(batch) -> tuple[int, Decimal]:
    return get_provider(batch.provider).owed_rewards(batch)


def cost(batch, assignments) -> Decimal:
    """What approving these assignments writes to the ledger: each reward and the provider's fee on it."""
    provider = get_provider(batch.provider)
    return sum((sum(reward_and_fee(provider, batch, a.hit.reward)) for a in assignments), Decimal("0"))


def test_an_in_house_bonus_that_fits_the_ledger_but_not_the_rewards_owed_is_refused_until_they_are_rejected(
    client, lead
):
    batch = published_batch(assignments=3)
    thanked, *pending = submitted_assignments(batch, 4)
    review.approve(assignment_id=thanked.pk, by=lead)
    owing = cost(batch, pending)
    assert owed(batch) == (3, owing) and owing > 0
    # $1.00 fits beside the ledger, not beside the ledger and the three rewards still to approve.
    batch = money_budget.set_budget(batch, batch_spend(batch)["total"] + Decimal("1.00") + owing - Decimal("0.01"))
    form = {"assignment_id": thanked.pk, "amount": "1.00", "reason": "Careful work", "token": "tok-owed", "by": lead}

    with pytest.raises(review.OverBudget) as refused:
        review.send_bonus(**form)
    money = money_budget.batch_money(batch, owing)
    assert f"(including {money} for 3 submitted HITs' rewards still to approve)" in str(refused.value)
    assert f"over its budget of {money_budget.batch_money(batch, batch.budget)}" in str(refused.value)
    assert not LedgerEntry.objects.filter(kind="bonus").exists()
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert f"{money} owed for 3 submitted HITs&#x27; rewards still to approve" in page
    assert f'<b id="bonus-room">{money_budget.batch_money(batch, Decimal("0.99"))}</b>' in page

    done, errors = review.bulk(review.reject, [a.pk for a in pending], feedback="Answers at random.", by=lead)
    assert (done, errors) == (3, [])
    assert owed(batch) == (0, Decimal("0"))
    entry, created = review.send_bonus(**form)
    assert created and entry.amount == Decimal("1.00")
    assert batch_spend(batch)["total"] < batch.budget  # rejected work pays nothing


def test_approved_work_counts_once_in_the_ledger_never_again_as_owed(lead):
    batch = published_batch(assignments=3)
    work = submitted_assignments(batch, 3)
    owing = cost(batch, work)
    # Exactly room for a $1.00 bonus beside the rewards owed.
    batch = money_budget.set_budget(batch, owing + Decimal("1.00"))
    assert money_budget.bonus_passes_budget(batch, "1.01") is not None

    done, _ = review.bulk(review.approve, [a.pk for a in work[:2]], by=lead)
    assert done == 2
    spend = money_budget.bonus_spend(batch)
    assert (spend["ledger"], spend["owed"], spend["submitted"]) == (cost(batch, work[:2]), cost(batch, work[2:]), 1)
    assert spend["total"] == owing and spend["room"] == Decimal("1.00")
    # Counted twice (ledger and owed), the approved rewards would refuse a bonus that fits exactly.
    assert money_budget.bonus_passes_budget(batch, "1.00") is None
    entry, created = review.send_bonus(
        assignment_id=work[0].pk, amount="1.00", reason="Careful work", token="tok-once", by=lead
    )
    assert created
    refused = money_budget.bonus_passes_budget(batch, "0.01")
    assert refused and "1 submitted HIT's reward still to approve" in refused


def prolific_partial_session(batch, pid: str, session_id: str) -> ProlificSession:
    """A session of three HITs of which the participant answered two: its approval pays the study's
    whole session reward, the third HIT's share as the rest of the session reward."""
    session = start_session(batch=batch, participant_id=pid, study_id="STUDY1", session_id=session_id)
    for a in session.assignments().order_by("pk")[:2]:
        submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=all_answers(a))
    return session


def test_prolific_counts_what_approving_its_sessions_records_with_the_rest_of_a_session_reward(api):  # noqa: F811
    batch = published(api)
    full = worked_session(batch, "PID1", "5ab000000000000000000001")
    partial = prolific_partial_session(batch, "PID2", "5ab000000000000000000002")
    submitted = Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED)
    n, owing = owed(batch)
    assert n == 5 and owing > cost(batch, submitted)  # the partial session's rest and its fee too
    spent = batch_spend(batch)["total"]

    # Prolific approves both (the sync or a hook): every HIT's reward and fee, the partial session's rest.
    prolific_sync.apply_submission(batch, full.session_id, "PID1", "APPROVED")
    prolific_sync.apply_submission(batch, partial.session_id, "PID2", "APPROVED")
    assert LedgerEntry.objects.filter(key=rest_key(partial.pk)).exists()
    assert batch_spend(batch)["total"] - spent == owing
    assert owed(batch) == (0, Decimal("0"))


def test_a_prolific_bonus_refused_for_the_rewards_owed_passes_once_that_session_is_rejected(api):  # noqa: F811
    batch = published(api)
    thanked = worked_session(batch, "PID1", "5ab000000000000000000001")
    other = worked_session(batch, "PID2", "5ab000000000000000000002")
    prolific_sync.apply_submission(batch, thanked.session_id, "PID1", "APPROVED")
    n, owing = owed(batch)
    assert n == 3 and owing > 0
    bonus = Decimal("1.00") + get_provider("prolific").fee(Decimal("1.00"), batch.assignments_per_hit)
    batch = money_budget.set_budget(batch, batch_spend(batch)["total"] + bonus)  # the bonus fits the ledger only
    form = {"assignment_id": thanked.assignments().first().pk, "amount": "1.00", "reason": "Thanks", "token": "tok-p"}

    with pytest.raises(review.OverBudget) as refused:
        review.send_bonus(**form)
    money = money_budget.batch_money(batch, owing)
    assert f"(including {money} for 3 submitted HITs' rewards still to approve)" in str(refused.value)
    assert len(api.calls) == 2  # publishing only: nothing was sent to Prolific

    prolific_sync.apply_submission(batch, other.session_id, "PID2", "REJECTED")  # Prolific's rejection, mirrored
    assert owed(batch) == (0, Decimal("0"))
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK1", "total_amount": 133})
    api.post(API + "bulk-bonus-payments/BULK1/pay/", status=202, json={})
    entry, created = review.send_bonus(**form)
    assert created and batch_spend(batch)["total"] == batch.budget


def test_mturk_counts_each_reward_with_its_fee_as_the_approval_mirrored_from_mturk_records_it(stub):  # noqa: F811
    batch = mturk_published(stub)
    hit = batch.hits.order_by("pk").first()
    mine = worked(batch, "WOWED", "AOWED", hit)
    reward, fee = reward_and_fee(get_provider("mturk"), batch, hit.reward)
    assert fee > 0 and owed(batch) == (1, reward + fee)
    spent = batch_spend(batch)["total"]
    record = {"AssignmentId": "AOWED", "WorkerId": "WOWED", "HITId": hit.external_id, "AssignmentStatus": "Approved"}
    sync_one(stub, batch, hit, [record])  # MTurk's auto-approval, mirrored
    assert Assignment.objects.get(pk=mine.pk).status == Assignment.Status.APPROVED
    assert batch_spend(batch)["total"] - spent == reward + fee
    assert owed(batch) == (0, Decimal("0"))


def test_a_prolific_session_approved_here_owes_the_rest_of_its_reward_until_the_sync_records_it(api, lead):  # noqa: F811
    """Approving a HIT of a session here approves the whole submission at Prolific, which pays the
    study's whole session reward then; the rest of a partial session is written by the sync
    (`settle_approved`). Once every answered HIT was approved here, none is left undecided, and the
    owed figure dropped the rest: before the sync the budget check was short by the rest and its fee."""
    batch = published(api)
    partial = prolific_partial_session(batch, "PID2", "5ab000000000000000000002")
    prolific_sync.apply_submission(batch, partial.session_id, "PID2", "AWAITING REVIEW")
    before = money_budget.bonus_spend(batch)["total"]
    api.post(API + f"submissions/{partial.session_id}/transition/", json={"status": "APPROVED"})
    done, errors = review.bulk(review.approve, [a.pk for a in partial.assignments().order_by("pk")[:2]], by=lead)
    assert (done, errors) == (2, [])
    assert not LedgerEntry.objects.filter(key=rest_key(partial.pk)).exists()  # the sync writes it

    # Prolific paid the whole session reward with the approval: the spend the check reads holds it all.
    assert owed(batch)[0] == 0
    assert money_budget.bonus_spend(batch)["total"] == before
    prolific_sync.apply_submission(batch, partial.session_id, "PID2", "APPROVED")  # the sync
    assert LedgerEntry.objects.filter(key=rest_key(partial.pk)).exists()
    assert batch_spend(batch)["total"] == before and owed(batch) == (0, Decimal("0"))
