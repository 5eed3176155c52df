"""An MTurk bonus whose pay call was sent and that MTurk never listed paid (its answer was lost, or
MTurk closed) stayed `sent`, counted as spent, and no page showed it: the lead could not tell why
the budget had less room, nor which bonus to look up. The ledger page now lists such bonuses a day
after their call, with worker, assignment, amount and what to do, and a re-check that asks MTurk
again (the sync of that bonus): listed paid, its ledger row is written once, whatever the number
of clicks; not listed, it stays, with the date MTurk was asked. Nothing forgets a bonus."""

import hashlib
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from hits.ledger import bonus_key
from hits.models import LedgerEntry
from hits.providers.mturk import bonuses as mturk_bonuses
from hits.providers.mturk.models import MTurkBonus
from hits.services import money_budget, review

from .test_mturk import stub  # noqa: F401 (the fixture)
from .test_mturk_bonus_ledger import FORM, approved_work, expect_bonus

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

REASON = f"Careful work (ref {hashlib.sha256(b'form-db').hexdigest()[:10]})"


def lost_answer(stub, days=2):  # noqa: F811
    """A bonus whose SendBonus answer was lost `days` ago: marked sent, counted as spent."""
    batch, hit, a = approved_work(stub)
    stub.add_client_error(
        "send_bonus", service_error_code="ServiceFault", service_message="Try again", expected_params=expect_bonus(stub)
    )
    with pytest.raises(review.ReviewError, match="may have been paid"):
        review.send_bonus(assignment_id=a.pk, **FORM)
    MTurkBonus.objects.filter(token="form-db").update(created_at=timezone.now() - timedelta(days=days))
    return batch, MTurkBonus.objects.get(token="form-db")


def recheck(client, batch, bonus):
    return client.post(reverse("mturk_bonus_recheck", args=[batch.pk, bonus.pk]), follow=True)


def test_the_ledger_page_lists_a_bonus_left_sent_for_a_day_with_what_to_do(stub, client, lead):  # noqa: F811
    batch, bonus = lost_answer(stub)
    client.force_login(lead)
    page = client.get(reverse("batch_ledger", args=[batch.pk])).content.decode()
    assert 'id="mturk-unsettled"' in page
    row = page[page.index(f'id="mturk-bonus-{bonus.pk}"') :]
    row = row[: row.index("</tr>")]
    assert "A1W" in row and "ASG1" in row and "$0.50" in row and "2\xa0days ago" in row
    assert "never answered" in row and "Re-check with MTurk" in row
    assert "MTurk requester site" in page
    # The batch page's "… of bonuses not yet in the ledger" (said with a budget) leads there.
    batch.budget = Decimal("100.00")
    batch.save(update_fields=["budget"])
    detail = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    link = detail[detail.index('id="unsettled-bonuses"') :]
    assert link.startswith(f'id="unsettled-bonuses" href="{reverse("batch_ledger", args=[batch.pk])}#mturk-unsettled">')
    assert "$0.60 of bonuses not yet in the ledger</a>" in link  # $0.50 and its 20% fee


def test_the_batch_page_without_a_budget_says_the_bonuses_not_yet_in_the_ledger(stub, client, lead):  # noqa: F811
    """Code review: the batch page said "… of bonuses not yet in the ledger", and linked to their list,
    only when the batch had a budget: without one, money that may have left was not mentioned."""
    batch, bonus = lost_answer(stub)
    assert batch.budget is None
    client.force_login(lead)
    detail = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    hint = detail[detail.index('id="budget-hint"') :]
    hint = hint[: hint.index("</span>")]
    link = f'<a id="unsettled-bonuses" href="{reverse("batch_ledger", args=[batch.pk])}#mturk-unsettled">'
    assert f"{link}$0.60 of bonuses not yet in the ledger</a>" in hint  # $0.50 and its 20% fee, as money
    assert "no budget, so bonuses are not limited" in hint
    assert money_budget.unsettled_bonuses(batch) == "$0.60 of bonuses not yet in the ledger"
    review.record_bonus(bonus.assignment, bonus.amount, bonus.reason, bonus.token)
    assert money_budget.unsettled_bonuses(batch) == ""  # in the ledger: nothing left to say
    assert 'id="unsettled-bonuses"' not in client.get(reverse("batch_detail", args=[batch.pk])).content.decode()


def test_a_bonus_sent_within_the_day_or_in_the_ledger_is_not_listed(stub, client, lead):  # noqa: F811
    batch, bonus = lost_answer(stub, days=0)
    assert mturk_bonuses.stale_bonuses(batch) == []  # its call may still be under way
    later = timezone.now() + timedelta(days=2)
    assert mturk_bonuses.stale_bonuses(batch, now=later) == [bonus]
    review.record_bonus(bonus.assignment, bonus.amount, bonus.reason, bonus.token)  # its row written
    assert mturk_bonuses.stale_bonuses(batch, now=later) == []


def test_a_recheck_mturk_lists_paid_writes_the_ledger_row_once_even_clicked_twice(stub, client, lead):  # noqa: F811
    batch, bonus = lost_answer(stub)
    client.force_login(lead)
    expect_bonus(stub, listed=[REASON])  # MTurk did pay it
    page = recheck(client, batch, bonus).content.decode()
    assert "is paid at MTurk: it is in the ledger, once" in page
    (row,) = LedgerEntry.objects.filter(key=bonus_key("form-db"))
    assert row.amount == bonus.amount and row.created_by is None
    bonus.refresh_from_db()
    assert (bonus.state, bonus.recorded, bonus.checked_at is not None) == ("paid", True, True)
    assert money_budget.bonus_spend(batch)["unsettled"] == 0
    assert 'id="mturk-unsettled"' not in page

    recheck(client, batch, bonus)  # a second click: no MTurk call (the Stubber holds none), no row
    assert LedgerEntry.objects.filter(key=bonus_key("form-db")).count() == 1
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1


def test_a_recheck_mturk_does_not_list_keeps_the_bonus_counted_with_the_date_asked(stub, client, lead):  # noqa: F811
    batch, bonus = lost_answer(stub)
    unsettled = money_budget.bonus_spend(batch)["unsettled"]
    client.force_login(lead)
    expect_bonus(stub, listed=["Another bonus (ref 0000000000)"])
    before = timezone.now()
    page = recheck(client, batch, bonus).content.decode()
    assert "is not listed paid by MTurk" in page and "stays counted as spent" in page
    bonus.refresh_from_db()
    assert bonus.state == MTurkBonus.State.SENT and not bonus.recorded
    assert bonus.checked_at is not None and bonus.checked_at >= before
    assert not LedgerEntry.objects.filter(kind="bonus").exists()
    assert money_budget.bonus_spend(batch)["unsettled"] == unsettled  # still counted
    row = page[page.index(f'id="mturk-bonus-{bonus.pk}"') :]
    assert "never answered" not in row[: row.index("</tr>")]  # the date it was asked instead


def test_a_recheck_mturk_cannot_answer_changes_nothing_and_says_so(stub, client, lead):  # noqa: F811
    batch, bonus = lost_answer(stub)
    client.force_login(lead)
    stub.add_client_error("list_bonus_payments", service_error_code="ServiceFault", service_message="Down")
    page = recheck(client, batch, bonus).content.decode()
    assert "MTurk could not be asked" in page and "still counts as spent" in page
    bonus.refresh_from_db()
    assert (bonus.state, bonus.checked_at) == ("sent", None)


def test_a_recheck_of_another_batchs_bonus_or_by_a_non_lead_is_refused(stub, client, lead, worker):  # noqa: F811
    batch, bonus = lost_answer(stub)
    client.force_login(worker)
    assert client.post(reverse("mturk_bonus_recheck", args=[batch.pk, bonus.pk])).status_code in (302, 403)
    client.force_login(lead)
    page = client.post(reverse("mturk_bonus_recheck", args=[batch.pk, bonus.pk + 99]), follow=True)
    assert "not one of this batch" in page.content.decode()
    assert client.get(reverse("mturk_bonus_recheck", args=[batch.pk, bonus.pk])).status_code == 405
