"""The new batch form's live estimate is the created draft's estimate (review of issue 43, defect 3):
the endpoint the form calls as the lead types and the draft's `cost_estimate` (what publishing checks
against the budget) count the same HITs, places and dollars: gold HITs at the assignments per HIT, the
other HITs of an adaptive batch at their most places, a triaged `pairs` batch's HITs by the ACUs they
keep (a HIT left with none not counted). And the live estimate writes nothing."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Summary
from hits.allocation.policy import PAIRS
from hits.models import HIT, Batch, JudgeRun
from hits.money import format_money
from hits.services.batches import cost_estimate, publish_batch
from hits.services.money_budget import over_budget_message

from .crowd_data import BATCH_FORM, batch_of, demo_dataset
from .test_pairs_triage import judge_run

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

FORM = {
    **BATCH_FORM,
    "gold_share": 0,
    "allocation": "fixed",
}
# The reviewer's repro: gold HITs get the 9 assignments, the others at most 2 places.
PAIRS_GOLD = {"allocation": "pairs", "assignments": 9, "allocation_max": 2, "gold_share": 0.5}
CASES = {
    "pairs, gold, assignments above the most places": PAIRS_GOLD,
    "adaptive with gold": {"allocation": "adaptive", "assignments": 3, "allocation_max": 5, "gold_share": 0.3},
    "adaptive, gold, assignments above the most places": {
        "allocation": "adaptive",
        "assignments": 6,
        "allocation_min": 1,
        "allocation_max": 2,
        "gold_share": 0.5,
    },
    "fixed with gold": {"gold_share": 0.3},
    "fixed with gold on MTurk (fees)": {"gold_share": 0.3, "provider": "mturk"},
    "pairs with triage": {**PAIRS_GOLD, "assignments": 3, "allocation_max": 3, "gold_share": 0.2, "triage": 0.9}
    | {"triage_when": "always"},
    "pairs with triage at the lowest c": {
        "allocation": "pairs",
        "allocation_max": 3,
        "gold_share": 0.2,
        "triage": 0.51,
        "triage_when": "always",
    },
    "pairs with the triage held back (the default)": {**PAIRS_GOLD, "gold_share": 0.2, "triage": 0.9},
}


@pytest.fixture
def lead_client(lead):
    client = Client()
    client.force_login(lead)
    return client


def triage_run(dataset, gold_share: float) -> JudgeRun:
    """A run sure of every pair of one non-gold summary (its HIT is not made) and of half the other pairs
    at c = 0.9; at 0.51 it leaves only the pairs at 0.5 (a summary's 3rd, 9th, ... ACU) to the crowd."""
    untriaged = batch_of(dataset, allocation=PAIRS, gold_share=gold_share)  # the form's gold draw (seed 0)
    plain = untriaged.hits.filter(gold_answers__isnull=True).order_by("-pk").first().summary_id
    untriaged.delete()
    run, _ = judge_run(dataset, plain)
    run.judgments.filter(probability=0.3).update(probability=0.5)
    return run


def form_of(dataset, case: dict) -> dict:
    form = {**FORM, **{k: v for k, v in case.items() if k != "triage"}}
    if "triage" in case:
        form.update(allocation_judge_run=triage_run(dataset, form["gold_share"]).pk, triage_confidence=case["triage"])
    return form


def live(client, dataset, form: dict) -> dict:
    response = client.get(reverse("batch_estimate", args=[dataset.pk]), form)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_live_estimate_is_the_created_drafts_and_its_total_passes_the_budget(lead_client, case):
    dataset = demo_dataset()
    form = form_of(dataset, case)
    before = (Batch.objects.count(), HIT.objects.count())
    figures = live(lead_client, dataset, form)
    assert (Batch.objects.count(), HIT.objects.count()) == before  # the live estimate writes nothing

    response = lead_client.post(reverse("batch_new", args=[dataset.pk]), {**form, "name": "draft"})
    assert response.status_code == 302, response.content.decode()[-2000:]
    batch = Batch.objects.get(name="draft")
    cost = cost_estimate(batch)
    assert (figures["hits"], figures["assignments"]) == (cost["hits"], cost["assignments"])
    assert [figures[k] for k in ("rewards", "fees", "total")] == [
        format_money(cost[k]) for k in ("rewards", "fees", "total")
    ]
    assert figures["hits"] == batch.hits.count()  # no follow-up yet: every HIT is a summary's first
    gold = batch.hits.filter(gold_answers__isnull=False).count()
    assert gold == round(form["gold_share"] * Summary.objects.filter(system__dataset=dataset).count())
    # a budget set from the live estimate lets the draft be published
    batch.budget = Decimal(figures["total"].lstrip("$"))
    batch.save(update_fields=["budget"])
    assert over_budget_message(batch, cost["total"]) is None
    if batch.provider == "inhouse":  # (publishing on MTurk would call it)
        assert publish_batch(batch).status == Batch.Status.PUBLISHED


def test_the_reviewers_repro_counts_gold_hits_at_the_assignments(lead_client):
    dataset = demo_dataset()
    n = Summary.objects.filter(system__dataset=dataset).count()
    figures = live(lead_client, dataset, {**FORM, **PAIRS_GOLD})
    gold = round(0.5 * n)
    assert figures["hits"] == n and figures["assignments"] == gold * 9 + (n - gold) * 2


def test_the_triaged_estimate_reads_the_runs_probabilities_in_one_query(lead_client):
    dataset = demo_dataset()
    form = form_of(dataset, CASES["pairs with triage"])
    untriaged = live(lead_client, dataset, {**form, "triage_confidence": ""})
    with CaptureQueriesContext(connection) as queries:
        figures = live(lead_client, dataset, form)
    assert sum("machinejudgment" in q["sql"] for q in queries.captured_queries) == 1
    assert figures["hits"] == untriaged["hits"] - 1  # the summary the run decides whole has no HIT
    assert Decimal(figures["total"].lstrip("$")) < Decimal(untriaged["total"].lstrip("$"))


def test_a_choice_the_draft_would_refuse_is_told_not_counted(lead_client):
    """Triage that leaves the crowd nothing: the live estimate says what creating the draft would."""
    dataset = demo_dataset()
    run, _ = judge_run(dataset, None)
    run.judgments.update(probability=0.99)
    form = {**FORM, "allocation": "pairs", "allocation_judge_run": run.pk, "triage_confidence": 0.9}
    for when, message in (
        ("always", "decides every pair of the non-gold HITs"),
        ("spammers", "needs gold HITs to read the crowd: set a gold share, or choose to triage always"),
    ):
        response = lead_client.get(reverse("batch_estimate", args=[dataset.pk]), {**form, "triage_when": when})
        assert response.status_code == 400  # a rule between the choices is told, not a server error
        assert message in response.json()["error"]
        created = lead_client.post(reverse("batch_new", args=[dataset.pk]), {**form, "triage_when": when, "name": "d"})
        assert message in created.content.decode()
    assert not Batch.objects.filter(name="d").exists()


def test_the_live_estimate_of_a_gbp_prolific_batch_reads_in_pounds(lead_client):
    """The new batch form's live count reads in the currency the draft's pages will: a Prolific
    account in GBP gives £, as the batch page of the draft does."""
    dataset = demo_dataset()
    figures = live(lead_client, dataset, {**FORM, "provider": "prolific", "prolific_currency": "GBP", "budget": "10"})
    assert figures["total"].startswith("£") and figures["budget"] == "£10.00"
    assert live(lead_client, dataset, {**FORM, "budget": "10"})["budget"] == "$10.00"
