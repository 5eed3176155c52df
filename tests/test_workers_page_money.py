"""Lab review of the lead's review of work on the workers page: money in the round's own
currency, and a bonus from a round's page paid on that round's work."""

import re
import secrets
from decimal import Decimal

import pytest
from django.urls import reverse

from hits.models import Assignment, Batch, LedgerEntry, Worker
from hits.services import review
from hits.services.review import ReviewError

from .crowd_data import scored, simulated_round

pytestmark = pytest.mark.django_db


def as_prolific_gbp(batch) -> None:
    """The round's batch and its workers on Prolific, whose account pays in pounds."""
    Batch.objects.filter(pk=batch.pk).update(provider="prolific", provider_config={"currency": "GBP"})
    Worker.objects.filter(assignments__hit__batch=batch).update(provider="prolific")


def test_the_workers_page_shows_a_prolific_rate_in_pounds(client, lead):
    """Lab review: a Prolific (GBP) round's workers page headed its rate column "$ / hour" and
    printed each worker's rate in dollars."""
    dataset, batch = simulated_round()
    as_prolific_gbp(batch)
    scored(dataset, batch)
    client.force_login(lead)
    for query in ("", f"?round={batch.pk}"):
        page = client.get(reverse("dashboard_workers", args=[dataset.pk]) + query).content.decode()
        assert "Rate / hour" in page and "$ / hour" not in page
        rates = re.findall(r'<td class="num">([^<]*)</td>\s*<td>', page)
        assert rates and all(r.startswith("£") or r == "–" for r in rates), rates
        assert any(r.startswith("£") for r in rates)
        assert 'placeholder="$"' not in page


def test_a_refused_bonus_amount_names_the_batchs_currency(lead):
    """Lab review: a Prolific (GBP) bonus of "abc" was refused with "A bonus is between $0.01 and $...",
    the wrong money."""
    dataset, batch = simulated_round()
    as_prolific_gbp(batch)
    assignment = Assignment.objects.filter(hit__batch=batch, status__in=Assignment.COUNTED).first()
    with pytest.raises(ReviewError, match=r"between £0\.01 and £"):
        review.send_bonus(assignment_id=assignment.pk, amount="abc", reason="x", token=secrets.token_hex(8), by=lead)
    assert not LedgerEntry.objects.filter(kind=LedgerEntry.Kind.BONUS).exists()


def test_a_bonus_from_a_rounds_workers_page_pays_that_rounds_work(client, lead):
    """Lab review: on a round's workers page (?round=), Bonus attached the money to the worker's latest
    work of the dataset, so it was paid and counted in another round (its budget, its currency)."""
    from .crowd_data import published_batch

    dataset, first = simulated_round()
    worker = Worker.objects.filter(assignments__hit__batch=first).order_by("pk").first()
    own = Assignment.objects.filter(worker=worker, hit__batch=first, status__in=Assignment.COUNTED).first()
    second = published_batch(dataset)
    later = Assignment.objects.create(
        hit=second.hits.first(), worker=worker, status=Assignment.Status.SUBMITTED, submitted_at=own.submitted_at
    )
    Assignment.objects.filter(pk=later.pk).update(submitted_at=own.submitted_at.replace(year=own.submitted_at.year + 1))
    scored(dataset, first)
    client.force_login(lead)
    url = reverse("dashboard_worker_action", args=[dataset.pk, worker.pk, "bonus"]) + f"?round={first.pk}"
    said = client.post(url, {"amount": "0.50", "reason": "careful work", "token": "t-1"}, follow=True)
    assert "Bonus of $0.50 sent" in " ".join(str(m) for m in said.context["messages"])
    entry = LedgerEntry.objects.get(kind=LedgerEntry.Kind.BONUS)
    assert entry.batch_id == first.pk and entry.assignment.hit.batch_id == first.pk
    client.post(url, {"amount": "0.50", "reason": "careful work", "token": "t-1"})  # a double click
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.BONUS).count() == 1


def test_the_workers_page_blocks_and_excludes_in_one_step_as_the_batch_page_does(client, lead):
    """Lab review: the workers page's Block form had no "also leave their judgments out of scoring",
    which the batch page's block form has; a lead had to block, then exclude, in two posts."""
    dataset, batch = simulated_round()
    scored(dataset, batch)
    worker = Worker.objects.filter(assignments__hit__batch=batch, external_id__contains="spam").distinct().get()
    ledger_before = list(LedgerEntry.objects.order_by("pk").values_list("pk", "amount", "kind"))
    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk])).content.decode()
    row = re.search(rf'<tr data-worker="{worker.external_id}">.*?</tr>', page, re.S).group(0)
    block_form = re.search(r'<form method="post" action="[^"]*/block[^"]*".*?</form>', row, re.S).group(0)
    assert 'name="exclude" value="1"' in block_form and "Also leave all their judgments out of scoring" in block_form
    action = reverse("dashboard_worker_action", args=[dataset.pk, worker.pk, "block"])
    response = client.post(action, {"reason": "spam", "exclude": "1"}, follow=True)
    worker.refresh_from_db()
    assert worker.blocked_at is not None and worker.block_reason == "spam" and worker.excluded
    shown = [str(m) for m in response.context["messages"]]
    assert any("left their judgments out of scoring; scores recomputed" in m for m in shown), shown
    assert list(LedgerEntry.objects.order_by("pk").values_list("pk", "amount", "kind")) == ledger_before
    other = Worker.objects.filter(assignments__hit__batch=batch).exclude(pk=worker.pk).distinct().first()
    client.post(reverse("dashboard_worker_action", args=[dataset.pk, other.pk, "block"]), {"reason": "slow"})
    other.refresh_from_db()
    assert other.blocked_at is not None and not other.excluded  # unticked: blocked only


def _bonus_form(page: str, worker) -> tuple[str, str]:
    """The worker's row's "Block / bonus" details (its opening tag) and its bonus form."""
    row = re.search(rf'<tr data-worker="{worker.external_id}">.*?</tr>', page, re.S).group(0)
    details = re.search(r"<details[^>]*>", row).group(0)
    return details, re.search(r'<form method="post" action="[^"]*/bonus[^"]*".*?</form>', row, re.S).group(0)


@pytest.mark.parametrize(
    "amount, budget, said",
    [("1,50", None, "decimal comma"), ("1.50", "0.01", "over its budget")],
)
def test_a_bonus_refused_on_the_workers_page_keeps_what_was_typed(client, lead, amount, budget, said):
    """Code review: a bonus refused on the workers page (a bad amount, over the budget) came back with
    an empty form, the lead's amount and reason lost; it now comes back open and as typed, once, with
    a fresh one-time token (as the batch page's and an assignment's bonus forms do), and the
    corrected retry pays once."""
    dataset, batch = simulated_round()
    if budget is not None:
        Batch.objects.filter(pk=batch.pk).update(budget=budget)
    scored(dataset, batch)
    worker, other = Worker.objects.filter(assignments__hit__batch=batch).distinct().order_by("pk")[:2]
    client.force_login(lead)
    url = reverse("dashboard_workers", args=[dataset.pk]) + f"?round={batch.pk}"
    first = re.search(r'name="token" value="([^"]+)"', _bonus_form(client.get(url).content.decode(), worker)[1])[1]
    action = reverse("dashboard_worker_action", args=[dataset.pk, worker.pk, "bonus"]) + f"?round={batch.pk}"
    form = {"amount": amount, "reason": "Careful <work> & notes", "token": first}
    refused = client.post(action, form, follow=True)
    assert said in " ".join(str(m) for m in refused.context["messages"])
    details, bonus = _bonus_form(refused.content.decode(), worker)
    assert details == "<details open>"
    assert f'aria-label="Bonus amount ($) for {worker.external_id}" value="{amount}"' in bonus
    assert f'aria-label="Bonus reason for {worker.external_id}" value="Careful &lt;work&gt; &amp; notes"' in bonus
    details, bonus_of_other = _bonus_form(refused.content.decode(), other)
    assert details == "<details>" and "Careful" not in bonus_of_other  # only the refused form is filled
    again = re.search(r'name="token" value="([^"]+)"', bonus)[1]
    assert again != first and not LedgerEntry.objects.filter(kind=LedgerEntry.Kind.BONUS).exists()

    Batch.objects.filter(pk=batch.pk).update(budget=None)
    sent = client.post(action, {**form, "amount": "1.50", "token": again}, follow=True)
    assert "Bonus of $1.50 sent" in " ".join(str(m) for m in sent.context["messages"])
    assert list(LedgerEntry.objects.filter(kind=LedgerEntry.Kind.BONUS).values_list("amount", flat=True)) == [
        Decimal("1.50")
    ]
    details, bonus = _bonus_form(sent.content.decode(), worker)
    assert details == "<details>" and "Careful" not in bonus  # shown once: a paid bonus leaves the form empty


def test_a_bonus_from_the_datasets_workers_page_names_the_batch_it_charges(client, lead):
    """Walk: the dataset-wide workers page pays a bonus on the worker's latest batch, and its
    refusal said "This bonus takes the batch's spend to …" without saying which batch; the
    refusal and the confirmation now name it."""
    dataset, batch = simulated_round()
    Batch.objects.filter(pk=batch.pk).update(budget="0.01")
    scored(dataset, batch)
    worker = Worker.objects.filter(assignments__hit__batch=batch).distinct().order_by("pk").first()
    client.force_login(lead)
    url = reverse("dashboard_workers", args=[dataset.pk])
    action = reverse("dashboard_worker_action", args=[dataset.pk, worker.pk, "bonus"])
    form = {"amount": "1.50", "reason": "Careful work", "token": secrets.token_urlsafe(16)}
    refused = client.post(action, form, follow=True)
    said = " ".join(str(m) for m in refused.context["messages"])
    assert f"This bonus takes the spend of batch “{batch.name}” to" in said and "over its budget" in said
    token = re.search(r'name="token" value="([^"]+)"', _bonus_form(client.get(url).content.decode(), worker)[1])[1]
    sent = client.post(action, {**form, "token": token, "over_budget": "1"}, follow=True)
    said = " ".join(str(m) for m in sent.context["messages"])
    assert f"Bonus of $1.50 sent to {worker.external_id} (batch “{batch.name}”)." in said


def test_the_dataset_workers_page_rates_work_in_the_currency_of_the_batches_that_paid_it(client, lead):
    """Code review: across a dataset, the rate column read its currency from the worker's provider
    (one currency per provider, whichever batch came last) and summed the rewards of every batch: a
    worker paid in pounds in one Prolific round and in dollars in another read one figure, a sum of
    pounds and dollars, in one of the two. Each batch's work is now rated in its own currency."""
    from django.utils import timezone

    from hits.money import hourly_rate

    from .crowd_data import published_batch

    dataset, pounds = simulated_round()
    as_prolific_gbp(pounds)
    dollars = published_batch(dataset)
    Batch.objects.filter(pk=dollars.pk).update(provider="prolific", provider_config={"currency": "USD"})
    crowd = Worker.objects.filter(assignments__hit__batch=pounds).exclude(external_id__contains="spam")
    worker, only_pounds = crowd.distinct().order_by("pk")[:2]
    hit = dollars.hits.order_by("pk").first()
    Assignment.objects.create(
        hit=hit, worker=worker, status=Assignment.Status.SUBMITTED, active_seconds=120, submitted_at=timezone.now()
    )
    scored(dataset)

    def rate(batch, who) -> Decimal:
        timed = Assignment.objects.filter(
            hit__batch=batch, worker=who, status__in=Assignment.COUNTED, active_seconds__gt=0
        ).values_list("hit__reward", "active_seconds")
        return hourly_rate(sum(r for r, _ in timed), sum(s for _, s in timed))

    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk])).content.decode()
    cells = {}
    for who in (worker, only_pounds):
        row = re.search(rf'<tr data-worker="{who.external_id}">.*?</tr>', page, re.S).group(0)
        cells[who.pk] = re.findall(r'<td class="num">([^<]*)</td>', row)[4]
    mixed = f"£{rate(pounds, worker):,.2f} · ${rate(dollars, worker):,.2f}"  # each currency's, by its code
    assert cells == {worker.pk: mixed, only_pounds.pk: f"£{rate(pounds, only_pounds):,.2f}"}
    rows = {r["worker_id"]: r for r in client.get(f"/api/datasets/{dataset.pk}/workers/").json()["results"]}
    assert rows[worker.pk]["hourly"] is None  # no one figure: never pounds and dollars summed
    assert rows[worker.pk]["hourly_rates"] == {"GBP": str(rate(pounds, worker)), "USD": str(rate(dollars, worker))}


def test_a_worker_paid_in_two_currencies_sorts_by_the_rate_in_their_main_currency(client, lead):
    """Code review: sorted by *Rate / hour*, a worker paid in pounds and in dollars ("£16.41 ·
    $7.50", no one figure) sorted last in either direction. They sort on the rate in their main
    currency (most of their timed work), shown first, as the header's tooltip says."""
    from django.utils import timezone

    from .crowd_data import published_batch

    dataset, pounds = simulated_round()
    as_prolific_gbp(pounds)
    dollars = published_batch(dataset)
    Batch.objects.filter(pk=dollars.pk).update(provider="prolific", provider_config={"currency": "USD"})
    crowd = Worker.objects.filter(assignments__hit__batch=pounds).distinct().order_by("pk")
    worker = crowd.first()
    Assignment.objects.create(
        hit=dollars.hits.order_by("pk").first(),
        worker=worker,
        status=Assignment.Status.SUBMITTED,
        active_seconds=120,  # less than their pound rounds' work: pounds are their main currency
        submitted_at=timezone.now(),
    )
    scored(dataset)
    client.force_login(lead)
    api = {r["worker_id"]: r for r in client.get(f"/api/datasets/{dataset.pk}/workers/").json()["results"]}
    assert api[worker.pk]["hourly"] is None and set(api[worker.pk]["hourly_rates"]) == {"GBP", "USD"}
    assert api[worker.pk]["hourly_currency"] == "GBP"

    url = reverse("dashboard_workers", args=[dataset.pk])
    page = client.get(url).content.decode()
    assert "Sorted by each worker's rate in their main currency" in page  # the header's tooltip
    for sort in ("hourly", "-hourly"):
        page = client.get(f"{url}?sort={sort}").content.decode()
        rows = re.findall(r'<tr data-worker="([^"]+)">.*?</tr>', page, re.S)
        cells = [
            re.findall(r'<td class="num">([^<]*)</td>', row)[4]
            for row in re.findall(r"<tr data-worker.*?</tr>", page, re.S)
        ]
        shown = dict(zip(rows, cells, strict=True))
        assert shown[worker.external_id].startswith("£") and " · $" in shown[worker.external_id]  # its main rate first
        firsts = [Decimal(c.split(" · ")[0].lstrip("£$").replace(",", "")) for c in cells if c != "–"]
        assert firsts == sorted(firsts, reverse=sort.startswith("-")), (sort, cells)
        assert len(firsts) == len(crowd), cells  # every worker rated: none sorted last for want of one figure


def test_the_hourly_sort_rule_reads_the_main_currency():
    """The rule in one place: the main currency is the one with the most timed seconds (a tie, the
    first code); the sort key is the one rate, else the main currency's rate, else none (last)."""
    from scoring.results.worker_pages import hourly_sort_key
    from scoring.runs.workers import main_currency

    assert main_currency({"timed": {"USD": [Decimal("1"), 60.0], "GBP": [Decimal("9"), 600.0]}}) == "GBP"
    assert main_currency({"timed": {"USD": [Decimal("1"), 60.0], "GBP": [Decimal("1"), 60.0]}}) == "GBP"
    assert main_currency({"timed": {}}) is None
    mixed = {"hourly": None, "hourly_rates": {"GBP": 16.41, "USD": 7.5}, "hourly_currency": "USD"}
    assert hourly_sort_key(mixed) == 7.5
    assert hourly_sort_key({"hourly": 9.5, "hourly_rates": {"GBP": 9.5}, "hourly_currency": "GBP"}) == 9.5
    assert hourly_sort_key({"hourly": None, "hourly_rates": {"GBP": 16.41, "USD": 7.5}}) is None  # an older run
    assert hourly_sort_key({"hourly": None, "hourly_rates": {}, "hourly_currency": None}) is None
