"""A lead settles a Prolific bonus of unknown outcome (its pay call was sent, its answer lost) as
they found it on Prolific's site, since Prolific's API cannot read a bulk bonus back: paid (its
ledger rows written once, as its paying request would have, and counted as spend) or not paid
(nothing recorded, no longer counted, its form may pay it later). Once, whoever posts it twice;
leads only."""

import threading
import time
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.urls import reverse

from hits.models import LedgerEntry
from hits.provider_interface import ProviderError, get_provider
from hits.providers.prolific import bonuses as prolific_bonuses
from hits.providers.prolific.models import ProlificBonus, ProlificBonusSettlement
from hits.selectors.figures import batch_spend
from hits.services import money_budget, review

from .crowd_data import WAIT
from .test_prolific_bonus_settlement import bonus_rows
from .test_prolific_contract import API, api, published, worked_session  # noqa: F401 (api: the fixture)

FEE = get_provider("prolific").fee


def lost_bonus(api, batch, session, key="form:lost", bulk="BULK6"):  # noqa: F811
    """A bulk bonus of 0.50 whose pay call Prolific answered with a 503: SENT, outcome unknown."""
    api.post(API + "submissions/bonus-payments/", json={"id": bulk, "total_amount": 67})
    pay = api.post(API + f"bulk-bonus-payments/{bulk}/pay/", status=503)
    with pytest.raises(ProviderError, match=r"server error \(503\)"):
        prolific_bonuses.pay_bonus(batch, {session: Decimal("0.50")}, "Thanks", key=key)
    bonus = ProlificBonus.objects.get(key=key)
    assert bonus.state == "sent"
    return bonus, pay


def settle(client, batch, bonus, outcome):
    url = reverse("prolific_settle_bonus", args=[batch.pk, bonus.pk])
    return client.post(url, {"outcome": outcome}, follow=True)


def unsettled(batch) -> Decimal:
    return get_provider("prolific").unsettled_spend(batch)


@pytest.mark.django_db
def test_a_bonus_settled_as_paid_is_recorded_once_and_counts_as_spend(api, client, lead):  # noqa: F811
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001")
    bonus, pay = lost_bonus(api, batch, one)
    spent = batch_spend(batch)["total"]
    assert unsettled(batch) == Decimal("0.50") + FEE(Decimal("0.50"), 3)

    client.force_login(lead)
    first = settle(client, batch, bonus, "paid").content.decode()
    second = settle(client, batch, bonus, "paid").content.decode()  # a double click, or the page sent again

    assert "recorded as paid on Prolific" in first
    assert "already settled as paid by lena-lead" in second
    expected = [("bonus", "PID1", Decimal("0.50"), None), ("fee", "PID1", FEE(Decimal("0.50"), 3), None)]
    assert bonus_rows(batch) == expected
    assert {e.key for e in LedgerEntry.objects.filter(batch=batch, kind="bonus")} == {f"bonus:form:lost:{one.pk}"}
    bonus.refresh_from_db()
    assert (bonus.state, bonus.recorded, bonus.settled_by, bonus.settled_at is not None) == ("paid", True, lead, True)
    # Spend now, not of unknown outcome: counted once in the budget check.
    assert unsettled(batch) == 0
    assert batch_spend(batch)["total"] == spent + Decimal("0.50") + FEE(Decimal("0.50"), 3)
    # Nothing more recorded by the sync, the same form sent again, or a later "not paid".
    prolific_bonuses.record_paid_bonuses(get_provider("prolific"), batch)
    prolific_bonuses.pay_bonus(batch, {one: Decimal("0.50")}, "Thanks", key="form:lost")
    with pytest.raises(ProviderError, match="no longer of unknown outcome: it is paid"):
        prolific_bonuses.settle_unknown_bonus(batch, bonus.pk, paid=False, by=lead)
    assert bonus_rows(batch) == expected and pay.call_count == 1
    assert "outcome unknown" not in client.get(reverse("batch_detail", args=[batch.pk])).content.decode()


@pytest.mark.django_db
def test_a_bonus_settled_as_not_paid_is_not_counted_and_its_form_may_pay_it(api, client, lead):  # noqa: F811
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001")
    two = worked_session(batch, "PID2", "5ab000000000000000000002")
    batch = money_budget.set_budget(batch, money_budget.bonus_spend(batch)["total"] + Decimal("1.50"))
    bonus, pay = lost_bonus(api, batch, one)
    # 0.67 of unknown outcome: a bonus of 1.00 + 0.33 more would pass the budget.
    assert money_budget.bonus_passes_budget(batch, Decimal("1.33")) is not None

    client.force_login(lead)
    page = settle(client, batch, bonus, "not_paid").content.decode()
    assert "marked not paid" in page
    bonus.refresh_from_db()
    assert (bonus.state, bonus.recorded, bonus.settled_by) == ("set_up", False, lead)
    assert bonus_rows(batch) == [] and unsettled(batch) == 0
    assert money_budget.bonus_passes_budget(batch, Decimal("1.33")) is None
    assert "already settled as not paid" in settle(client, batch, bonus, "not_paid").content.decode()
    refused = settle(client, batch, bonus, "paid").content.decode()  # settled otherwise: refused, said plainly
    assert "no longer of unknown outcome" in refused and bonus_rows(batch) == []

    # The same form sent again pays it (set up already: only the pay call), and it is recorded.
    api.post(API + "bulk-bonus-payments/BULK6/pay/", status=202, json={})
    prolific_bonuses.pay_bonus(batch, {one: Decimal("0.50")}, "Thanks", key="form:lost")
    assert ProlificBonus.objects.get(pk=bonus.pk).state == "paid"
    assert bonus_rows(batch) == [
        ("bonus", "PID1", Decimal("0.50"), None),
        ("fee", "PID1", FEE(Decimal("0.50"), 3), None),
    ]
    assert two  # the second participant is there only to show the budget had room once settled


@pytest.mark.django_db
def test_a_single_hit_bonus_settled_as_paid_gets_the_row_its_form_writes(api, client, lead):  # noqa: F811
    """A bonus on one HIT (review.send_bonus): settled as paid, its row is the form's own (keyed by
    the form, naming the HIT), so the form sent again finds it and pays nothing."""
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    assignment = session.assignments().first()
    api.post(API + "submissions/bonus-payments/", json={"id": "BULK7", "total_amount": 66})
    pay = api.post(API + "bulk-bonus-payments/BULK7/pay/", status=504)
    form = {"assignment_id": assignment.pk, "amount": "0.50", "reason": "Thanks", "token": "tok-lost"}
    with pytest.raises(review.ReviewError, match=r"server error \(504\)"):
        review.send_bonus(**form)
    bonus = ProlificBonus.objects.get(key="assignment:tok-lost")
    assert bonus.state == "sent"

    client.force_login(lead)
    settle(client, batch, bonus, "paid")
    expected = [
        ("bonus", "PID1", Decimal("0.50"), assignment.pk),
        ("fee", "PID1", FEE(Decimal("0.50"), 3), assignment.pk),
    ]
    assert bonus_rows(batch) == expected
    entry, created = review.send_bonus(**form)
    assert not created and entry.key == "bonus:tok-lost"
    assert bonus_rows(batch) == expected and pay.call_count == 1


def lost_single_hit_bonus(api, batch, session, token, bulk, *, legacy=False):  # noqa: F811
    """A bonus of 0.50 on the session's first HIT (review.send_bonus) whose pay call Prolific answered
    with a 504: SENT. `legacy`: stored as before migration 0031, naming no HIT."""
    assignment = session.assignments().order_by("pk").first()
    api.post(API + "submissions/bonus-payments/", json={"id": bulk, "total_amount": 66})
    pay = api.post(API + f"bulk-bonus-payments/{bulk}/pay/", status=504)
    form = {"assignment_id": assignment.pk, "amount": "0.50", "reason": "Thanks", "token": token}
    with pytest.raises(review.ReviewError, match=r"server error \(504\)"):
        review.send_bonus(**form)
    bonus = ProlificBonus.objects.get(key=f"assignment:{token}")
    if legacy:
        ProlificBonus.objects.filter(pk=bonus.pk).update(assignment=None)
        bonus.refresh_from_db()
    assert bonus.state == "sent"
    return bonus, pay, form


@pytest.mark.django_db
def test_a_single_hit_bonus_from_before_bonuses_named_their_hit_settled_as_paid_is_recorded_once(
    api,  # noqa: F811
    client,
    lead,
):
    """A bonus on one HIT stored before migration 0031 names no HIT, only its form's token and its
    participant's session. Settled as paid, its row is written all the same, once, with the key and
    fee its form writes (naming no HIT: which one cannot be told), so the lead is told the truth when
    told it is recorded, and neither a double click, the sync nor the form sent again writes more."""
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    bonus, pay, form = lost_single_hit_bonus(api, batch, session, "tok-old", "BULK8", legacy=True)
    spent, cost = batch_spend(batch)["total"], Decimal("0.50") + FEE(Decimal("0.50"), 3)
    assert unsettled(batch) == cost

    client.force_login(lead)
    first = settle(client, batch, bonus, "paid").content.decode()
    second = settle(client, batch, bonus, "paid").content.decode()  # a double click

    assert "recorded as paid on Prolific" in first and "already settled as paid" in second
    expected = [("bonus", "PID1", Decimal("0.50"), None), ("fee", "PID1", FEE(Decimal("0.50"), 3), None)]
    assert bonus_rows(batch) == expected
    assert set(LedgerEntry.objects.filter(batch=batch, kind__in=["bonus", "fee"]).values_list("key", flat=True)) == {
        "bonus:tok-old",
        "fee:bonus:tok-old",
    }
    bonus.refresh_from_db()
    assert (bonus.state, bonus.recorded) == ("paid", True)
    assert unsettled(batch) == 0 and batch_spend(batch)["total"] == spent + cost
    prolific_bonuses.record_paid_bonuses(get_provider("prolific"), batch)
    entry, created = review.send_bonus(**form)  # the old form sent again finds its row
    assert not created and entry.key == "bonus:tok-old"
    other = worked_session(batch, "PID2", "5ab000000000000000000002").assignments().first()
    with pytest.raises(review.ReviewError, match="already used for another assignment"):
        review.send_bonus(**{**form, "assignment_id": other.pk})  # its token on someone else's work
    assert bonus_rows(batch) == expected and pay.call_count == 1


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["author", "worker", "outsider", "anonymous"])
def test_only_a_lead_may_settle_a_bonus(api, client, request, role):  # noqa: F811
    batch = published(api)
    bonus, _ = lost_bonus(api, batch, worked_session(batch, "PID1", "5ab000000000000000000001"))
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    url = reverse("prolific_settle_bonus", args=[batch.pk, bonus.pk])
    response = client.post(url, {"outcome": "paid"})
    if role == "anonymous":
        assert response.status_code == 302 and "login" in response["Location"]
    else:
        assert response.status_code == 403
    assert ProlificBonus.objects.get(pk=bonus.pk).state == "sent" and bonus_rows(batch) == []


@pytest.mark.django_db
def test_settling_is_a_post_of_a_lead_with_an_outcome_and_a_bonus_of_this_batch(api, client, lead):  # noqa: F811
    batch = published(api)
    bonus, _ = lost_bonus(api, batch, worked_session(batch, "PID1", "5ab000000000000000000001"))
    client.force_login(lead)
    url = reverse("prolific_settle_bonus", args=[batch.pk, bonus.pk])
    assert client.get(url).status_code == 405
    assert "Say whether Prolific paid" in client.post(url, {"outcome": "maybe"}, follow=True).content.decode()
    other = reverse("prolific_settle_bonus", args=[batch.pk, bonus.pk + 999])
    assert "not one of the batch" in client.post(other, {"outcome": "paid"}, follow=True).content.decode()
    assert ProlificBonus.objects.get(pk=bonus.pk).state == "sent"


def waiting_connections(n: int) -> bool:
    """Whether `n` other connections to the test database wait for a lock (polled; WAIT guards a hang)."""
    deadline = time.monotonic() + WAIT
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0] >= n:
                return True
            time.sleep(0.01)
    return False


@pytest.mark.postgres_only("two connections at once: the bonus's row and the batch's bonus turn order them")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["bulk", "single HIT from before 0031"])
def test_two_leads_settling_at_once_settle_it_once(api, make_user, kind):  # noqa: F811
    """Two leads press *Paid on Prolific* together: both requests are held on the bonus's row until
    both are waiting, then released; one settles it, the other finds it settled, and its rows are
    written once. Without the lock both would read "outcome unknown" and both would settle it."""
    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    if kind == "bulk":
        bonus, _ = lost_bonus(api, batch, session)
    else:
        bonus, _, _ = lost_single_hit_bonus(api, batch, session, "tok-old", "BULK8", legacy=True)
    leads = [make_user("lena-lead", "lead"), make_user("leo-lead", "lead")]
    results, errors = [], []

    def run(user):
        try:
            results.append(prolific_bonuses.settle_unknown_bonus(batch, bonus.pk, paid=True, by=user)[1])
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(user,)) for user in leads]
    with transaction.atomic():
        ProlificBonus.objects.select_for_update().get(pk=bonus.pk)  # hold the row: both must queue
        for thread in threads:
            thread.start()
        assert waiting_connections(2), "the two settlements did not both wait"
    for thread in threads:
        thread.join()
    assert errors == [] and sorted(results) == [False, True]
    assert len(bonus_rows(batch)) == 2  # the bonus and its fee, once


@pytest.mark.django_db
def test_each_settlement_of_a_bonus_settled_twice_keeps_who_and_when(api, make_user, lead):  # noqa: F811
    """Settled not paid, a bonus's form may be sent again, its answer lost again and the bonus
    settled once more: the bonus kept only the last settlement's lead and time, so who had found it
    unpaid, and when, was lost. Each settlement is kept."""
    batch = published(api)
    one = worked_session(batch, "PID1", "5ab000000000000000000001")
    bonus, _ = lost_bonus(api, batch, one)
    prolific_bonuses.settle_unknown_bonus(batch, bonus.pk, paid=False, by=lead)
    api.post(API + "bulk-bonus-payments/BULK6/pay/", status=503)  # sent again: its answer lost again
    with pytest.raises(ProviderError, match=r"server error \(503\)"):
        prolific_bonuses.pay_bonus(batch, {one: Decimal("0.50")}, "Thanks", key="form:lost")
    other = make_user("otto-lead", "lead")
    prolific_bonuses.settle_unknown_bonus(batch, bonus.pk, paid=True, by=other)

    kept = list(ProlificBonusSettlement.objects.filter(bonus=bonus).values_list("paid", "settled_by", "settled_at"))
    assert [(paid, who) for paid, who, _ in kept] == [(False, lead.pk), (True, other.pk)]
    assert kept[0][2] <= kept[1][2]
    bonus.refresh_from_db()
    assert (bonus.state, bonus.settled_by, bonus.settled_at) == ("paid", other, kept[1][2])
    assert bonus_rows(batch) == [
        ("bonus", "PID1", Decimal("0.50"), None),
        ("fee", "PID1", FEE(Decimal("0.50"), 3), None),
    ]
