"""A batch's spend is exact cents on both databases (the embedded default stores a DecimalField
as a floating-point number, so SQLite's SUM of ten thousand $0.10 rows is 1000.0000000001588).

The spend read for the budget check and the pages was the raw sum: on SQLite a bonus that brings
the spend exactly to the budget was refused as over it, and the API and pages read a spend a
fraction of a cent off. `hits.selectors.figures` now rounds the summed ledger to the cent."""

from decimal import Decimal

import pytest

from hits.models import Batch, LedgerEntry
from hits.selectors.figures import batch_spend
from hits.services import review
from hits.services.money_budget import bonus_passes_budget

from .crowd_data import published_batch
from .test_money_input import submitted_assignments

pytestmark = [pytest.mark.portable, pytest.mark.django_db]

ROWS = 10_000


def test_ten_thousand_dimes_are_a_thousand_dollars_and_a_bonus_up_to_the_budget_passes():
    batch = published_batch(assignments=3)
    (assignment,) = submitted_assignments(batch, 1)
    review.reject(assignment_id=assignment.pk, feedback="Not paid: only the ledger's rows count here.")
    LedgerEntry.objects.bulk_create(
        LedgerEntry(
            batch=batch, worker=assignment.worker, kind=LedgerEntry.Kind.REWARD, amount=Decimal("0.10"), key=f"r{i}"
        )
        for i in range(ROWS)
    )
    Batch.objects.filter(pk=batch.pk).update(budget=Decimal("1000.05"))
    batch.refresh_from_db()

    spend = batch_spend(batch)
    assert (str(spend["reward"]), str(spend["total"]), str(spend["budget_left"])) == ("1000.00", "1000.00", "0.05")
    assert bonus_passes_budget(batch, "0.05") is None  # exactly the budget: allowed
    assert bonus_passes_budget(batch, "0.06") is not None
