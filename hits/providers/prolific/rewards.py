"""What approving a Prolific session pays, and so writes to the ledger: Prolific pays the study's
reward whole for each submission it approves, so an approved session records each answered HIT's
reward and fee (`review.approve`) and then the rest of the session reward with its fee
(`rest_of_session`, written by `sync.settle_approved`) when its HITs' rewards do not add up to it: a
session that held fewer HITs than planned, or left some unanswered. The bonus budget check counts
exactly that for the work still to approve (`owed_rewards`).

Prolific charges its service fee on each payment it makes, a submission's reward (reserved per place
when a study is published, returned for the places not taken) or a bonus, not on our HITs, which it
never sees: "we charge a ~33.33% service charge on each bonus payment + VAT"; "bonus payments are
charged at the same commission rate (+ VAT if applicable) as standard participant rewards"
(researcher-help.prolific.com, "How to resolve an underpaying study with bonus payments", "Bonus
payments"; "Where to find your workspace balance"). So a session's fee rows add up to the fee on
its whole reward, rounded once (`session_fee`), not to a fee rounded per HIT: three HITs of £0.35
paid 3 × £0.12 = £0.36 in fee rows where Prolific charges £0.35 on the £1.05 submission."""

from decimal import Decimal

from django.db.models import Exists, OuterRef, Q, Sum

from hits.ledger import REWARD_KEY, rewards_owed
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


def session_fee(provider, session: ProlificSession, amount: Decimal, key: str) -> Decimal:
    """The fee to record with the reward row `key` of `amount` more of the session's reward: the fee
    on all its reward rows with this one, less the fee rows already recorded for them (never below
    zero), so its fee rows add up to Prolific's fee on the submission, rounded once, whatever the
    order its HITs are approved in. Asked with the session's row locked (by the caller's
    transaction), so two of its HITs approved at once never read the same rows."""
    ProlificSession.objects.select_for_update().filter(pk=session.pk).first()
    rewards = _session_rows(session, LedgerEntry.Kind.REWARD, "", key)
    fees = _session_rows(session, LedgerEntry.Kind.FEE, "fee:", f"fee:{key}")
    whole = provider.fee(rewards + cents(amount), session.batch.assignments_per_hit)
    return max(whole - fees, Decimal("0.00"))


def _session_rows(session: ProlificSession, kind: str, prefix: str, leave_out: str) -> Decimal:
    """The sum of the session's reward rows (its HITs' and its rest's) or of their fee rows, but the
    one keyed `leave_out` (the row being written: a retry never counts itself)."""
    own = Q(assignment__in=session.assignments(), key__startswith=f"{prefix}{REWARD_KEY}") | Q(
        key=f"{prefix}{rest_key(session.pk)}"
    )
    rows = LedgerEntry.objects.filter(own, kind=kind).exclude(key=leave_out)
    return cents(rows.aggregate(total=Sum("amount"))["total"] or 0)


def owed_rewards(provider, batch: Batch) -> tuple[int, Decimal]:
    """`CrowdProvider.owed_rewards` of a Prolific batch: its HITs submitted and not yet approved or
    rejected, save those of a session rejected already (its rejection is on its way to them), and
    what approving them writes to the ledger: their rewards, the rest of each of their sessions'
    reward (`rest_of_session`, reckoned with the session's rewards already in the ledger and theirs;
    none when its row is written), and the fee on each session's rewards less the fee already
    recorded for it (`session_fee`, whatever the order of the approvals); a HIT of no session, by
    the fee on its own reward. A session approved here whose HITs are all approved (`review.approve`
    of each: Prolific paid its whole reward with the first) owes its rest and its fee too until the
    sync writes its row (`sync.settle_approved`): the money left with the approval. A few grouped
    queries, whatever the size."""
    rejected = ProlificSession.objects.filter(
        batch=batch, worker_id=OuterRef("worker_id"), session_id=OuterRef("external_id"), decision="rejected"
    )
    undecided = Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED).exclude(
        Exists(rejected)
    )
    in_session = ProlificSession.objects.filter(
        batch=batch, worker_id=OuterRef("worker_id"), session_id=OuterRef("external_id")
    )
    n = undecided.count()
    _, owed = rewards_owed(provider, batch, undecided.exclude(Exists(in_session)))  # HITs of no session
    study = batch.prolific_studies.filter(kind="main").first()
    sessions = batch.prolific_sessions.filter(
        Q(session_id__in=undecided.values("external_id")) | Q(decision=ProlificSession.Decision.APPROVED)
    )
    ids = {(w, s): pk for pk, w, s in sessions.values_list("pk", "worker_id", "session_id")}
    if not ids:
        return n, owed
    paid, fees = _recorded(batch, sessions, ids)
    submitted = _per_session(undecided, "", "hit__reward")
    for key in ids:
        answered = submitted.get(key, Decimal("0"))
        rest = Decimal("0")
        if study is not None and (key, "rest") not in paid:
            rest = rest_of_session(study, paid.get(key, Decimal("0")) + answered)
        if not answered and not rest:
            continue  # nothing of this session left to write
        rewards = paid.get(key, Decimal("0")) + paid.get((key, "rest"), Decimal("0")) + answered + rest
        whole = provider.fee(rewards, batch.assignments_per_hit)
        owed += answered + rest + max(whole - fees.get(key, Decimal("0")), Decimal("0"))
    return n, owed


def _recorded(batch: Batch, sessions, ids: dict) -> tuple[dict, dict]:
    """({session key: its HITs' reward rows; (session key, "rest"): its rest's reward row}, {session
    key: all its reward rows' fee rows}) of the `sessions` (keyed in `ids`)."""
    mine = LedgerEntry.objects.filter(
        assignment__hit__batch=batch, assignment__external_id__in=sessions.values("session_id")
    )
    paid = _per_session(mine.filter(kind=LedgerEntry.Kind.REWARD), "assignment__", "amount")
    fees = _per_session(
        mine.filter(kind=LedgerEntry.Kind.FEE, key__startswith=f"fee:{REWARD_KEY}"), "assignment__", "amount"
    )
    by_rest = {rest_key(pk): key for key, pk in ids.items()}
    rests = LedgerEntry.objects.filter(Q(key__startswith=REST_KEY) | Q(key__startswith=f"fee:{REST_KEY}"), batch=batch)
    for row_key, amount in rests.values_list("key", "amount"):
        key = by_rest.get(row_key.removeprefix("fee:"))
        if key is None:
            continue  # another session's
        if row_key.startswith("fee:"):
            fees[key] = fees.get(key, Decimal("0")) + amount
        else:
            paid[(key, "rest")] = amount
    return paid, fees


def _per_session(rows, prefix: str, field: str) -> dict:
    """{(worker id, session id): the sum of `field`} of these rows, one grouped query; to the cent
    (SQLite sums a DecimalField as a floating-point number)."""
    grouped = rows.order_by().values_list(f"{prefix}worker_id", f"{prefix}external_id").annotate(total=Sum(field))
    return {(worker, session): cents(total) for worker, session, total in grouped}
