"""What a walk through the worker's and the lead's pages found (the Django client; the layout and
the page's scripts: tests/browser/test_worker_pages_walkthrough_browser.py):

- a task taken back from a blocked worker read "Expired" in My work (and on its page once its
  deadline passed), though its time never ran out; so did a task its worker gave back;
- the block forms' "Reason" did not say the worker reads it;
- the qualification card gave the pool's size, not the sheet's;
- a refused bonus came back with an empty form;
- a reviewer's decided reviews appeared nowhere in their queue."""

import json
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.messages import get_messages
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from annotation.models import Reference
from annotation.services import authoring
from hits.models import Assignment, LedgerEntry, Worker
from hits.release import release_overdue
from hits.services import handout, qualification, review
from hits.services.submission import submit_assignment, task_token
from hits.views.worker import inhouse_worker
from scoring.runs.services import compute_scores

from .authoring_data import unauthored_dataset
from .crowd_data import all_answers, demo_dataset, published_batch
from .test_authoring import structure

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def shown_statuses(client) -> list[str]:
    """The status badges of My work's recent tasks, as the worker reads them."""
    html = client.get(reverse("work")).content.decode()
    table = html.split('id="recent-tasks"', 1)[1]
    return re.findall(r'<span class="badge status-[a-z_]+">([^<]+)</span>', table)


def test_a_task_taken_back_on_a_block_reads_taken_back_even_once_its_deadline_passed(client, worker, make_user):
    """Blocking a worker gives back the task they hold, stored as expired: My work said "Expired",
    and its page said its time ran out once the deadline had passed, though it was taken back
    long before."""
    batch = published_batch(gold_share=0.0)
    me = inhouse_worker(worker)
    held = handout.next_assignment(me, batch)
    token = task_token(held)
    review.block_worker(worker_id=me.pk, reason="copied answers")
    client.force_login(worker)
    assert shown_statuses(client) == ["Taken back"]

    # Two hours on: the block was two hours ago, the task's deadline (an hour after it) passed.
    me.refresh_from_db()
    Worker.objects.filter(pk=me.pk).update(blocked_at=me.blocked_at - timedelta(hours=2))
    Assignment.objects.filter(pk=held.pk).update(
        deadline=held.deadline - timedelta(hours=2), released_at=F("released_at") - timedelta(hours=2)
    )
    assert Assignment.objects.get(pk=held.pk).deadline < timezone.now()
    assert shown_statuses(client) == ["Taken back"]
    page = client.get(reverse("task", args=[token])).content.decode()
    assert 'data-done="withdrawn"' in page and "taken back before its time ran out" in page
    assert "This task expired" not in page
    sent = client.post(
        reverse("task_submit", args=[token]), json.dumps({"answers": all_answers(held)}), "application/json"
    ).json()
    assert not sent["ok"] and sent["final"] and sent["error"].startswith("This task was taken back"), sent

    # A task whose time ran out before its worker was blocked expired, and reads so.
    late = inhouse_worker(make_user("late-larry", "worker"))
    overdue = handout.next_assignment(late, batch)
    Assignment.objects.filter(pk=overdue.pk).update(deadline=timezone.now() - timedelta(minutes=5))
    release_overdue()
    review.block_worker(worker_id=late.pk, reason="never answers")
    client.force_login(late.user)
    assert shown_statuses(client) == ["Expired"]
    page = client.get(reverse("task", args=[task_token(overdue)])).content.decode()
    assert 'data-done="expired"' in page and "This task expired: its time ran out" in page


def test_a_task_given_back_reads_taken_back_even_once_its_old_deadline_passed(client, worker, monkeypatch):
    """A task its worker gave back (*Give this task back*) read "Taken back" in My work, then
    "Expired" once the deadline it no longer had passed (time moves on: `timezone.now`)."""
    batch = published_batch(gold_share=0.0)
    me = inhouse_worker(worker)
    given = handout.next_assignment(me, batch)
    assert handout.give_back(assignment_id=given.pk, worker_id=me.pk)
    client.force_login(worker)
    assert shown_statuses(client) == ["Taken back"]

    later = given.deadline + timedelta(hours=1)  # its old deadline has passed
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert shown_statuses(client) == ["Taken back"]

    # The next task, whose time then ran out, expired, and reads so beside it.
    overdue = handout.next_assignment(me, batch)
    after = overdue.deadline + timedelta(minutes=1)
    monkeypatch.setattr(timezone, "now", lambda: after)
    assert release_overdue() == 1
    assert shown_statuses(client) == ["Expired", "Taken back"]


def test_the_block_forms_say_the_worker_reads_the_reason(client, lead, make_user):
    """The worker reads the block's reason verbatim (My work); the bonus form says so of its reason,
    the block forms said only "Reason"."""
    batch = published_batch(gold_share=0.0)
    someone = inhouse_worker(make_user("blocky", "worker"))
    a = handout.next_assignment(someone, batch)
    submit_assignment(assignment_id=a.pk, worker_id=someone.pk, answers=all_answers(a))
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert '<label for="block-reason">Reason (shown to the worker)</label>' in page
    compute_scores(batch.dataset, batch)
    workers = client.get(reverse("dashboard_workers", args=[batch.dataset.pk]) + f"?round={batch.pk}").content.decode()
    assert (
        'placeholder="Reason (shown to the worker)" aria-label="Reason for blocking blocky (shown to the worker)"'
        in workers
    )


def test_the_qualification_card_gives_the_sheet_size_not_the_pool(client, worker):
    dataset = demo_dataset()
    test = qualification.build_test(dataset=dataset, name="ACU matching qualification", items=2)
    published_batch(dataset, qualification_test=test)
    assert test.items.count() == 6 and test.sheet_items == 2
    client.force_login(worker)
    page = client.get(reverse("work")).content.decode()
    assert "ACU matching qualification</strong> — 2 summaries per attempt;" in page
    assert "6 summaries" not in page
    sheet = client.get(reverse("take_test", args=[test.pk])).content.decode()
    assert len(set(re.findall(r'name="ans-(\d+):', sheet))) == 2  # what an attempt shows


@pytest.mark.parametrize("page", ["assignment_review", "batch_detail"])
def test_a_refused_bonus_keeps_the_typed_amount_and_reason(client, lead, make_user, page):
    """A bonus of "1,50" is refused with a clear message; the form came back empty. It keeps what
    was typed, under a fresh one-time token, so the corrected retry pays once."""
    batch = published_batch(gold_share=0.0)
    paid_worker = inhouse_worker(make_user("bonnie", "worker"))
    a = handout.next_assignment(paid_worker, batch)
    submit_assignment(assignment_id=a.pk, worker_id=paid_worker.pk, answers=all_answers(a))
    client.force_login(lead)
    url = reverse(page, args=[a.pk if page == "assignment_review" else batch.pk])
    first = re.search(r'name="token" value="([^"]+)"', client.get(url).content.decode())[1]
    form = {"assignment": a.pk, "amount": "1,50", "reason": "Careful <work> & notes", "token": first}
    if page == "assignment_review":
        form["next"] = url
    refused = client.post(reverse("batch_bonus", args=[batch.pk]), form, follow=True)
    html = refused.content.decode()
    assert "decimal comma" in html  # the message
    assert 'id="bonus-amount" name="amount" required inputmode="decimal" placeholder="0.50" value="1,50"' in html
    assert 'id="bonus-reason" name="reason" required value="Careful &lt;work&gt; &amp; notes"' in html
    if page == "batch_detail":
        assert f'<option value="{a.pk}" selected>' in html
    again = re.search(r'name="token" value="([^"]+)"', html)[1]
    assert again != first and not LedgerEntry.objects.filter(kind="bonus").exists()

    sent = client.post(reverse("batch_bonus", args=[batch.pk]), {**form, "amount": "1.50", "token": again})
    assert any("Bonus of $1.50 sent" in str(m) for m in get_messages(sent.wsgi_request))
    assert list(LedgerEntry.objects.filter(kind="bonus").values_list("amount", flat=True)) == [Decimal("1.50")]
    # Shown once: the page opened again has an empty form.
    assert 'value="1,50"' not in client.get(url).content.decode()


def test_a_reviewers_decided_reviews_are_in_their_queue(client, tmp_path, make_user):
    """A reviewer who sent one reference back and approved another read "0 done · 0 in review … of
    0 assigned" and "Done: None yet.": their own work appeared nowhere on their queue."""
    writer, reviewer = make_user("wendy-writer", "author"), make_user("rita-reviewer", "author")
    dataset = unauthored_dataset(tmp_path)
    authoring.assign_references(dataset=dataset, author_ids=[writer.pk], count=2)
    authoring.assign_references(dataset=dataset, author_ids=[reviewer.pk], count=1)  # an author of the dataset
    sent_back, approved = Reference.objects.filter(writer=writer).order_by("document__position")
    for reference in (sent_back, approved):
        authoring.save_reference(
            reference_id=reference.pk,
            user=writer,
            base_version=reference.version,
            sentences=structure(reference, [[(None, "One fact.")]] + [[]] * (reference.sentences.count() - 1)),
        )
        assert authoring.submit_for_review(reference_id=reference.pk, user=writer).reviewer == reviewer
    authoring.add_comment(reference_id=sent_back.pk, user=reviewer, text="Split the fact.")
    authoring.request_changes(reference_id=sent_back.pk, user=reviewer)
    authoring.approve(reference_id=approved.pk, user=reviewer)

    client.force_login(reviewer)
    html = client.get(reverse("authoring_queue")).content.decode()
    assert re.search(r'id="reviewed-count"><b>2</b> reviewed by you', html)
    table = html.split('id="reviewed"', 1)[1].split("</table>", 1)[0]
    for reference, decision in ((sent_back, "Sent&nbsp;back"), (approved, "Approved")):
        row = re.search(rf'href="{reverse("authoring_review", args=[reference.pk])}">[^<]+</a>.*?</tr>', table)
        assert row and decision in row[0] and "wendy-writer" in row[0], (reference, table)
    # The writer reviewed nothing: their queue lists none.
    client.force_login(writer)
    mine = client.get(reverse("authoring_queue")).content.decode()
    assert re.search(r'id="reviewed-count"><b>0</b> reviewed by you', mine) and 'id="reviewed"' not in mine


def shown_pay(client) -> list[str]:
    """The Pay cells of My work's recent tasks, newest first, as the worker reads them."""
    html = client.get(reverse("work")).content.decode()
    table = html.split('id="recent-tasks"', 1)[1]
    cells = re.findall(r'<td class="num">(.*?)</td>', table)
    return [re.sub(r"<[^>]+>", " ", c).split() for c in cells]


def test_my_work_says_what_each_task_pays_and_whether_it_is_paid(client, worker):
    """Walk: My work gave only the total earned, so a worker could not tell what a task pays, whether
    a task was paid, or check the total against their tasks."""
    batch = published_batch(gold_share=0.0)
    me = inhouse_worker(worker)
    done = handout.next_assignment(me, batch)
    submit_assignment(assignment_id=done.pk, worker_id=me.pk, answers=all_answers(done))
    client.force_login(worker)
    reward = f"${done.hit.reward:.2f}"
    assert shown_pay(client) == [[reward, "once", "approved"]]

    review.approve(assignment_id=done.pk)
    given = handout.next_assignment(me, batch)
    handout.give_back(assignment_id=given.pk, worker_id=me.pk)
    held = handout.next_assignment(me, batch)
    assert shown_pay(client) == [[f"${held.hit.reward:.2f}", "once", "approved"], ["–"], [reward, "paid"]]
    assert f"<b>{reward}</b> earned" in client.get(reverse("work")).content.decode()


def _open_and_send(client, token: str, assignment) -> tuple:
    """(the task page's response, the submit's response) of `token` with every answer."""
    page = client.get(reverse("task", args=[token]))
    sent = client.post(
        reverse("task_submit", args=[token]), json.dumps({"answers": all_answers(assignment)}), "application/json"
    )
    return page, sent


@pytest.mark.parametrize("how", ["given back", "blocked"])
def test_an_old_link_of_a_task_taken_back_says_so_after_its_deadline(client, worker, settings, monkeypatch, how):
    """A worker who gave a task back (or was blocked, which takes back what they hold) and used its
    old link once its deadline and the link's margin had passed read "the task's time ran out"
    (EXPIRED_LINK), on its page and on Submit, though it was taken back before: now both say it
    was taken back, and nothing is stored."""
    from django.core import signing
    from django.utils.html import escape

    from hits.models import Judgment
    from hits.services.submission import EXPIRED_LINK, TAKEN_BACK, TAKEN_BACK_LINK, TOKEN_SALT

    batch = published_batch(gold_share=0.0)
    me = inhouse_worker(worker)
    held = handout.next_assignment(me, batch)
    token = task_token(held)
    if how == "given back":
        assert handout.give_back(assignment_id=held.pk, worker_id=me.pk)
    else:
        review.block_worker(worker_id=me.pk, reason="copied answers")
    later = held.deadline + timedelta(seconds=settings.TASK_TOKEN_MARGIN + 60)  # the link has expired
    monkeypatch.setattr(timezone, "now", lambda: later)
    before = Assignment.objects.values().get(pk=held.pk)

    page, sent = _open_and_send(client, token, held)
    text = page.content.decode()
    told = (page.status_code, escape(TAKEN_BACK_LINK) in text, escape(EXPIRED_LINK) in text, sent.status_code)
    assert told + (sent.json(),) == (410, True, False, 409, {"ok": False, "error": TAKEN_BACK, "final": True})
    given_back = client.post(reverse("task_give_back", args=[token]))
    assert given_back.status_code == 410 and escape(TAKEN_BACK_LINK) in given_back.content.decode()

    # A link without an expiry (as earlier releases made them), past its age, says so too.
    real_time = signing.time.time
    monkeypatch.setattr(signing.time, "time", lambda: real_time() - 400 * 86400)
    old = signing.dumps({"a": held.pk, "w": held.worker_id}, salt=TOKEN_SALT, compress=True)
    monkeypatch.setattr(signing.time, "time", real_time)
    page, sent = _open_and_send(client, old, held)
    assert page.status_code == 410 and escape(TAKEN_BACK_LINK) in page.content.decode()
    assert sent.status_code == 409 and sent.json()["error"] == TAKEN_BACK

    # A link whose signature is not good stays "not valid", and tells nothing of the task.
    page, sent = _open_and_send(client, token[:-3] + ("abc" if token.endswith("xyz") else "xyz"), held)
    assert page.status_code == 404 and "copied incompletely" in page.content.decode()
    assert "taken back" not in page.content.decode() and "taken back" not in sent.json()["error"]
    assert sent.status_code == 409 and sent.json()["final"] is False

    # Nothing was stored or changed by the refusals.
    assert not Judgment.objects.filter(assignment_id=held.pk).exists()
    assert Assignment.objects.values().get(pk=held.pk) == before


@pytest.mark.parametrize("blocked_after", [False, True])
def test_an_old_link_of_a_task_whose_time_ran_out_still_says_so(client, worker, settings, monkeypatch, blocked_after):
    """A task whose time really ran out (released as overdue; or its worker blocked only after
    its deadline) keeps "the task's time ran out" on its old link's page and on Submit."""
    from django.utils.html import escape

    from hits.models import Judgment
    from hits.services.submission import EXPIRED_LINK

    batch = published_batch(gold_share=0.0)
    me = inhouse_worker(worker)
    held = handout.next_assignment(me, batch)
    token = task_token(held)
    later = held.deadline + timedelta(seconds=settings.TASK_TOKEN_MARGIN + 60)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert release_overdue() == 1
    if blocked_after:
        review.block_worker(worker_id=me.pk, reason="never answers")
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.EXPIRED

    page, sent = _open_and_send(client, token, held)
    assert page.status_code == 410 and escape(EXPIRED_LINK) in page.content.decode()
    assert "taken back" not in page.content.decode()
    assert sent.status_code == 409 and sent.json() == {"ok": False, "error": EXPIRED_LINK, "final": True}
    assert not Judgment.objects.filter(assignment_id=held.pk).exists()
