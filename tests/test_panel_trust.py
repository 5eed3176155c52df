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


def test_resuming_after_an_idle_release_counts_against_the_address_bound(client, settings):
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


def test_continuing_an_active_session_is_not_counted(client, settings):
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
