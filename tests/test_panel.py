"""A participant panel through a study link and a completion code (issue 31): signed entry and
participant tokens, places taken only when a task starts, idle places given back, screening,
completion, and paying at the panel from the lists the ledger makes."""

import re
from datetime import timedelta
from decimal import Decimal
from urllib.parse import parse_qs, urlparse

import pytest
from django.urls import reverse
from django.utils import timezone

from hits.batch_fields import BatchSpec
from hits.models import HIT, Assignment, LedgerEntry, QualificationAttempt, Worker
from hits.provider_interface import ProviderError, get_provider
from hits.providers.panel import idle, payouts, sessions, tokens
from hits.providers.panel.config import completion_code
from hits.providers.panel.models import PanelPayment, PanelSession
from hits.providers.panel.views import session_url
from hits.services import batches, review
from hits.services.qualification import answer_key, build_test
from hits.services.submission import read_token, submit_assignment

from .crowd_data import all_answers, demo_dataset


def task_link_assignment(location: str) -> int:
    """The assignment a /panel/task/<token>/ link opens."""
    return read_token(location.rstrip("/").rsplit("/", 1)[1])[0]


pytestmark = [pytest.mark.django_db, pytest.mark.portable]

DONE_URL = "https://panel.example/done?cc={code}"


def open_panel(k=2, assignments=2, test=None, systems=("abs_bart_out",), dataset=None, **cfg):
    from annotation.models import Dataset

    dataset = dataset or (test.dataset if test is not None else Dataset.objects.filter(name="demo").first())
    dataset = dataset or demo_dataset()
    batch = batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(
            provider="panel",
            assignments=assignments,
            provider_config={
                "panel_name": "Connect",
                "id_parameter": "participantId",
                "tasks_per_session": k,
                "completion_url": DONE_URL,
                **cfg,
            },
        ),
        systems=list(dataset.systems.filter(name__in=systems)),
        qualification_test=test,
    )
    return batches.publish_batch(batch)


def study_link(batch, pid=None, token=None) -> str:
    token = tokens.entry_token(batch.pk) if token is None else token
    query = f"?e={token}" + (f"&participantId={pid}" if pid is not None else "")
    return reverse("panel_entry", args=[batch.pk]) + query


def link_parts(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def start(client, batch, pid, **extra):
    parts = link_parts(session_url(batch, pid))
    return client.post(reverse("panel_session", args=[batch.pk]), {**parts, "action": "start"}, **extra)


def answer(assignment):
    submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment))


def panel_workers() -> int:
    return Worker.objects.filter(provider=Worker.Provider.PANEL).count()


# ---- identity ------------------------------------------------------------------------------


def test_an_id_without_a_valid_entry_token_is_refused_and_writes_nothing(client):
    batch = open_panel()
    other = open_panel(systems=("ext_matchsumm_out",))
    for url in (
        reverse("panel_entry", args=[batch.pk]) + "?participantId=P1",  # no token
        study_link(batch, "P1", token="made-up"),
        study_link(batch, "P1", token=tokens.entry_token(other.pk)),  # another study's token
        study_link(batch, "P1", token=tokens.entry_token(batch.pk)[:-2] + "xx"),
    ):
        response = client.get(url)
        assert response.status_code == 403, url
        assert "study link is not valid" in response.content.decode()
    assert client.get(study_link(batch, "bad id!")).status_code == 403  # not a participant id
    assert panel_workers() == 0 and not Assignment.objects.filter(worker__provider="panel").exists()


def test_opening_the_link_takes_no_place_and_writes_no_row(client):
    batch = open_panel()
    response = client.get(study_link(batch, "P1"))
    assert response.status_code == 302 and response["Location"] == session_url(batch, "P1")
    page = client.get(response["Location"])
    assert page.status_code == 200 and "Start task 1" in page.content.decode()
    assert (
        panel_workers() == 0
        and not PanelSession.objects.exists()
        and not Assignment.objects.filter(worker__provider="panel").exists()
    )
    open_places = sum(batch.hits.values_list("open_places", flat=True))
    assert open_places == batch.hits.count() * 2


def test_a_participant_token_replayed_for_another_id_is_refused(client):
    batch = open_panel()
    parts = link_parts(session_url(batch, "ALICE"))
    url = reverse("panel_session", args=[batch.pk])
    for method in (client.get, client.post):
        response = method(url, {"pid": "MALLORY", "t": parts["t"], "action": "start"})
        assert response.status_code == 403
        assert "another participant id" in response.content.decode()
    other = open_panel(systems=("ext_matchsumm_out",))
    assert client.post(reverse("panel_session", args=[other.pk]), {**parts, "action": "start"}).status_code == 403
    assert panel_workers() == 0 and not Assignment.objects.filter(worker__provider="panel").exists()
    # The token's own id works.
    assert start(client, batch, "ALICE").status_code == 302
    assert list(Worker.objects.filter(provider="panel").values_list("external_id", flat=True)) == ["ALICE"]


def test_twenty_sessions_from_one_address_are_bounded(client, settings, still_ratelimit_clock):
    settings.PANEL_SESSIONS_PER_ADDRESS = 3
    batch = open_panel(k=2, assignments=3)
    codes = [start(client, batch, f"FAKE{i}").status_code for i in range(20)]
    assert codes[:3] == [302] * 3 and set(codes[3:]) == {409}
    assert "Too many sessions" in start(client, batch, "FAKE99").content.decode()
    # No Worker row, session or place for any refused id.
    assert set(Worker.objects.filter(provider="panel").values_list("external_id", flat=True)) == {
        "FAKE0",
        "FAKE1",
        "FAKE2",
    }
    assert PanelSession.objects.count() == 3
    assert (
        Assignment.objects.filter(worker__provider="panel", status=Assignment.Status.ASSIGNED).count() == 3
    )  # one place each
    # Resuming one's own session is not a new session; another address still gets one.
    assert start(client, batch, "FAKE0").status_code == 302
    assert start(client, batch, "REAL", REMOTE_ADDR="10.9.8.7").status_code == 302
    assert PanelSession.objects.count() == 4


def test_a_lab_room_study_sets_its_own_bound_per_network(client, settings, still_ratelimit_clock):
    """Participants in one lab room share an address: the study's own bound lets them all in (0: no
    bound), another study keeps the site's, and a refused participant is told to ask the researcher."""
    settings.PANEL_SESSIONS_PER_ADDRESS = 3
    room = open_panel(k=2, assignments=3, sessions_per_network=0)
    assert [start(client, room, f"ROOM{i}").status_code for i in range(8)] == [302] * 8
    ten = open_panel(k=1, assignments=3, sessions_per_network=5)
    assert [start(client, ten, f"TEN{i}").status_code for i in range(6)] == [302] * 5 + [409]
    refused = start(client, ten, "TEN99").content.decode()
    assert "(5 an hour)" in refused and "tell the researcher" in refused
    site = open_panel(k=1, assignments=3)
    assert [start(client, site, f"SITE{i}").status_code for i in range(4)] == [302] * 3 + [409]


def test_an_idle_session_gives_its_place_back_and_the_same_link_resumes_it(client, settings):
    settings.PANEL_IDLE_SECONDS = 600
    batch = open_panel(k=2, assignments=1)
    first = start(client, batch, "IDLE")
    assert first.status_code == 302
    held = Assignment.objects.get(worker__external_id="IDLE")
    assert HIT.objects.get(pk=held.hit_id).open_places == 0
    assert idle.release_idle() == 0  # just started
    Assignment.objects.filter(pk=held.pk).update(created_at=timezone.now() - timedelta(seconds=700))
    assert idle.release_idle() == 1
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.EXPIRED
    assert HIT.objects.get(pk=held.hit_id).open_places == 1  # someone else can take it
    session = PanelSession.objects.get()
    assert session.status == PanelSession.Status.IDLE
    # The beat task goes through the provider interface.
    from hits.tasks import release_idle_sessions

    assert release_idle_sessions() == 0
    # Back with the same link: a welcome back (no place taken by opening), then a new task.
    page = client.get(session_url(batch, "IDLE"))
    assert page.status_code == 200 and "Start task 1" in page.content.decode()
    assert not Assignment.objects.filter(worker__provider="panel", status=Assignment.Status.ASSIGNED).exists()
    assert start(client, batch, "IDLE").status_code == 302
    assert PanelSession.objects.get().status == PanelSession.Status.ACTIVE
    assert Assignment.objects.filter(worker__external_id="IDLE", status=Assignment.Status.ASSIGNED).count() == 1


# ---- the session ---------------------------------------------------------------------------


def test_a_session_ends_with_the_code_and_a_participant_who_leaves_comes_back(client):
    batch = open_panel(k=2, assignments=2)
    response = start(client, batch, "P1")
    assert response["Location"].startswith("/panel/task/")
    task_page = client.get(response["Location"])
    assert "Task <b>1</b> of <b>2</b>" in task_page.content.decode()
    a1 = Assignment.objects.get(worker__external_id="P1")
    answer(a1)
    # Leaves; comes back later with the same link: opening it takes no place, Continue does.
    back = client.get(session_url(batch, "P1"))
    assert back.status_code == 200 and "1 of 2 tasks done" in back.content.decode()
    assert not Assignment.objects.filter(worker__external_id="P1", status=Assignment.Status.ASSIGNED).exists()
    following = start(client, batch, "P1")
    assert following.status_code == 302 and following["Location"].startswith("/panel/task/")
    a2 = Assignment.objects.get(worker__external_id="P1", status=Assignment.Status.ASSIGNED)
    assert a2.hit_id != a1.hit_id and a2.external_id == a1.external_id
    # Opening the link again, or pressing Continue twice, goes back to the task held: no other place.
    # (compared by the assignment the task links name: a signed link carries its second)
    assert task_link_assignment(client.get(session_url(batch, "P1"))["Location"]) == a2.pk
    assert task_link_assignment(start(client, batch, "P1")["Location"]) == a2.pk
    assert Assignment.objects.filter(worker__external_id="P1").count() == 2
    answer(a2)
    done = client.get(session_url(batch, "P1"))
    body = done.content.decode()
    code = completion_code(batch, "P1")
    assert done.status_code == 200 and code in body
    assert DONE_URL.format(code=code) in body  # sent to the completion URL
    assert PanelSession.objects.get().status == PanelSession.Status.COMPLETED
    # The code stays available; no new task is taken.
    assert code in start(client, batch, "P1").content.decode()
    assert Assignment.objects.filter(worker__external_id="P1").count() == 2


def test_a_session_ends_early_when_no_task_is_left_for_the_participant():
    batch = open_panel(k=50, assignments=1)
    pid = "P1"
    while (a := sessions.start_task(batch=batch, participant_id=pid)) is not None:
        answer(a)
    session = PanelSession.objects.get()
    assert session.status == PanelSession.Status.COMPLETED and session.size == batch.hits.count()
    with pytest.raises(sessions.SessionRefused, match="No task is left"):
        sessions.start_task(batch=batch, participant_id="P2")
    assert not Worker.objects.filter(external_id="P2").exists()  # rolled back with the session


def test_screening_pass_or_fail_and_a_failed_participant_gets_no_task(client):
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="screen", items=1, pool=1, pass_score=1.0, max_attempts=3)
    batch = open_panel(test=test, screened_out_url="https://panel.example/screened-out")
    item = test.items.get()
    right = {f"ans-{answer_key(item.pk, a)}": "1" if v else "0" for a, v in item.answers.items()}
    wrong = {k: "0" if v == "1" else "1" for k, v in right.items()}
    url = reverse("panel_session", args=[batch.pk])
    page = client.get(session_url(batch, "FAILS"))
    assert "Submit the test" in page.content.decode() and panel_workers() == 0
    failed = client.post(url, {**link_parts(session_url(batch, "FAILS")), "action": "screen", **wrong})
    body = failed.content.decode()
    assert "Not passed" in body and "https://panel.example/screened-out" in body and "%" not in body
    assert start(client, batch, "FAILS").status_code == 409
    revisit = client.get(session_url(batch, "FAILS")).content.decode()
    assert "used all attempts" in revisit and "Submit the test" not in revisit  # one attempt per id
    passed = client.post(url, {**link_parts(session_url(batch, "PASSES")), "action": "screen", **right})
    assert "Passed" in passed.content.decode()
    assert start(client, batch, "PASSES").status_code == 302
    assert not Assignment.objects.filter(worker__external_id="FAILS").exists()


# ---- money ---------------------------------------------------------------------------------


def worked(batch, pid):
    while (a := sessions.start_task(batch=batch, participant_id=pid)) is not None:
        answer(a)
    return list(PanelSession.objects.get(batch=batch, worker__external_id=pid).assignments().order_by("pk"))


def test_per_session_pay_prices_hits_alike_and_the_lists_pay_each_row_once(lead):
    batch = open_panel(k=2, assignments=2)
    price = HIT.objects.filter(batch=batch).values_list("reward", flat=True).distinct()
    assert price.count() == 1  # a session pays K x one price
    good, bad = worked(batch, "GOOD"), worked(batch, "BAD")
    for a in good:
        review.approve(assignment_id=a.pk, by=lead)
    for a in bad:
        review.reject(assignment_id=a.pk, feedback="Random answers.", by=lead)
    review.send_bonus(assignment_id=good[0].pk, amount="0.40", reason="Careful work", token="tok1", by=lead)
    notes = set(LedgerEntry.objects.filter(batch=batch).values_list("kind", "note"))
    assert notes == {("reward", "to pay at the panel"), ("bonus", "Careful work (to pay at the panel)")}
    assert not LedgerEntry.objects.filter(kind="fee").exists()
    lists = payouts.lists(batch)
    assert payouts.approval_text(lists) == "GOOD\n"
    assert payouts.bonus_csv(lists) == "GOOD,0.40\n"
    assert lists.total == price.first() * 2 + Decimal("0.40")
    # Approved after the lists were made: not covered by this marking.
    late = worked(batch, "LATE")
    for a in late:  # a whole session (a partial one is paid on the bonus list: test_panel_trust)
        review.approve(assignment_id=a.pk, by=lead)
    assert payouts.mark_paid(batch, lists.token, by=lead) == (3, lists.total)
    assert payouts.mark_paid(batch, lists.token, by=lead) == (0, Decimal("0.00"))  # once
    assert PanelPayment.objects.count() == 3
    assert payouts.approval_text(payouts.lists(batch)) == "LATE\n"
    with pytest.raises(payouts.PayoutError):
        payouts.mark_paid(batch, "forged", by=lead)
    # A row that appears below the page's last row (e.g. a transaction committed late) changes
    # the set the page showed: marking is refused and records nothing.
    page = payouts.lists(batch)
    PanelPayment.objects.filter(entry__worker__external_id="GOOD", entry__kind="bonus").delete()
    assert payouts.lists(batch).rows == page.rows + 1
    with pytest.raises(payouts.PayoutError, match="changed"):
        payouts.mark_paid(batch, page.token, by=lead)
    assert PanelPayment.objects.count() == 2


def test_per_hit_pay_puts_each_participant_total_on_the_bonus_list(lead, client):
    batch = open_panel(k=2, assignments=1, pay_per="hit")
    work = worked(batch, "P1")
    for a in work:
        review.approve(assignment_id=a.pk, by=lead)
    review.send_bonus(assignment_id=work[0].pk, amount="0.25", reason="Thanks", token="tokA", by=lead)
    total = sum(a.hit.reward for a in work) + Decimal("0.25")
    lists = payouts.lists(batch)
    assert payouts.approval_text(lists) == "P1\n" and payouts.bonus_csv(lists) == f"P1,{total:.2f}\n"
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "Study link to paste" in page and "TEST-" in page
    rows = lists.token
    got = client.get(reverse("panel_list", args=[batch.pk, "bonuses"]), {"rows": rows})
    assert got.status_code == 200 and got.content.decode() == f"P1,{total:.2f}\n"
    assert got["Content-Disposition"].endswith('-bonuses.csv"')
    assert client.get(reverse("panel_list", args=[batch.pk, "approvals"]), {"rows": rows}).content == b"P1\n"
    assert client.get(reverse("panel_list", args=[batch.pk, "bonuses"]), {"rows": "x"}).status_code == 400
    assert client.get(reverse("panel_list", args=[batch.pk, "other"]), {"rows": rows}).status_code == 404
    client.post(reverse("panel_paid", args=[batch.pk]), {"rows": rows})
    client.post(reverse("panel_paid", args=[batch.pk]), {"rows": rows})
    assert PanelPayment.objects.count() == 3
    # The old lists name rows that are paid now: refused rather than downloaded again.
    stale = client.get(reverse("panel_list", args=[batch.pk, "bonuses"]), {"rows": rows})
    assert stale.status_code == 400 and b"changed" in stale.content
    assert (
        payouts.paid_total(batch)
        == total
        == sum(LedgerEntry.objects.filter(batch=batch).values_list("amount", flat=True))
    )


def test_publishing_checks_the_options(settings):
    batch = open_panel()
    provider = get_provider("panel")
    for bad in ({"id_parameter": "participant id"}, {"completion_url": "javascript:alert(1)"}):
        batch.provider_config = {**batch.provider_config, **bad}
        with pytest.raises(ProviderError):
            provider.publish(batch)


def test_the_new_batch_form_marks_mturk_closed_and_offers_the_panel(lead, client):
    dataset = demo_dataset()
    client.force_login(lead)
    page = client.get(reverse("batch_new", args=[dataset.pk])).content.decode()
    assert "mturk: Amazon Mechanical Turk (closed:" in page and "panel: Participant panel" in page
    assert 'name="panel_id_parameter"' in page


def test_the_api_creates_a_panel_batch_with_its_options(lead, client):
    dataset = demo_dataset()
    client.force_login(lead)
    response = client.post(
        "/api/batches/",
        {
            "dataset": dataset.pk,
            "name": "panel via api",
            "provider": "panel",
            "panel": {"panel_name": "SONA", "id_parameter": "id", "tasks_per_session": 3, "pay_per": "hit"},
        },
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    from hits.models import Batch

    batch = Batch.objects.get(name="panel via api")
    assert batch.provider_config["id_parameter"] == "id" and batch.provider_config["tasks_per_session"] == 3


def test_only_leads_download_the_lists_or_mark_them_paid(client, worker, author, lead):
    from .conftest import PASSWORD

    batch = open_panel(pay_per="hit")
    # Long enough that no random token on the refusal page (CSRF) can contain it by chance.
    participant = "participant-who-must-not-leak"
    work = worked(batch, participant)
    review.approve(assignment_id=work[0].pk, by=lead)
    rows = payouts.lists(batch).token
    for user in (None, worker, author):
        client.logout()
        if user is not None:
            client.login(username=user.username, password=PASSWORD)
        got = client.get(reverse("panel_list", args=[batch.pk, "approvals"]), {"rows": rows})
        assert got.status_code in (302, 403) and participant.encode() not in got.content
        client.post(reverse("panel_paid", args=[batch.pk]), {"rows": rows})
    assert not PanelPayment.objects.exists()
    client.login(username=lead.username, password=PASSWORD)
    assert client.get(reverse("panel_paid", args=[batch.pk])).status_code == 405  # a change is a POST


@pytest.mark.postgres_only("row locks: SQLite serializes writers instead")
@pytest.mark.django_db(transaction=True)
def test_two_tabs_starting_at_once_share_one_session_and_one_place(lead):
    from .crowd_data import at_once

    batch = open_panel(k=3, assignments=2)
    results, errors = at_once(*[lambda: sessions.start_task(batch=batch, participant_id="TABS")] * 4)
    assert errors == []
    assert PanelSession.objects.count() == 1 and Worker.objects.filter(external_id="TABS").count() == 1
    assert len({a.pk for a in results}) == 1  # every tab got the same task
    held = Assignment.objects.filter(worker__external_id="TABS", status=Assignment.Status.ASSIGNED)
    assert held.count() == 1
    # Marking the same lists paid from two requests at once records each row once.
    task = held.get()
    answer(task)
    review.approve(assignment_id=task.pk, by=lead)
    token = payouts.lists(batch).token
    marked, errors = at_once(*[lambda: payouts.mark_paid(batch, token, by=lead)] * 3)
    assert errors == [] and sorted(n for n, _ in marked) == [0, 0, 1]
    assert PanelPayment.objects.count() == 1


def test_bad_input_gets_a_message_never_a_server_error(client):
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="screen", items=1, max_attempts=1)
    batch = open_panel(test=test)
    plain = open_panel(systems=("ext_matchsumm_out",))
    url = reverse("panel_session", args=[batch.pk])
    parts = link_parts(session_url(batch, "P1"))
    cases = [
        client.post(url, {**parts, "action": "screen"}),  # no answers: refused, no attempt used (issue 42)
        client.post(url, {**parts, "action": "screen", "ans-x:y": "1"}),  # answers of nothing
        client.post(
            reverse("panel_session", args=[plain.pk]), {**link_parts(session_url(plain, "P1")), "action": "screen"}
        ),
        client.get(reverse("panel_task", args=["not-a-token"])),
        client.get(reverse("panel_entry", args=[999999]) + "?e=x&participantId=P1"),
        client.get(url, {"pid": "P1" * 40, "t": parts["t"]}),
        client.get(
            reverse("panel_entry", args=[batch.pk]), {"e": tokens.entry_token(batch.pk), "participantId": "x" * 65}
        ),
    ]
    assert [r.status_code for r in cases] == [400, 400, 409, 404, 404, 403, 403]
    assert b"no answer yet" in cases[0].content and b"Not passed" not in cases[0].content
    assert not QualificationAttempt.objects.filter(test=test).exists()
    for response in cases:
        assert b"Traceback" not in response.content


def test_paying_per_session_every_reader_prices_a_hit_at_the_mean_reward_rounded_up():
    """One rule (provider_interface.base.alike_price): a HIT of a batch paid per session costs the
    mean of the batch's rewards rounded up to the cent. The panel's publishing, its batch section
    and a Prolific session plan all read it."""
    from hits.provider_interface.base import alike_price
    from hits.providers.panel.selectors import section
    from hits.providers.prolific.config import config as prolific_config
    from hits.providers.prolific.plans import session_plan

    dataset = demo_dataset()
    drafts = []
    for provider, cfg in (
        ("panel", {"panel_name": "Connect", "id_parameter": "participantId", "tasks_per_session": 2}),
        ("prolific", {"hits_per_session": 2}),
    ):
        draft = batches.create_batch(
            dataset=dataset,
            spec=BatchSpec(provider=provider, assignments=1, provider_config=cfg),
            systems=list(dataset.systems.filter(name="abs_bart_out")),
        )
        first = draft.hits.order_by("pk").first()
        HIT.objects.filter(batch=draft).update(reward=Decimal("0.15"))
        HIT.objects.filter(pk=first.pk).update(reward=Decimal("0.16"))  # the mean: 0.15 and a fraction of a cent
        assert draft.hits.count() >= 3 and alike_price(draft.hits) == Decimal("0.16")
        drafts.append(draft)
    panel, prolific = drafts
    assert section(panel)["session_pay"] == Decimal("0.32")  # 2 x 0.16
    assert session_plan(prolific, prolific_config(prolific)).per_hit_reward == Decimal("0.16")
    batches.publish_batch(panel)
    assert set(HIT.objects.filter(batch=panel).values_list("reward", flat=True)) == {Decimal("0.16")}


def test_the_task_page_says_how_long_the_participant_has(client, settings):
    """A panel task unanswered for PANEL_IDLE_SECONDS goes back to the pool, and its answers are
    then refused; no panel shows that time, and the page did not either, so a participant who read
    slowly lost the task's answers unwarned. The page says by when to submit (the idle limit, or
    the deadline when sooner), and not once the task is submitted."""
    settings.PANEL_IDLE_SECONDS = 900
    batch = open_panel(k=2, assignments=1)
    page = client.get(start(client, batch, "SLOW-1")["Location"])
    held = Assignment.objects.get(worker__external_id="SLOW-1")
    html = page.content.decode()
    shown = re.search(
        r'id="task-deadline" data-deadline="([^"]+)" data-now="[^"]+">Submit by <time datetime="([^"]+)">([^<]+)</time>'
        r' \(<span class="time-left">within ([^<]+)</span>\)',
        html,
    )
    assert shown, "no time shown on the panel task page"
    limit = held.created_at + timedelta(seconds=900)
    assert shown.group(1) == shown.group(2) == timezone.localtime(limit).isoformat() and "minutes" in shown.group(4)
    assert shown.group(3) == timezone.localtime(limit).strftime("%H:%M %Z")  # the clock time, with its zone
    assert "not stored" in html
    submit_assignment(assignment_id=held.pk, worker_id=held.worker_id, answers=all_answers(held))
    assert 'id="task-deadline"' not in client.get(page.wsgi_request.path).content.decode()
