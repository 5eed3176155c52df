"""Prolific bonuses, beyond one pay call (`decisions.pay_bonus`): a bulk bonus checked against the
batch's budget (`pay_bonus`), paid bonuses whose ledger rows are missing recorded by the sync
(`record_paid_bonuses`), and a bonus of unknown outcome settled by a lead (`settle_unknown_bonus`).
A batch's bonuses take turns (`money_budget.bonus_turn`) from the budget check until recorded."""

import logging
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from hits.models import Assignment, Batch
from hits.money import cents
from hits.provider_interface import ProviderError
from hits.providers.prolific.decisions import ASSIGNMENT_KEY, pay_call_sent, record_paid
from hits.providers.prolific.decisions import pay_bonus as _pay_bonus
from hits.providers.prolific.models import ProlificBonus, ProlificBonusSettlement, ProlificSession
from hits.providers.prolific.provider import ProlificProvider
from hits.services import review
from hits.services.money_budget import bonus_passes_budget, bonus_turn

logger = logging.getLogger(__name__)


def record_paid_bonuses(provider, batch: Batch) -> int:
    """Record in the ledger every bonus Prolific was paid for whose rows are not known written (the
    write after the pay call failed, or the process died there), so it is recorded without the form
    being sent again: a bulk bonus's lines and fees (`decisions.record_paid`), a bonus on one HIT
    the row its form writes (`review.record_bonus`). Each row's key is the one the paying request
    uses, so nothing is recorded twice; taken in the batch's bonus turn, so a request paying now
    records its own rows first. Until then the budget check counts them (`decisions.paid_unrecorded`).
    Returns the number of bonuses recorded now."""
    pending = unrecorded_bonuses().filter(batch=batch)
    if not pending.exists():
        return 0
    new = 0
    with bonus_turn(batch.pk):
        for bonus in pending.select_related("batch", "created_by").order_by("pk"):
            new += record_paid_bonus(provider, bonus)
    if new:
        logger.warning("Prolific sync of batch %s recorded %s paid bonus(es) missing from the ledger", batch.pk, new)
    return new


def record_paid_bonus(provider, bonus: ProlificBonus) -> bool:
    """The ledger rows of one paid bonus (one of `unrecorded_bonuses`), as its paying request writes
    them, and its `recorded` mark: True when rows were written now. Call it in the batch's bonus turn.
    A bonus on one HIT stored before bonuses named their HIT (migration 0031) gets the row its form
    writes (its key and fee), naming its participant but no HIT: which one cannot be told."""
    if not bonus.key.startswith(ASSIGNMENT_KEY):
        return record_paid(provider, bonus, by=bonus.created_by) > 0
    (line,) = bonus.lines
    amount, token = Decimal(line["amount"]), bonus.key.removeprefix(ASSIGNMENT_KEY)
    with transaction.atomic():
        if bonus.assignment_id is not None:
            a = Assignment.objects.select_related("hit__batch", "worker").get(pk=bonus.assignment_id)
            _, created = review.record_bonus(a, amount, bonus.reason, token, by=bonus.created_by)
        else:
            worker = ProlificSession.objects.select_related("worker").get(pk=line["session"]).worker
            _, created = review.record_worker_bonus(
                worker, bonus.batch, amount, bonus.reason, token, by=bonus.created_by
            )
        ProlificBonus.objects.filter(pk=bonus.pk).update(recorded=True)
    return created


def unrecorded_bonuses():
    """Paid bonuses whose ledger rows are not known written."""
    return ProlificBonus.objects.filter(state=ProlificBonus.State.PAID, recorded=False)


def record_all_paid_bonuses() -> int:
    """`record_paid_bonuses` for every batch that has one to record, whatever its status: the beat
    syncs only published and stopped batches, and a complete batch's bonus counts all the same."""
    provider, new = ProlificProvider(), 0
    for batch in Batch.objects.filter(pk__in=unrecorded_bonuses().values("batch")).order_by("pk"):
        new += record_paid_bonuses(provider, batch)
    return new


def pay_bonus(
    batch: Batch, amounts: dict, reason: str, *, key: str, by=None, over_budget: bool = False
) -> ProlificBonus:
    """Bonus sessions ({session: amount}) once under `key` (see `decisions.pay_bonus`). A bonus
    whose amounts and fees would take the batch's spend past its budget is refused unless
    `over_budget` is set, as `review.send_bonus` refuses one on a single HIT. The batch's bonuses
    are taken one at a time until each is recorded (`bonus_turn`), so two at once never both pass
    the budget. A bonus whose pay call was sent is recorded, never refused (`pay_call_sent`); one
    Prolific refused paid nothing and is checked again when sent again."""
    provider = ProlificProvider()
    with bonus_turn(batch.pk):
        if not pay_call_sent(key):
            total = sum(
                (cents(a) + provider.fee(cents(a), batch.assignments_per_hit) for a in amounts.values()), Decimal(0)
            )
            with transaction.atomic():  # ordered after a budget change (`set_budget` locks the row)
                over = bonus_passes_budget(Batch.objects.select_for_update(no_key=True).get(pk=batch.pk), total)
            if over and not over_budget:
                raise ProviderError(over)
        return _pay_bonus(provider, batch, amounts, reason, key=key, by=by)


def settle_unknown_bonus(batch: Batch, bonus_id: int, *, paid: bool, by=None) -> tuple[ProlificBonus, bool]:
    """Settle a bonus of unknown outcome (its pay call was sent, its answer lost: SENT) as a lead
    found it on Prolific's site, since Prolific's API has no call that reads a bulk bonus back.
    Paid: it is PAID and its ledger rows are written once, with the keys and fees its paying request
    uses (`record_paid_bonus`), so it counts as spend. Not paid: it goes back to set up, as when
    Prolific refuses the pay call: nothing is recorded, it no longer counts against the budget, and
    its form sent again may pay it. Each settlement (who, when, paid or not) is kept, a row of its own
    (`ProlificBonusSettlement`; the bonus's `settled_by`, `settled_at` are the latest): a bonus settled
    not paid whose form is sent again may be of unknown outcome, and settled, once more.

    Taken in the batch's bonus turn with the row locked, so a double click or two leads at once
    settle it once: the later call finds it settled the same way and returns (bonus, False), or
    finds it otherwise and raises ProviderError saying what it is now. (bonus, True): settled now.
    A single-HIT bonus stored before bonuses named their HIT is recorded too (`record_paid_bonus`)."""
    provider = ProlificProvider()
    with bonus_turn(batch.pk), transaction.atomic():
        bonus = ProlificBonus.objects.select_for_update().filter(pk=bonus_id, batch=batch).first()
        if bonus is None:
            raise ProviderError("This bonus is not one of the batch's.")
        if bonus.state != ProlificBonus.State.SENT:
            if bonus.settled_at is not None and (bonus.state == ProlificBonus.State.PAID) == paid:
                return bonus, False
            raise ProviderError(
                f"Bulk bonus {bonus.bulk_id or bonus.pk} is no longer of unknown outcome: it is "
                f"{bonus.get_state_display().lower()}. Nothing was changed."
            )
        bonus.state = ProlificBonus.State.PAID if paid else ProlificBonus.State.SET_UP
        bonus.error = "" if paid else "Not paid: a lead found it unpaid at Prolific."
        bonus.settled_by, bonus.settled_at = by, timezone.now()
        bonus.save(update_fields=["state", "error", "settled_by", "settled_at", "updated_at"])
        ProlificBonusSettlement.objects.create(bonus=bonus, paid=paid, settled_by=by, settled_at=bonus.settled_at)
        if paid and unrecorded_bonuses().filter(pk=bonus.pk).exists():
            record_paid_bonus(provider, bonus)
    logger.info(
        "Prolific bonus %s of batch %s settled as %s by=%s",
        bonus.bulk_id,
        batch.pk,
        "paid" if paid else "not paid",
        getattr(by, "pk", None),
    )
    return bonus, True
