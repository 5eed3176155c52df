"""A batch's money budget (dollars; the human-unit budget is scoring.drafts.unit_budget): the check before
publishing, raising it, and whether a bonus would pass it."""

import logging
from decimal import Decimal

from django.db import transaction

from config.errors import ServiceError
from hits.models import Batch
from hits.money import MAX_BUDGET, MoneyError, cents, format_money, parse_money
from hits.provider_interface import money_currency
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
    """Set (or clear, with an empty value) the batch's budget in dollars."""
    text = str(value if value is not None else "").strip()
    if not text:
        budget = None
    else:
        try:
            budget = parse_money(text, what="The budget", maximum=MAX_BUDGET)
        except MoneyError as exc:
            raise BudgetError(f"{exc} A budget is between $0.00 and $99,999,999.99.") from None
    batch = Batch.objects.select_for_update().get(pk=batch.pk)
    batch.budget = budget
    batch.save(update_fields=["budget"])
    logger.info("budget batch=%s set to %s by=%s", batch.pk, budget, getattr(by, "pk", None))
    return batch


def bonus_passes_budget(batch: Batch, amount) -> str | None:
    """A message when paying `amount` more would take the batch's spend over its budget, else None.
    `review.send_bonus` asks this with the batch row locked, so the spend it reads is final."""
    if batch.budget is None:
        return None
    try:
        after = batch_spend(batch)["total"] + parse_money(amount, maximum=None)
    except MoneyError:
        return None  # the bonus service refuses the amount itself
    if after <= batch.budget:
        return None
    return (
        f"This bonus takes the batch's spend to {batch_money(batch, after)}, over its budget of "
        f"{batch_money(batch, batch.budget)}. Tick “Pay over the budget” to send it anyway."
    )
