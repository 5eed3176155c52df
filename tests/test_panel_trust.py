"""Issue 45 items 3-6: panel money that matches work and ids that cannot be turned against it."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.utils import timezone

from hits.models import Assignment, Worker
from hits.providers.panel import idle, payouts
from hits.providers.panel.models import PanelSession

from .test_panel import open_panel, start, study_link

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


def _age_held_tasks(seconds: int) -> None:
    Assignment.objects.filter(worker__provider="panel", status=Assignment.Status.ASSIGNED).update(
        created_at=timezone.now() - timedelta(seconds=seconds)
    )


# ---- item 4: resuming after an idle release counts against the address bound ---------------


def test_resuming_after_an_idle_release_counts_against_the_address_bound(client, settings, still_ratelimit_clock):
    settings.PANEL_SESSIONS_PER_ADDRESS = 3
    settings.PANEL_IDLE_SECONDS = 600
    batch = open_panel(k=2, assignments=3)
    assert [start(client, batch, f"FAKE{i}").status_code for i in range(3)] == [302] * 3
    _age_held_tasks(700)
    assert idle.release_idle() == 3
    # Pressing Start again from the same address: no new places (c308ebd took 3 more, each time).
    again = [start(client, batch, f"FAKE{i}") for i in range(3)]
    assert [r.status_code for r in again] == [409] * 3
    assert "Too many sessions" in again[0].content.decode()
    assert not Assignment.objects.filter(worker__provider="panel", status=Assignment.Status.ASSIGNED).exists()
    assert set(PanelSession.objects.values_list("status", flat=True)) == {PanelSession.Status.IDLE}
    # The participant from their own network resumes.
    assert start(client, batch, "FAKE0", REMOTE_ADDR="10.9.8.7").status_code == 302
    assert Assignment.objects.filter(worker__external_id="FAKE0", status=Assignment.Status.ASSIGNED).count() == 1


def test_continuing_an_active_session_is_not_counted(client, settings, still_ratelimit_clock):
    settings.PANEL_SESSIONS_PER_ADDRESS = 1
    batch = open_panel(k=3, assignments=1)
    from .test_panel import answer

    assert start(client, batch, "P1").status_code == 302
    for _ in range(2):
        answer(Assignment.objects.get(worker__external_id="P1", status=Assignment.Status.ASSIGNED))
        assert start(client, batch, "P1").status_code == 302  # the next task of the same session


# ---- item 6: ids that a spreadsheet would run, and the lists -------------------------------


@pytest.mark.parametrize("pid", ["=HYPERLINK(1)", "+1234", "-2+3", "@SUM(A1)"])
def test_ids_beginning_with_a_formula_character_are_refused(client, pid):
    batch = open_panel()
    response = client.get(study_link(batch, pid.replace("+", "%2B")))
    assert response.status_code == 403 and "not beginning with - + @" in response.content.decode()
    assert not Worker.objects.filter(provider="panel").exists()


def test_ids_with_those_characters_inside_still_work(client):
    batch = open_panel()
    response = client.get(study_link(batch, "a-b%2Bc@d"))
    assert response.status_code == 302


def test_both_lists_go_through_the_cell_neutraliser():
    lists = payouts.Lists(
        approvals=["-legacy", "OK1"], bonuses=[("=HYPERLINK(x)", Decimal("1.00")), ("OK1", Decimal("0.5"))]
    )
    assert payouts.approval_text(lists) == "'-legacy\nOK1\n"
    assert payouts.bonus_csv(lists) == "'=HYPERLINK(x),1.00\nOK1,0.50\n"


# ---- item 3: paying per session pays whole sessions only ------------------------------------


def _approve_all(work, lead):
    from hits.services import review

    for a in work:
        review.approve(assignment_id=a.pk, by=lead)


def test_a_partial_session_is_paid_pro_rata_on_the_bonus_list_never_as_a_whole_session(lead):
    from hits.models import HIT, LedgerEntry
    from hits.providers.panel import sessions
    from hits.providers.panel.models import PanelPayment

    from .test_panel import answer, worked

    batch = open_panel(k=3, assignments=1, systems=("abs_bart_out", "abs_t5_out_large"))
    price = HIT.objects.filter(batch=batch).values_list("reward", flat=True).distinct().get()
    whole = worked(batch, "WHOLE")
    assert len(whole) == 3
    # Leaves after 1 of 3 (the session stays open, then idle).
    left = sessions.start_task(batch=batch, participant_id="LEFT")
    answer(left)
    # Arrives when one task is left: does it, gets the code (the session ends at 1 task).
    remaining = batch.hits.count() - 4
    for i in range(remaining - 1):
        answer(sessions.start_task(batch=batch, participant_id=f"FILL{i}"))
    last = worked(batch, "LAST")
    assert len(last) == 1 and PanelSession.objects.get(worker__external_id="LAST").status == "completed"
    _approve_all(whole + [left] + last, lead)

    lists = payouts.lists(batch)
    assert payouts.approval_text(lists) == "WHOLE\n"  # c308ebd: LAST and LEFT too (a whole session each)
    assert dict(lists.bonuses) == {"LEFT": price, "LAST": price}
    assert lists.total == price * 5
    assert payouts.mark_paid(batch, lists.token, by=lead) == (5, price * 5)
    kinds = dict(PanelPayment.objects.values_list("entry__worker__external_id", "paid_list").distinct())
    assert kinds == {"WHOLE": "approval", "LEFT": "bonus", "LAST": "bonus"}
    assert payouts.paid_total(batch) == sum(LedgerEntry.objects.filter(batch=batch).values_list("amount", flat=True))


def test_a_session_approved_in_parts_is_paid_pro_rata_not_twice(lead):
    from hits.models import HIT

    from .test_panel import worked

    batch = open_panel(k=2, assignments=1)
    price = HIT.objects.filter(batch=batch).values_list("reward", flat=True).distinct().get()
    work = worked(batch, "P1")
    _approve_all(work[:1], lead)
    first = payouts.lists(batch)
    assert first.approvals == [] and first.bonuses == [("P1", price)]
    payouts.mark_paid(batch, first.token, by=lead)
    _approve_all(work[1:], lead)
    second = payouts.lists(batch)
    # The first task was paid as a bonus: the study reward (both tasks) would pay it twice.
    assert second.approvals == [] and second.bonuses == [("P1", price)]


# ---- item 3: a completion code per participant, checked when the lists are marked paid -----


def test_each_participant_gets_their_own_code_and_a_passed_on_code_is_refused(client, lead):
    from hits.providers.panel.config import completion_code
    from hits.providers.panel.models import PanelPayment
    from hits.providers.panel.views import session_url

    from .test_panel import DONE_URL, answer

    batch = open_panel(k=1, assignments=2)
    codes = {}
    for pid in ("ALICE", "BOB"):
        assert start(client, batch, pid).status_code == 302
        answer(Assignment.objects.get(worker__external_id=pid))
        page = client.get(session_url(batch, pid)).content.decode()
        codes[pid] = completion_code(batch, pid)
        assert codes[pid] in page and DONE_URL.format(code=codes[pid]) in page
    assert codes["ALICE"] != codes["BOB"]  # c308ebd: one code for the batch
    assert completion_code(batch, "ALICE") == codes["ALICE"]  # stable
    other = open_panel(k=1, assignments=2, completion_code="LAB7")
    assert completion_code(other, "ALICE").startswith("LAB7-") and completion_code(other, "ALICE") != codes["ALICE"]
    _approve_all(list(Assignment.objects.filter(hit__batch=batch)), lead)
    lists = payouts.lists(batch)
    assert lists.approvals == ["ALICE", "BOB"]
    # CAROL got ALICE's code passed on; BOB entered nothing: refused, nothing marked.
    with pytest.raises(payouts.PayoutError) as refused:
        payouts.mark_paid(batch, lists.token, by=lead, codes=f"ALICE,{codes['ALICE']}\nCAROL,{codes['ALICE']}\n")
    assert "not the code made for them: CAROL" in str(refused.value)
    assert "on the approval list without a code: BOB" in str(refused.value)
    with pytest.raises(payouts.PayoutError, match="id,code"):
        payouts.mark_paid(batch, lists.token, by=lead, codes="ALICE\n")
    assert not PanelPayment.objects.exists()
    # Through the page: refused with the message, then marked with the right codes (tab-separated too).
    client.force_login(lead)
    from django.urls import reverse

    bad = client.post(
        reverse("panel_paid", args=[batch.pk]), {"rows": lists.token, "codes": f"BOB,{codes['ALICE']}"}, follow=True
    )
    assert "not the code made for them: BOB" in bad.content.decode() and not PanelPayment.objects.exists()
    good = f"ALICE\t{codes['ALICE'].lower()}\nBOB,{codes['BOB']}\n"
    assert payouts.mark_paid(batch, lists.token, by=lead, codes=good)[0] == 2


# ---- item 5 (part): each id's first-seen time and address on the sessions table ------------


def test_the_sessions_table_shows_each_ids_first_seen_time_and_address(client, lead):
    from django.urls import reverse

    batch = open_panel(k=2, assignments=2)
    assert start(client, batch, "ALICE", REMOTE_ADDR="10.1.2.3").status_code == 302
    assert start(client, batch, "BOB", REMOTE_ADDR="10.4.5.6").status_code == 302
    assert start(client, batch, "ALICE", REMOTE_ADDR="10.9.9.9").status_code == 302  # resumed: the first stays
    first = PanelSession.objects.get(worker__external_id="ALICE")
    assert first.address == "10.1.2.3"
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    table = page[page.index('id="panel-sessions"') :]
    table = table[: table.index("</table>")]
    assert "<th>First seen</th><th>Address</th>" in table
    assert "10.1.2.3" in table and "10.4.5.6" in table and "10.9.9.9" not in table
    assert timezone.localtime(first.created_at).strftime("%Y-%m-%d %H:%M:%S") in table
