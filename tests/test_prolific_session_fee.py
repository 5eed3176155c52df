"""Prolific charges its service fee on each payment it makes: a submission's reward (the study's reward
for a session of HITs) or a bonus, never on our HITs, which it does not see ("we charge a ~33.33%
service charge on each bonus payment + VAT", "bonus payments are charged at the same commission rate
... as standard participant rewards": Prolific's researcher help). The ledger rounded the fee per HIT:
a session of three £0.35 HITs wrote 3 × £0.12 = £0.36 of fee rows where Prolific charges £0.35 on the
£1.05 submission. A session's fee rows now add up to the fee on its whole reward, rounded once, and
the bonus budget check counts exactly what its approval will write."""

from decimal import Decimal

import pytest

from hits.ledger import reward_key
from hits.models import HIT, Assignment, LedgerEntry
from hits.provider_interface import get_provider
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.models import ProlificSession, ProlificStudy
from hits.providers.prolific.rewards import rest_key
from hits.selectors.figures import batch_spend
from hits.services import review

from .test_bonus_owed_rewards import prolific_partial_session
from .test_prolific_contract import api, published, worked_session  # noqa: F401 (api: the fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

HIT_REWARD = Decimal("0.35")


@pytest.fixture
def batch(api, settings):  # noqa: F811
    """A published Prolific batch of sessions of three £0.35 HITs (a £1.05 submission) at the default
    33.3% fee: £0.12 a HIT rounded per HIT, £0.35 on the submission."""
    settings.PROLIFIC_FEE_RATE = "0.333"
    batch = published(api)
    HIT.objects.filter(batch=batch).update(reward=HIT_REWARD)
    ProlificStudy.objects.filter(batch=batch, kind="main").update(reward_cents=105)
    return batch


def session_rows(session: ProlificSession, kind: str) -> list[Decimal]:
    own = [reward_key(pk) for pk in session.assignments().values_list("pk", flat=True)] + [rest_key(session.pk)]
    keys = own if kind == LedgerEntry.Kind.REWARD else [f"fee:{k}" for k in own]
    return list(LedgerEntry.objects.filter(kind=kind, key__in=keys).values_list("amount", flat=True))


def test_a_sessions_fee_rows_add_up_to_prolifics_fee_on_the_submission(batch):
    provider = get_provider("prolific")
    assert batch.prolific_studies.get(kind="main").hits_per_session == 3
    per_hit = 3 * provider.fee(HIT_REWARD, 3)
    on_submission = provider.fee(Decimal("1.05"), 3)
    assert (per_hit, on_submission) == (Decimal("0.36"), Decimal("0.35"))  # the case: rounding per HIT differs
    full = worked_session(batch, "PID1", "5ab000000000000000000001")
    partial = prolific_partial_session(batch, "PID2", "5ab000000000000000000002")  # 2 of its 3 HITs answered
    n, owing = provider.owed_rewards(batch)
    spent = batch_spend(batch)["total"]

    prolific_sync.apply_submission(batch, full.session_id, "PID1", "APPROVED")
    prolific_sync.apply_submission(batch, partial.session_id, "PID2", "APPROVED")

    for session in (full, partial):
        assert sum(session_rows(session, LedgerEntry.Kind.REWARD)) == Decimal("1.05")
        assert sum(session_rows(session, LedgerEntry.Kind.FEE)) == on_submission
    assert LedgerEntry.objects.filter(key=rest_key(partial.pk), amount=HIT_REWARD).exists()
    # The budget check counted before the approvals exactly what they wrote.
    assert n == 5 and owing == 2 * (Decimal("1.05") + on_submission)
    assert batch_spend(batch)["total"] - spent == owing
    assert provider.owed_rewards(batch) == (0, Decimal("0"))


def test_a_sessions_hits_approved_one_by_one_and_again_pay_the_fee_once(batch):
    """Each HIT's approval records its share (`review.approve`, here as Prolific's decision mirrored
    HIT by HIT); a second approval or a late record of the same HIT writes nothing more."""
    provider = get_provider("prolific")
    session = worked_session(batch, "PID3", "5ab000000000000000000003")
    first, *others = session.assignments().order_by("pk")
    review.approve(assignment_id=first.pk, at_provider=True)
    assert session_rows(session, LedgerEntry.Kind.FEE) == [provider.fee(HIT_REWARD, 3)]  # £0.12 so far
    assert provider.owed_rewards(batch) == (2, Decimal("0.70") + Decimal("0.35") - Decimal("0.12"))
    for a in others:
        review.approve(assignment_id=a.pk, at_provider=True)
        review.approve(assignment_id=a.pk, at_provider=True)
        assert review.paid_at_provider(assignment_id=a.pk)
    assert sorted(session_rows(session, LedgerEntry.Kind.FEE)) == [Decimal("0.11"), Decimal("0.12"), Decimal("0.12")]
    assert Assignment.objects.filter(pk__in=[a.pk for a in others], status="approved").count() == 2
