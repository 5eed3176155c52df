"""MTurk bonuses whose ledger rows are not known written, recorded by the sync: a bonus paid whose
ledger write failed after SendBonus succeeded (the request raised a DatabaseError, or the process
died there), and a bonus of unknown outcome (its call's answer was lost) that MTurk lists paid.
Each row has the key its form writes (`hits.ledger.bonus_key`), so it is written once, whoever
writes it; until then the budget check counts the bonus as spent (`MTurkProvider.unsettled_spend`)."""

import logging

from django.db import transaction
from django.utils import timezone

from hits.models import Batch
from hits.provider_interface import ProviderError
from hits.providers.mturk.models import MTurkBonus
from hits.providers.mturk.provider import MTurkProvider
from hits.services import review
from hits.services.money_budget import bonus_turn

logger = logging.getLogger(__name__)


def unrecorded_bonuses():
    """Bonuses whose pay call was sent (paid, or perhaps paid) and whose ledger row is not known written."""
    return MTurkBonus.objects.filter(recorded=False, state__in=[MTurkBonus.State.SENT, MTurkBonus.State.PAID])


def record_paid_bonuses(provider: MTurkProvider, batch: Batch) -> int:
    """Write the ledger row of each of the batch's paid bonuses that lacks one, and mark it recorded;
    a bonus of unknown outcome is asked of MTurk (ListBonusPayments) and, listed paid, settled paid
    first (once: paid is final). One MTurk does not list stays sent and counted as spent: its form
    sent again pays it once. Taken in the batch's bonus turn, so a request paying now records its
    own row first. Returns the number of rows written now."""
    pending = unrecorded_bonuses().filter(batch=batch)
    if not pending.exists():
        return 0
    new = 0
    with bonus_turn(batch.pk):
        for bonus in pending.select_related("assignment__hit__batch", "assignment__worker", "created_by").order_by(
            "pk"
        ):
            a = bonus.assignment
            if bonus.state == MTurkBonus.State.SENT:
                try:
                    paid = provider.paid_at_mturk(a, bonus.reason, bonus.token)
                except ProviderError as exc:
                    logger.warning("MTurk bonus %s: could not tell whether it was paid: %s", bonus.pk, exc)
                    continue
                if not paid:
                    continue
                MTurkBonus.objects.filter(pk=bonus.pk, state=MTurkBonus.State.SENT).update(
                    state=MTurkBonus.State.PAID, settled_at=timezone.now(), updated_at=timezone.now()
                )
            with transaction.atomic():
                _, created = review.record_bonus(a, bonus.amount, bonus.reason, bonus.token, by=bonus.created_by)
                MTurkBonus.objects.filter(pk=bonus.pk).update(recorded=True)
            new += created
    if new:
        logger.warning("MTurk sync of batch %s recorded %s paid bonus(es) missing from the ledger", batch.pk, new)
    return new


def record_all_paid_bonuses() -> int:
    """`record_paid_bonuses` of every batch that has one to record, whatever its status (a complete
    batch is no longer synced, and its bonus counts all the same). A batch MTurk cannot be asked
    about now is left for the next run."""
    provider, new = MTurkProvider(), 0
    for batch in Batch.objects.filter(pk__in=unrecorded_bonuses().values("batch")).order_by("pk"):
        new += record_paid_bonuses(provider, batch)
    return new
