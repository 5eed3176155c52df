"""What approving a Prolific session pays, and so writes to the ledger: Prolific pays the study's
reward whole for each submission it approves, so an approved session records each answered HIT's
reward and fee (`review.approve`, by `hits.ledger.reward_and_fee`) and then the rest of the
session reward with its fee (`rest_of_session`, written by `sync.settle_approved`) when its HITs'
rewards do not add up to it: a session that held fewer HITs than planned, or left some unanswered.
The bonus budget check counts exactly that for the work still to approve (`owed_rewards`)."""

from decimal import Decimal

from django.db.models import Exists, OuterRef, Q, Sum

from hits.ledger import reward_and_fee, rewards_owed
from hits.models import Assignment, Batch, LedgerEntry
from hits.money import cents
from hits.providers.prolific.models import ProlificSession, ProlificStudy

# The ledger key of the rest of a session's reward: this prefix and the session's id.
REST_KEY = "reward:prolific-session:"


def rest_key(session_id: int) -> str:
    return f"{REST_KEY}{session_id}"


def rest_of_session(study: ProlificStudy, paid: Decimal) -> Decimal:
    """The rest of a session's reward once its HITs' rewards `paid` are in the ledger: the study's
    reward per session less those, nothing when they cover it."""
    rest = cents(Decimal(study.reward_cents) / 100 - paid)
    return rest if rest > 0 else Decimal("0.00")


def paid_rewards(session: ProlificSession) -> Decimal:
    """The rewards of the session's HITs in the ledger (their fees apart)."""
    rows = LedgerEntry.objects.filter(kind=LedgerEntry.Kind.REWARD, assignment__in=session.assignments())
    return sum(rows.values_list("amount", flat=True), Decimal("0"))


def owed_rewards(provider, batch: Batch) -> tuple[int, Decimal]:
    """`CrowdProvider.owed_rewards` of a Prolific batch: its HITs submitted and not yet approved or
    rejected, save those of a session rejected already (its rejection is on its way to them), and
    what approving them writes to the ledger: their rewards and fees, and the rest of each of their
    sessions' reward with its fee (`rest_of_session`, reckoned with the session's rewards already in
    the ledger and theirs; none when its row is written). A session approved here whose HITs are all
    approved (`review.approve` of each: Prolific paid its whole reward with the first) owes its rest
    too until the sync writes its row (`sync.settle_approved`): the money left with the approval.
    A few grouped queries, whatever the size."""
    rejected = ProlificSession.objects.filter(
        batch=batch, worker_id=OuterRef("worker_id"), session_id=OuterRef("external_id"), decision="rejected"
    )
    undecided = Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED).exclude(
        Exists(rejected)
    )
    n, owed = rewards_owed(provider, batch, undecided)
    study = batch.prolific_studies.filter(kind="main").first()
    if study is None:
        return n, owed
    written = set(LedgerEntry.objects.filter(batch=batch, key__startswith=REST_KEY).values_list("key", flat=True))
    sessions = batch.prolific_sessions.filter(
        Q(session_id__in=undecided.values("external_id")) | Q(decision=ProlificSession.Decision.APPROVED)
    )
    ids = {
        (w, s): pk for pk, w, s in sessions.values_list("pk", "worker_id", "session_id") if rest_key(pk) not in written
    }
    if not ids:
        return n, owed
    paid = _per_session(
        LedgerEntry.objects.filter(
            kind=LedgerEntry.Kind.REWARD,
            assignment__hit__batch=batch,
            assignment__external_id__in=sessions.values("session_id"),
        ),
        "assignment__",
        "amount",
    )
    submitted = _per_session(undecided, "", "hit__reward")
    for key in ids:
        rest = rest_of_session(study, paid.get(key, Decimal("0")) + submitted.get(key, Decimal("0")))
        if rest:
            amount, fee = reward_and_fee(provider, batch, rest)
            owed += amount + fee
    return n, owed


def _per_session(rows, prefix: str, field: str) -> dict[tuple[int, str], Decimal]:
    """{(worker id, session id): the sum of `field`} of these rows, one grouped query; to the cent
    (SQLite sums a DecimalField as a floating-point number)."""
    grouped = rows.order_by().values_list(f"{prefix}worker_id", f"{prefix}external_id").annotate(total=Sum(field))
    return {(worker, session): cents(total) for worker, session, total in grouped}
