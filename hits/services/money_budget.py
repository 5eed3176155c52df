"""A batch's money budget (dollars; the human-unit budget is scoring.drafts.unit_budget): the check before
publishing, raising it, and whether a bonus would pass it."""

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal

from django.db import DatabaseError, connection, transaction

from config.errors import ServiceError
from hits.batch_fields import FIELDS, money_refusal
from hits.models import Batch
from hits.money import MoneyError, cents, format_money, parse_money
from hits.provider_interface import get_provider, money_currency
from hits.selectors.figures import batch_spend

logger = logging.getLogger(__name__)


class BudgetError(ServiceError):
    """A refusal because of the budget, with a message for the lead."""


def batch_money(batch: Batch, amount) -> str:
    """An amount of the batch's money as its pages show it, in its provider's currency ('£0.25')."""
    return format_money(amount, money_currency(batch))


def over_budget_message(batch: Batch, estimate: Decimal) -> str | None:
    """Why the batch may not be published, or None when its estimate fits its budget (or it has none)."""
    if batch.budget is None or cents(estimate) <= cents(batch.budget):
        return None
    cost, budget = batch_money(batch, estimate), batch_money(batch, batch.budget)
    return (
        f"The estimated cost {cost} exceeds the budget {budget}: "
        f"raise the budget to at least {cost}, or lower the rewards or assignments."
    )


@transaction.atomic
def set_budget(batch: Batch, value, by=None) -> Batch:
    """Set (or clear, with an empty value) the batch's budget, in its currency. An amount out of
    bounds is refused by the one rule of the batch form, the API and `BatchSpec`
    (`hits.batch_fields.money_refusal`), in its words."""
    text = str(value if value is not None else "").strip()
    if not text:
        budget = None
    else:
        currency = money_currency(batch)
        try:
            budget = parse_money(text, what="The budget", minimum=None, currency=currency)
        except MoneyError as exc:  # not an amount: a word, a decimal comma, a fraction of a cent
            raise BudgetError(str(exc)) from None
        if refusal := money_refusal(FIELDS["budget"], budget, currency):  # the form's, the API's
            raise BudgetError(refusal)
    batch = Batch.objects.select_for_update().get(pk=batch.pk)
    batch.budget = budget
    batch.save(update_fields=["budget"])
    logger.info("budget batch=%s set to %s by=%s", batch.pk, budget, getattr(by, "pk", None))
    return batch


def budget_confirmation(batch: Batch, estimate: Decimal | None = None) -> tuple[str, bool]:
    """(What the batch page says once the budget is set, whether it is a warning): the amount, and
    plainly what it blocks when it
    is below the money the batch already has spent or owes (`bonus_spend`: bonuses are then refused
    unless the lead ticks "Pay over the budget"; approvals are never held to the budget) or, for a
    draft, below its `estimate` (publishing is refused: `over_budget_message`). Such a budget is
    accepted (a lead may want to stop bonuses), never silently."""
    if batch.budget is None:
        return "Budget removed.", False
    said = f"Budget set to {batch_money(batch, batch.budget)}"
    if batch.status == Batch.Status.DRAFT:
        if estimate is not None and cents(estimate) > cents(batch.budget):
            return (
                f"{said}: below the estimated cost {batch_money(batch, estimate)}, "
                "so publishing is refused until the budget is raised."
            ), True
        return f"{said}.", False
    spent = bonus_spend(batch)["total"]
    if cents(spent) > cents(batch.budget):
        return (
            f"{said}: below the {batch_money(batch, spent)} already spent or owed, so every bonus is "
            "refused unless “Pay over the budget” is ticked; approving work still pays its reward."
        ), True
    return f"{said}.", False


# The PostgreSQL advisory lock of a batch's bonuses (`bonus_turn`): this class in the high bits of
# one bigint key, the batch's id (a BigAutoField) in the low 48.
BONUS_LOCK_CLASS = 7_201 << 48
# Elsewhere (SQLite: the embedded default, one process) a lock of this process per batch, with the
# number of threads holding or waiting for it; kept only while that is not zero (`local_turn`).
local_turns: dict[int, tuple[threading.RLock, list[int]]] = {}
_local_turns_guard = threading.Lock()


@contextmanager
def local_turn(batch_id: int) -> Iterator[None]:
    """`bonus_turn` within this process: the batch's lock, dropped from `local_turns` by the last
    thread to leave it, so a long-lived process keeps one only for the batches in use. A thread
    counts itself in (under the guard) before it waits, so the lock it waits on is never dropped,
    and one coming after the lock was dropped makes a new one: no one holds the old one by then."""
    with _local_turns_guard:
        lock, users = local_turns.setdefault(batch_id, (threading.RLock(), [0]))
        users[0] += 1
    try:
        with lock:
            yield
    finally:
        with _local_turns_guard:
            users[0] -= 1
            if not users[0]:
                del local_turns[batch_id]


@contextmanager
def bonus_turn(batch_id: int) -> Iterator[None]:
    """The batch's bonuses one at a time, from the budget check until the bonus's ledger row is
    committed. A row lock cannot do it: a Prolific bonus commits its own steps and is recorded
    after a pay call made outside any transaction, so a lock held by the transaction of the check
    would end before the money left, and a second bonus would read the spend without the first
    and pass the budget with it. PostgreSQL: an advisory lock of the connection (of its
    transaction when the caller already is in one, so it lasts until that commits). A provider
    whose bonus commits its own steps refuses to run inside a caller's transaction (its first step
    is a durable atomic block): that transaction's rollback after the pay call would take its marks
    and this lock with it, and the next bonus would pass the budget with the room the money took."""
    if connection.vendor != "postgresql":
        with local_turn(batch_id):
            yield
        return
    in_transaction = connection.in_atomic_block
    with connection.cursor() as cursor:
        lock = "pg_advisory_xact_lock" if in_transaction else "pg_advisory_lock"
        cursor.execute(f"SELECT {lock}(%s)", [BONUS_LOCK_CLASS + batch_id])
    try:
        yield
    finally:
        if not in_transaction:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s)", [BONUS_LOCK_CLASS + batch_id])
            except DatabaseError:
                connection.close()  # a lost connection's locks went with it; never keep a live one held


def bonus_spend(batch: Batch) -> dict:
    """What a bonus's budget check counts as the batch's spend: `owed`, the rewards and fees that
    approving its `submitted` work still to approve or reject will write to the ledger
    (`CrowdProvider.owed_rewards`: approvals are never held to the budget, so a bonus must leave them
    room); `unsettled`, the money that left or may have left at the provider without a ledger row
    (`CrowdProvider.unsettled_spend`: a pay call whose answer was lost, a bonus paid whose ledger
    write failed until the sync writes it); `ledger`, the ledger's total; `total` their sum;
    `owed_for`, what the owed money pays as the refusal and the batch page name it; and
    `room` what is left of the budget for bonuses and their fees (None without a budget).

    The owed rewards are read before the ledger: an approval committed in between is then counted
    twice (the safe way), never missed; an approved assignment is never in the owed rewards (its
    ledger row is written with its approval), so its reward counts once, in the ledger."""
    provider = get_provider(batch.provider)
    submitted, owed = provider.owed_rewards(batch)
    unsettled = provider.unsettled_spend(batch)
    ledger = batch_spend(batch)["total"]
    total = ledger + unsettled + owed
    room = batch.budget - total if batch.budget is not None else None
    return {
        "ledger": ledger,
        "unsettled": unsettled,
        "owed": owed,
        "submitted": submitted,
        "owed_for": _submitted(submitted),
        "total": total,
        "room": room,
    }


def unsettled_bonuses(batch: Batch, spend: dict | None = None) -> str:
    """What the batch page says of the money that left or may have left at the provider without a
    ledger row (`CrowdProvider.unsettled_spend`: a bonus whose pay call's answer was lost, a paid
    one whose row is not written yet), with or without a budget: "$0.60 of bonuses not yet in the
    ledger" in the batch's money (`batch_money`), linked to the ledger page's list of them; "" when
    there is none. `spend`: the batch's `bonus_spend`, when the page has read it (with a budget)."""
    unsettled = spend["unsettled"] if spend is not None else get_provider(batch.provider).unsettled_spend(batch)
    return f"{batch_money(batch, unsettled)} of bonuses not yet in the ledger" if cents(unsettled) else ""


def bonus_passes_budget(batch: Batch, amount) -> str | None:
    """A message when paying `amount` more would take the batch's spend over its budget, else None.
    Asked inside `bonus_turn`, so the spend it reads holds every bonus decided before. The spend
    (`bonus_spend`) counts the ledger; the money that left or may have left at the provider without
    a ledger row, so a lead never passes the budget because an outcome is unknown or a row is late;
    and the rewards (with fees) owed for work submitted and still to approve or reject, so bonuses
    paid before the approvals never take the room those rewards need (without them a $500 budget
    paid $500 of bonuses, and the approvals then took the batch past it). Rewards are not held to
    the budget (publishing is: its estimate counts every reward), so an approval never waits for this
    turn: one committed before the check is in the spend it reads, one committed after it comes
    after this bonus, as if it had come later. A rejection frees its reward's room."""
    if batch.budget is None:
        return None
    try:
        amount = parse_money(amount, maximum=None)
    except MoneyError:
        return None  # the bonus service refuses the amount itself
    spend = bonus_spend(batch)
    after = spend["total"] + amount
    if after <= batch.budget:
        return None
    counted = [
        f"{batch_money(batch, spend['owed'])} for {spend['owed_for']} still to approve" if spend["owed"] else "",
        f"{batch_money(batch, spend['unsettled'])} of bonuses paid or perhaps paid and not yet in the ledger"
        if spend["unsettled"]
        else "",
    ]
    including = " and ".join(part for part in counted if part)
    return (
        f"This bonus takes the spend of batch “{batch.name}” to {batch_money(batch, after)}"
        f"{f' (including {including})' if including else ''}, over its budget of "
        f"{batch_money(batch, batch.budget)}. Tick “Pay over the budget” to send it anyway."
    )


def _submitted(n: int) -> str:
    """'3 submitted HITs' rewards', as the refusal names the rewards (with their fees) still to approve."""
    return "1 submitted HIT's reward" if n == 1 else f"{n} submitted HITs' rewards"
