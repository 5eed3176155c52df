"""The task page: one ORM read and Django templates (hits/_acu_rows.html, hits/_reference_text.html),
the same HTML as the template's loop made before, the same ACUs (a triage HIT: only its own, in
reference order), and the query counts."""

import re

import pytest
from django.template import Context, Template
from django.template.loader import render_to_string
from django.urls import reverse

from annotation.models import ACU
from hits import task_page
from hits.models import HIT, Assignment
from hits.services import handout
from hits.services.submission import submit_assignment, task_token
from hits.views.worker import inhouse_worker

from .crowd_data import all_answers, published_batch

# The loop templates/hits/task.html had when the rows were written inline, with the keyboard audit's
# change since: a row's choices are a group named by its fact, the first choice the row's Tab stop.
OLD_ROWS = """    <ol class="acu-rows">
      {% for acu in acus %}
      <li class="acu-row" data-acu="{{ acu.pk }}">
        <span class="acu-fact" id="fact-{{ acu.pk }}"><span class="sr-only">Fact {{ forloop.counter }}: </span>{{ acu.text }}</span>
        <span class="choices" role="group" aria-labelledby="fact-{{ acu.pk }}">
          <button type="button" class="choice yes" data-value="1" aria-pressed="false"><kbd>1</kbd> Present</button>
          <button type="button" class="choice no" data-value="0" aria-pressed="false" tabindex="-1"><kbd>2</kbd> Not present</button>
        </span>
      </li>
      {% endfor %}
    </ol>"""
NEW_ROWS = """    <ol class="acu-rows">
      {% include "hits/_acu_rows.html" %}
    </ol>"""
OLD_REFERENCE = "<p>{% for s in sentences %}{{ s.text }} {% endfor %}</p>"

TRICKY = ['He said "no" & left', "<script>alert('x')</script>", "Zoë's café — 5 > 3", "", "plain"]


class _ACU:
    def __init__(self, pk, text):
        self.pk, self.text = pk, text


def test_the_acu_rows_partial_is_the_markup_of_the_old_loop():
    acus = [_ACU(pk, text) for pk, text in enumerate(TRICKY, 7)]
    for some in (acus, acus[:1], []):
        old = Template(OLD_ROWS).render(Context({"acus": some}))
        assert Template(NEW_ROWS).render(Context({"acus": some})) == old
    rows = render_to_string("hits/_acu_rows.html", {"acus": acus})
    assert "<script>" not in rows and "&lt;script&gt;" in rows and "Fact 1: </span>He said &quot;no&quot;" in rows


def test_the_reference_partial_is_the_markup_of_the_old_loop():
    class Sentence:
        def __init__(self, text):
            self.text = text

    old = Template(OLD_REFERENCE).render(Context({"sentences": [Sentence(t) for t in TRICKY]}))
    assert "<p>" + render_to_string("hits/_reference_text.html", {"sentences": TRICKY}) + "</p>" == old
    assert render_to_string("hits/_reference_text.html", {"sentences": []}) == ""


def _rows(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'data-acu="(\d+)"', html)]


def _reference(html: str) -> str:
    return re.search(r'<p class="reference-text">(.*?)</p>', html, re.S).group(1)


@pytest.fixture
def handed_out(db, worker):
    batch = published_batch()
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    return Assignment.objects.select_related("hit__summary__document__reference").get(pk=assignment.pk)


def _expected(hit: HIT) -> tuple[list[int], str]:
    hit.refresh_from_db()
    reference = hit.summary.document.reference
    text = "".join(f"{s.text} " for s in reference.sentences.order_by("position"))
    return [a.pk for a in hit.task_acus()], text


def _page(client, assignment) -> str:
    response = client.get(reverse("task", args=[task_token(assignment)]))
    assert response.status_code == 200
    return response.content.decode()


def test_a_normal_hit_shows_every_acu_of_its_reference_in_order(handed_out, client):
    from django.utils.html import escape

    ids, text = _expected(handed_out.hit)
    assert len(ids) > 3
    html = _page(client, handed_out)
    assert _rows(html) == ids
    assert _reference(html) == escape(text)
    assert escape(handed_out.hit.summary.text) in html
    assert f'max="{len(ids)}"' in html


@pytest.mark.parametrize("empty", [None, []])
def test_no_acu_ids_means_every_acu(handed_out, client, empty):
    HIT.objects.filter(pk=handed_out.hit_id).update(acu_ids=empty)
    ids, _ = _expected(handed_out.hit)
    assert _rows(_page(client, handed_out)) == ids


def test_a_triage_hit_shows_only_its_acus_in_reference_order(handed_out, client, lead):
    all_ids, _ = _expected(handed_out.hit)
    chosen = all_ids[1::2]
    other_reference = ACU.objects.exclude(reference=handed_out.hit.summary.document.reference).first()
    # given in reverse, and with an ACU of another reference, which must not show
    HIT.objects.filter(pk=handed_out.hit_id).update(acu_ids=[other_reference.pk, *reversed(chosen)])
    ids, _ = _expected(handed_out.hit)
    assert ids == chosen
    assert _rows(_page(client, handed_out)) == chosen
    _, context = task_page.assignment_page(handed_out.pk, handed_out.worker_id)
    assert context["hit"].acu_ids == [other_reference.pk, *reversed(chosen)]
    client.force_login(lead)  # the lead's preview shares the content
    preview = client.get(reverse("hit_preview", args=[handed_out.hit_id])).content.decode()
    assert _rows(preview) == chosen


def test_preview_and_task_page_show_the_same_content(handed_out, client, lead):
    task_html = _page(client, handed_out)
    client.force_login(lead)
    preview = client.get(reverse("hit_preview", args=[handed_out.hit_id])).content.decode()
    assert _rows(preview) == _rows(task_html) and _reference(preview) == _reference(task_html)


def test_the_task_page_reads_in_three_queries(handed_out, client, django_assert_num_queries):
    """The assignment with its HIT, batch and summary; the sentences; the ACUs."""
    token = task_token(handed_out)
    with django_assert_num_queries(3):
        response = client.get(reverse("task", args=[token]))
    assert response.status_code == 200 and _rows(response.content.decode())


def test_another_workers_token_or_a_missing_assignment_is_refused(handed_out, client, make_user):
    other = inhouse_worker(make_user("someone-else", "worker"))
    forged = task_token(Assignment(pk=handed_out.pk, worker_id=other.pk))
    assert client.get(reverse("task", args=[forged])).status_code == 404
    missing = task_token(Assignment(pk=handed_out.pk + 1000, worker_id=handed_out.worker_id))
    assert client.get(reverse("task", args=[missing])).status_code == 404


def test_a_submitted_assignment_says_so(handed_out, client):
    Assignment.objects.filter(pk=handed_out.pk).update(status=Assignment.Status.SUBMITTED)
    html = _page(client, handed_out)
    assert "This task is already submitted" in html and 'id="submit-task"' not in html


def test_an_expired_task_says_it_expired_and_never_opens_as_live(handed_out, client):
    """Issue 47 item 8: held past its deadline (not yet released) it opened as a live task; released,
    it said "already submitted"."""
    from datetime import timedelta

    from django.utils import timezone

    deadline = timezone.now() - timedelta(minutes=1)
    Assignment.objects.filter(pk=handed_out.pk).update(deadline=deadline)
    html = _page(client, handed_out)
    assert 'id="task-expired"' in html and "This task expired" in html and "not paid" in html
    # the time with its zone: a worker elsewhere reads "14:02 UTC", not a bare "14:02"
    assert f"its time ran out at {timezone.localtime(deadline):%H:%M %Z} and" in html
    assert 'id="submit-task"' not in html and "already submitted" not in html
    Assignment.objects.filter(pk=handed_out.pk).update(status=Assignment.Status.EXPIRED)
    html = _page(client, handed_out)
    assert "This task expired" in html and "already submitted" not in html and 'id="submit-task"' not in html


def test_the_worker_row_is_read_fresh_and_created_once(db, make_user, django_assert_num_queries):
    user = make_user("first-timer", "worker")
    worker = inhouse_worker(user)  # created on the first visit
    assert worker.pk and worker.user_id == user.pk and worker.external_id == user.username
    with django_assert_num_queries(1):
        again = inhouse_worker(user)
    assert again.pk == worker.pk and not again.blocked
    from hits.services import review

    review.block_worker(worker_id=worker.pk, reason="Left the project.")
    assert inhouse_worker(user).blocked
    with pytest.raises(handout.NoWork):
        handout.next_assignment(inhouse_worker(user))


def test_a_parallel_first_visit_gets_the_row_the_other_created(db, make_user, monkeypatch):
    from django.db.models import QuerySet

    from hits.models import Worker

    user = make_user("racer", "worker")
    first = inhouse_worker(user)
    real_first, misses = QuerySet.first, []

    def first_read_misses(self):  # as if read before the other request's insert
        if self.model is Worker and not misses:
            misses.append(self)
            return None
        return real_first(self)

    monkeypatch.setattr(QuerySet, "first", first_read_misses)
    assert inhouse_worker(user).pk == first.pk and misses
    assert Worker.objects.filter(external_id=user.username).count() == 1


def test_the_task_page_says_how_long_the_worker_has(handed_out, client):
    """The in-house task page named no deadline: a worker learned it only when a late submission was
    refused ("its time ran out at 15:00")."""
    from django.utils import timezone

    html = _page(client, handed_out)
    shown = re.search(
        r'id="task-deadline" data-deadline="([^"]+)" data-now="([^"]+)">Submit by <time datetime="([^"]+)">([^<]+)</time>'
        r' \(<span class="time-left">within ([^<]+)</span>\)',
        html,
    )
    assert shown, "the deadline line"
    assert shown[1] == shown[3] == handed_out.deadline.isoformat()
    assert handed_out.deadline > timezone.now()
    # The clock time in the site's zone, as the site's other times ("10:49 UTC"), and the time left.
    assert shown[4] == timezone.localtime(handed_out.deadline).strftime("%H:%M %Z") and shown[4].endswith(" UTC")
    assert re.fullmatch(r"\d+\W(hour|minute)s?(,\W\d+\W(hour|minute)s?)?", shown[5]), shown[5]
    submit_assignment(
        assignment_id=handed_out.pk, worker_id=handed_out.worker_id, answers=all_answers(handed_out)
    )  # submitted: no deadline to meet
    assert 'id="task-deadline"' not in client.get(reverse("task", args=[task_token(handed_out)])).content.decode()


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo"])
def test_a_deadline_more_than_a_day_away_says_its_day(handed_out, client, settings, zone):
    """ "Submit by 10:49 UTC (within 2 days)" read as today's 10:49: a deadline more than a day away
    says its day, in the site's zone ("Submit by 9 Dec 10:49 UTC (within 2 days)")."""
    from datetime import timedelta

    from django.utils import timezone

    settings.TIME_ZONE = zone
    # 23:30 UTC: already the next day in Tokyo, so the day shown is the site's zone's
    due = (timezone.now() + timedelta(days=2, hours=1)).replace(hour=23, minute=30, second=0, microsecond=0)
    Assignment.objects.filter(pk=handed_out.pk).update(deadline=due)
    local = timezone.localtime(due, timezone=timezone.get_default_timezone())
    clock = f"{local.day} {local:%b %H:%M %Z}"
    html = _page(client, handed_out)
    shown = re.search(
        r'>Submit by <time datetime="[^"]+">([^<]+)</time> \(<span class="time-left">within ([^<]+)</span>', html
    )
    assert shown, "the deadline line"
    assert shown[1] == clock, (shown[1], clock)
    assert re.fullmatch(r"[23]\Wdays?(,\W\d+\Whours?)?", shown[2]), shown[2]

    soon = timezone.now() + timedelta(hours=23)  # within a day: the clock time alone, as before
    Assignment.objects.filter(pk=handed_out.pk).update(deadline=soon)
    shown = re.search(r'>Submit by <time datetime="[^"]+">([^<]+)</time>', _page(client, handed_out))
    assert shown[1] == timezone.localtime(soon, timezone=timezone.get_default_timezone()).strftime("%H:%M %Z")


def test_giving_back_reopens_the_place_once_and_never_a_submitted_task(handed_out, client, make_user):
    """*Give this task back* (the task link, no session): released and its place reopened once; posted
    again, or for a submitted task or with another worker's link, it changes nothing."""
    other = inhouse_worker(make_user("someone-else", "worker"))
    forged = task_token(Assignment(pk=handed_out.pk, worker_id=other.pk))
    assert client.post(reverse("task_give_back", args=[forged])).status_code == 302
    handed_out.refresh_from_db()
    assert handed_out.status == Assignment.Status.ASSIGNED
    assert 'id="give-back"' in _page(client, handed_out)

    url = reverse("task_give_back", args=[task_token(handed_out)])
    places = HIT.objects.get(pk=handed_out.hit_id).open_places
    assert client.post(url)["Location"] == reverse("work")
    assert client.post(url)["Location"] == reverse("task", args=[task_token(handed_out)])  # again: nothing more
    handed_out.refresh_from_db()
    assert handed_out.status == Assignment.Status.EXPIRED
    assert HIT.objects.get(pk=handed_out.hit_id).open_places == places + 1

    done = handout.next_assignment(handed_out.worker)
    submit_assignment(assignment_id=done.pk, worker_id=done.worker_id, answers=all_answers(done))
    client.post(reverse("task_give_back", args=[task_token(done)]))
    done.refresh_from_db()
    assert done.status == Assignment.Status.SUBMITTED
    assert 'id="give-back"' not in _page(client, done)
