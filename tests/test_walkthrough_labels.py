"""A lead's walkthrough, low-priority findings: the dataset-wide workers page's bonus form paid on
the worker's latest batch without naming it until the message after; the Prolific panel's bonus
box said "(USD)" where the rest of the batch page says "($)"; an imported round's overview showed
"0 of 0 assignments · 0 batch(es)" and $0.00 spend; and two expert rounds made in the same minute
had the same name."""

import re
from unittest import mock

import pytest
from django.urls import reverse

from hits.models import Assignment, Batch, Judgment, Worker
from hits.services import expert

from .authoring_data import unlabelled_dataset
from .crowd_data import demo_dataset, scored, simulated_round
from .test_money_labels import FORM, PROLIFIC_GBP, labels

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def test_the_dataset_wide_bonus_form_names_the_batch_it_pays_in(client, lead):
    dataset, batch = simulated_round()
    Batch.objects.filter(pk=batch.pk).update(name="Round “one” <b>")
    scored(dataset)
    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk])).content.decode()
    forms = re.findall(r'<form method="post" action="[^"]*/bonus[^"]*".*?</form>', page, re.S)
    assert forms
    for form in forms:
        assert "Paid in batch “Round “one” &lt;b&gt;”" in form
        assert 'placeholder="Amount ($)"' in form
    # and the bonus is paid in that batch, as the form said
    worker = Worker.objects.filter(assignments__hit__batch=batch, provider="inhouse").first()
    response = client.post(
        reverse("dashboard_worker_action", args=[dataset.pk, worker.pk, "bonus"]),
        {"amount": "0.10", "reason": "care", "token": "t1"},
        follow=True,
    )
    said = [str(m) for m in response.context["messages"]]
    assert any("Round “one” <b>" in m and "Bonus of $0.10" in m for m in said), said


def test_the_prolific_panels_bonus_box_names_the_currency_as_the_page_does(client, lead):
    dataset = demo_dataset()
    client.force_login(lead)
    sent = {**FORM, **PROLIFIC_GBP, "prolific_currency": "USD", "budget": "50"}
    response = client.post(reverse("batch_new", args=[dataset.pk]), sent)
    assert response.status_code == 302, response.context["form"].errors
    page = client.get(response["Location"]).content.decode()
    shown = labels(page)
    assert shown["prolific-bonus"] == "Bonus per ticked session ($)"
    assert shown["bonus-amount"] == "Amount ($)" and "(USD)" not in page


def test_an_imported_rounds_overview_says_what_it_holds_not_progress_and_money(client, lead):
    dataset = demo_dataset()
    imported = dataset.batches.get(kind="imported")
    client.force_login(lead)
    page = client.get(reverse("dashboard", args=[dataset.pk]) + f"?round={imported.pk}").content.decode()
    judgments = Judgment.objects.filter(assignment__hit__batch=imported).count()
    annotators = Assignment.objects.filter(hit__batch=imported).values("worker").distinct().count()
    assert judgments and annotators
    found = re.search(r'id="imported-judgments">(\d+)</b> judgments? by <b id="imported-annotators">(\d+)</b>', page)
    assert found and (int(found[1]), int(found[2])) == (judgments, annotators)
    assert "batch(es)" not in page and 'id="spend-total"' not in page and 'id="places"' not in page
    # a crowd round's overview keeps its progress and spend
    dataset_page = client.get(reverse("dashboard", args=[dataset.pk])).content.decode()
    assert 'id="places"' in dataset_page and 'id="spend-total"' in dataset_page
    assert 'id="imported-round"' not in dataset_page


def test_two_expert_rounds_made_in_the_same_minute_have_different_names(tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=3)
    at = expert.timezone.now()
    with mock.patch("django.utils.timezone.now", return_value=at):
        first = expert.create_round(dataset, count=2, experts=1, seed=0)
        second = expert.create_round(dataset, count=2, experts=1, seed=1)
    assert first.name != second.name
    minute = expert.timezone.localtime(first.created_at).strftime("%Y-%m-%d %H:%M")
    assert first.name == f"{dataset.name}: expert labels {first.pk} ({minute})"
