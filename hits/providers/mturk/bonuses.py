"""MTurk bonuses whose ledger rows are not known written, recorded by the sync: a bonus paid whose
ledger write failed after SendBonus succeeded (the request raised a DatabaseError, or the process
died there), and a bonus of unknown outcome (its call's answer was lost) that MTurk lists paid.
Each row has the key its form writes (`hits.ledger.bonus_key`), so it is written once, whoever
writes it; until then the budget check counts the bonus as spent (`MTurkProvider.unsettled_spend`)."""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from hits.models import Batch
from hits.provider_interface import ProviderError
from hits.providers.mturk.models import MTurkBonus
from hits.providers.mturk.provider import MTurkProvider, unsettled_marks
from hits.services import review
from hits.services.money_budget import bonus_turn

logger = logging.getLogger(__name__)

# A bonus counted as spent this long after its pay call, and still not in the ledger, is shown to
# the lead (the ledger page): by then the sync (every five minutes) has asked MTurk many times.
STALE_AFTER = timedelta(days=1)


def unrecorded_bonuses():
    """Bonuses whose pay call was sent (paid, or perhaps paid) and whose ledger row is not known written."""
    return MTurkBonus.objects.filter(recorded=False, state__in=[MTurkBonus.State.SENT, MTurkBonus.State.PAID])


def record_paid_bonuses(provider: MTurkProvider, batch: Batch, *, only: int | None = None, strict=False) -> int:
    """Write the ledger row of each of the batch's paid bonuses that lacks one, and mark it recorded;
    a bonus of unknown outcome is asked of MTurk (ListBonusPayments) and, listed paid, settled paid
    first (once: paid is final). One MTurk does not list stays sent and counted as spent: its form
    sent again pays it once. MTurk is asked before the batch's bonus turn (a slow or unreachable
    MTurk never holds the lead's bonuses up; what it lists paid stays paid); the rows are written in
    the turn, so a request paying now records its own row first. Returns the rows written now.
    `only`: that bonus of the batch alone (the lead's re-check); `strict`: MTurk's failure to answer
    is raised (ProviderError), not left for the next run. Each bonus MTurk answered about records
    when (`checked_at`)."""
    pending = unrecorded_bonuses().filter(batch=batch)
    if only is not None:
        pending = pending.filter(pk=only)
    if not pending.exists():
        return 0
    unknown = pending.filter(state=MTurkBonus.State.SENT).select_related("assignment__hit__batch").order_by("pk")
    listed = [bonus.pk for bonus in unknown if _listed(provider, bonus, strict)]
    new = 0
    with bonus_turn(batch.pk):
        now = timezone.now()
        MTurkBonus.objects.filter(pk__in=listed, state=MTurkBonus.State.SENT).update(
            state=MTurkBonus.State.PAID, settled_at=now, updated_at=now
        )
        paid = pending.filter(state=MTurkBonus.State.PAID)
        for bonus in paid.select_related("assignment__hit__batch", "assignment__worker", "created_by").order_by("pk"):
            with transaction.atomic():
                _, created = review.record_bonus(
                    bonus.assignment, bonus.amount, bonus.reason, bonus.token, by=bonus.created_by
                )
                MTurkBonus.objects.filter(pk=bonus.pk).update(recorded=True)
            new += created
    if new:
        logger.warning("MTurk sync of batch %s recorded %s paid bonus(es) missing from the ledger", batch.pk, new)
    return new


def _listed(provider: MTurkProvider, bonus: MTurkBonus, strict: bool = False) -> bool:
    """Whether MTurk lists the bonus of unknown outcome paid (the date it answered is kept); not when
    it cannot be asked now (raised when `strict`)."""
    try:
        listed = provider.paid_at_mturk(bonus.assignment, bonus.reason, bonus.token)
    except ProviderError as exc:
        if strict:
            raise
        logger.warning("MTurk bonus %s: could not tell whether it was paid: %s", bonus.pk, exc)
        return False
    MTurkBonus.objects.filter(pk=bonus.pk).update(checked_at=timezone.now())
    return listed


def stale_bonuses(batch: Batch, now=None) -> list[MTurkBonus]:
    """The batch's bonuses counted as spent for longer than `STALE_AFTER` whose ledger row is not
    written (`unsettled_marks`): a pay call whose answer was lost that MTurk never listed paid (or
    MTurk could not be asked), oldest first, with their assignment and worker. Reads only."""
    cutoff = (now or timezone.now()) - STALE_AFTER
    marks = batch.mturk_bonuses.filter(created_at__lte=cutoff).select_related("assignment__worker")
    return unsettled_marks(batch, marks.order_by("created_at", "pk"))


def recheck_bonus(batch: Batch, bonus_id: int, provider: MTurkProvider | None = None) -> MTurkBonus:
    """The lead's re-check of one of the batch's bonuses: the sync of that bonus alone
    (`record_paid_bonuses`). Listed paid at MTurk, its ledger row is written, once (a second re-check
    writes nothing); not listed, it stays sent and counted as spent, with the date MTurk was asked.
    Nothing here forgets a bonus. Raises ProviderError when MTurk cannot be asked (nothing changes)."""
    bonus = MTurkBonus.objects.filter(batch=batch, pk=bonus_id).first()
    if bonus is None:
        raise ProviderError("That bonus is not one of this batch's MTurk bonuses.")
    record_paid_bonuses(provider or MTurkProvider(), batch, only=bonus.pk, strict=True)
    bonus.refresh_from_db()
    return bonus


def record_all_paid_bonuses() -> int:
    """`record_paid_bonuses` of every batch that has one to record, whatever its status (a complete
    batch is no longer synced, and its bonus counts all the same). A batch MTurk cannot be asked
    about now is left for the next run."""
    provider, new = MTurkProvider(), 0
    for batch in Batch.objects.filter(pk__in=unrecorded_bonuses().values("batch")).order_by("pk"):
        new += record_paid_bonuses(provider, batch)
    return new
