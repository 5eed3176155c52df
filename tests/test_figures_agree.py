"""Every page shows the same progress and money of a batch (issue 41): the batch page, the batch
list, the dashboard's overview (of the round and of the dataset), its live poll and the API read
one selector (hits.selectors.figures), checked here on what they render, for an adaptive batch
with rejections, expiries, settled HITs and a stop by the lead. A stopped adaptive batch once read
"39 of 46 done, 7 left" on its page and "39 of 60, 21 left" on the dashboard."""

import re
from decimal import Decimal

import pytest
from django.db.models import Sum
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hits.models import Assignment, Batch, LedgerEntry
from hits.money import format_money
from hits.release import release_overdue
from hits.services import batches, handout, review
from hits.services.submission import submit_assignment

from .crowd_data import all_answers, demo_dataset
from .test_allocation import adaptive_batch
from .test_handout import make_workers
from .test_handout_expiry import overdue

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def _work(worker, batch):
    assignment = handout.next_assignment(worker, batch)
    submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=all_answers(assignment))
    return assignment


@pytest.fixture
def worked(lead):
    """An adaptive batch (2 places a HIT first, up to 5) of 6 HITs with a budget, worked: 10
    submissions (4 HITs complete and settled: no place opened beyond the first two), 3 approved,
    1 rejected (its place open again), a place released after its deadline, two in progress; then
    stopped by the lead, after which one of those is held past its deadline."""
    batch = adaptive_batch(demo_dataset(), hits=6, budget=Decimal("100.00"))
    workers = make_workers(9, prefix="fig")
    done = [_work(w, batch) for w in workers[:6]] + [_work(w, batch) for w in workers[:4]]
    for a in done[:3]:
        review.approve(assignment_id=a.pk, by=lead)
    review.reject(assignment_id=done[3].pk, feedback="careless", by=lead)
    late = handout.next_assignment(workers[6], batch)
    overdue(late)
    assert release_overdue() == 1  # the beat releases the late one's place
    handout.next_assignment(workers[7], batch)
    held = handout.next_assignment(workers[8], batch)
    batch = batches.stop_batch(batch)  # work in progress stays submittable
    overdue(held)  # then held past its deadline, not released yet
    return batch


def _expected(batch) -> dict:
    """The figures counted from the rows, independently of the selector."""
    now = timezone.now()
    assignments = Assignment.objects.filter(hit__batch=batch)
    places = batch.hits.aggregate(n=Sum("max_assignments"))["n"]
    done = assignments.filter(status__in=Assignment.COUNTED).count()
    in_progress = assignments.filter(status=Assignment.Status.ASSIGNED, deadline__gt=now).count()
    spent = LedgerEntry.objects.filter(batch=batch).aggregate(s=Sum("amount"))["s"]
    return {
        "places": places,
        "done": done,
        "in_progress": in_progress,
        "left": places - done - in_progress,
        "spent": format_money(spent),
        "budget_left": format_money(batch.budget - spent),
    }


def _int(pattern: str, page: str) -> int:
    found = re.search(pattern, page)
    assert found, pattern
    return int(found.group(1))


def _text(pattern: str, page: str) -> str:
    found = re.search(pattern, page)
    assert found, pattern
    return found.group(1)


def test_the_batch_page_list_dashboard_live_poll_and_api_show_the_same_figures(client, lead, worked):
    batch = worked
    want = _expected(batch)
    # The setup gives every case: a rejection, an expiry, a place overdue, settled HITs, a stop.
    statuses = set(Assignment.objects.filter(hit__batch=batch).values_list("status", flat=True))
    assert {"approved", "submitted", "rejected", "expired", "assigned"} <= statuses
    assert batch.status == "stopped" and batch.hits.filter(settled=True).exists()
    assert want["places"] < batch.hits.count() * batch.assignments_per_hit  # the adaptive places, not the most
    assert want["in_progress"] == 1 and want["left"] > 0 and want["spent"] != "$0.00"

    client.force_login(lead)
    seen = {}
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    seen["batch page"] = {
        "done": _int(r'id="progress-done"><b>(\d+)</b>', page),
        "places": _int(r'id="progress-done"><b>\d+</b> of (\d+)', page),
        "in_progress": _int(r'id="progress-in-progress"><b>(\d+)</b>', page),
        "left": _int(r'id="progress-left"><b>(\d+)</b>', page),
        "spent": _text(r'id="spend">spent <b>([^<]+)</b>', page),
        "budget_left": _text(r'id="budget-left">([^<]+)<', page),
    }
    page = client.get(reverse("batch_list", args=[batch.dataset_id])).content.decode()
    row = re.search(r'<td class="num">(\d+) \([\d.]+%\)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>', page)
    assert row, "the batch list's row"
    seen["batch list"] = {"done": int(row[1]), "in_progress": int(row[2]), "places": int(row[3])}
    for scope, query in (("dashboard of the round", f"?round={batch.pk}"), ("dashboard of the dataset", "")):
        page = client.get(reverse("dashboard", args=[batch.dataset_id]) + query).content.decode()
        seen[scope] = {
            "done": _int(r'<b id="done">(\d+)</b>', page),
            "places": _int(r'<span id="places">(\d+)</span>', page),
            "in_progress": _int(r'<span id="in-progress">(\d+)</span>', page),
            "left": _int(r'<span id="left">(\d+)</span>', page),
            "spent": _text(r'id="spend-total">([^<]+)<', page),
            "budget_left": _text(r'id="budget-left">([^<]+)<', page),
        }
        assert '<b id="eta">–</b>' in page  # a stopped batch has no estimated finish
        live = client.get(reverse("dashboard_live", args=[batch.dataset_id]) + query).json()["progress"]
        seen[f"live poll of the {scope}"] = {k: live[k] for k in ("done", "places", "in_progress", "left")}
        assert live["eta"] is None
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    body = api.get(f"/api/batches/{batch.pk}/").json()
    seen["API"] = {
        **{k: body["progress"][k] for k in ("done", "places", "in_progress", "left")},
        "spent": format_money(Decimal(body["spend"]["total"])),
        "budget_left": format_money(Decimal(body["spend"]["budget_left"])),
    }
    assert body["progress"]["eta"] is None and body["progress"]["overdue"] == 1

    for where, figures in seen.items():
        assert figures == {k: want[k] for k in figures}, where


def test_the_dataset_overview_never_adds_pounds_to_dollars(client, lead):
    """A dataset with an in-house batch (dollars) and a Prolific batch paid in pounds: the overview's
    spend card gives each currency its own total and budget, as each batch page does; it once read
    one "$" figure adding both."""
    from hits.batch_fields import BatchSpec
    from hits.ledger import record
    from hits.models import Worker

    dataset = demo_dataset()
    systems = list(dataset.systems.order_by("name"))
    dollars = batches.create_batch(
        dataset=dataset, spec=BatchSpec(name="here", budget=Decimal("20.00")), systems=systems[:1]
    )
    pounds = batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(
            name="prolific", provider="prolific", budget=Decimal("30.00"), provider_config={"currency": "GBP"}
        ),
        systems=systems[1:2],
    )
    # Published (as paid work is): the dataset's card leaves drafts out (tests/test_dashboard_drafts.py).
    Batch.objects.filter(pk__in=[dollars.pk, pounds.pk]).update(status=Batch.Status.PUBLISHED)
    for n, (batch, amount) in enumerate(((dollars, Decimal("1.25")), (pounds, Decimal("2.50")))):
        worker = Worker.objects.create(provider=batch.provider, external_id=f"5ab00000000000000000000{n}")
        hit = batch.hits.order_by("pk").first()
        paid = Assignment.objects.create(hit=hit, worker=worker, status=Assignment.Status.APPROVED)
        record(key=f"reward:{n}", kind="reward", assignment=paid, worker=worker, batch=batch, amount=amount, by=None)
    client.force_login(lead)
    page = client.get(reverse("dashboard", args=[dataset.pk])).content.decode()
    assert _text(r'id="spend-total">([^<]+)<', page) == "$1.25"
    assert _text(r'id="budget-left">([^<]+)<', page) == "$18.75"
    assert _text(r'id="spend-total-gbp">([^<]+)<', page) == "£2.50"
    assert _text(r'id="budget-left-gbp">([^<]+)<', page) == "£27.50"
    assert "$3.75" not in page and "$50.00" not in page


def test_a_spend_past_the_budget_reads_as_over_it_not_as_a_negative_left(client, lead, worked):
    """A budget lowered below what is already paid: the batch page and the overview say how far the
    spend is over it ("$0.50 over it"), as money reads; they once said "-$0.50 left"."""
    batch = worked
    spent = LedgerEntry.objects.filter(batch=batch).aggregate(s=Sum("amount"))["s"]
    assert spent > Decimal("0.50")
    Batch.objects.filter(pk=batch.pk).update(budget=spent - Decimal("0.50"))
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert _text(r'id="budget-over">([^<]+)</b> over it\)', page) == "$0.50"
    assert 'id="budget-left"' not in page
    overview = client.get(reverse("dashboard", args=[batch.dataset_id])).content.decode()
    assert _text(r'id="budget-over">([^<]+)</span> over the budget', overview) == "$0.50"
    for html in (page, overview):
        assert "-$" not in html
