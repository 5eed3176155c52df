"""The ledger: every money event is one row with a unique key, written once.

The key is derived from what the row pays for (an assignment's reward, a bonus form's
one-time token, a session's rest), so a repeated click, a retry or a provider's own decision
mirrored later finds the key and writes nothing more.
"""

import logging
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet

from hits.models import Assignment, LedgerEntry, Worker
from hits.money import cents

logger = logging.getLogger(__name__)


def record(*, key: str, kind: str, assignment: Assignment | None, worker: Worker, batch, amount: Decimal, by, note=""):
    """One ledger row, created once: returns (entry, created)."""
    existing = LedgerEntry.objects.filter(key=key).first()
    if existing:
        return existing, False
    try:
        with transaction.atomic():
            entry = LedgerEntry.objects.create(
                key=key,
                kind=kind,
                assignment=assignment,
                worker=worker,
                batch=batch,
                amount=cents(amount),
                created_by=by,
                note=note,
            )
    except IntegrityError:  # a concurrent request wrote it first
        return LedgerEntry.objects.get(key=key), False
    logger.info(
        "ledger %s %s $%s batch=%s worker=%s assignment=%s by=%s",
        kind,
        key,
        entry.amount,
        getattr(batch, "pk", None),
        getattr(worker, "pk", None),
        getattr(assignment, "pk", None),
        getattr(by, "pk", None) or "system",
    )
    return entry, True


def record_with_fee(*, key: str, kind: str, assignment, worker, batch, amount: Decimal, fee, by, note=""):
    """A payment and the provider's fee on it (a row of its own keyed "fee:<key>", when the fee is
    not zero), each created once: returns (entry, created) of the payment."""
    entry, created = record(
        key=key, kind=kind, assignment=assignment, worker=worker, batch=batch, amount=amount, by=by, note=note
    )
    if fee:
        record(
            key=f"fee:{key}"[: LedgerEntry._meta.get_field("key").max_length],
            kind=LedgerEntry.Kind.FEE,
            assignment=assignment,
            worker=worker,
            batch=batch,
            amount=fee,
            by=by,
        )
    return entry, created


REWARD_KEY = "reward:"  # an approved assignment's reward: this and its id (its fee's: "fee:" and that)


def reward_key(assignment_id: int) -> str:
    """The ledger key of an approved assignment's reward (`REWARD_KEY` and its id)."""
    return f"{REWARD_KEY}{assignment_id}"


def reward_and_fee(provider, batch, reward) -> tuple[Decimal, Decimal]:
    """What approving work of `batch` paid `reward` writes to the ledger: the reward, to the cent, and
    the provider's fee on it (`review.approve`, and the rest of a Prolific session's reward). The
    bonus budget check counts the work still to approve by this rule (`rewards_owed`)."""
    amount = cents(reward)
    return amount, provider.fee(amount, batch.assignments_per_hit)


def rewards_owed(provider, batch, assignments: QuerySet[Assignment]) -> tuple[int, Decimal]:
    """(how many, what their approvals will write to the ledger: rewards and fees by `reward_and_fee`)
    of `assignments`, work of `batch` submitted and not yet decided. Summed per reward (a batch has a
    few pay buckets) in one grouped query, whatever the batch's size."""
    n, total = 0, Decimal("0.00")
    for reward, k in assignments.order_by().values_list("hit__reward").annotate(k=Count("pk")):
        amount, fee = reward_and_fee(provider, batch, reward)
        n, total = n + k, total + k * (amount + fee)
    return n, total


def bonus_key(token: str) -> str:
    """The ledger key of the bonus sent by the form `token` (`review.send_bonus`), whoever writes it:
    the form, or a provider's sync that finds the bonus paid and its row missing (Prolific)."""
    return f"bonus:{token}"
