"""Walk 62: on a phone the agreement chart drew every scoring run's time under its point, and three
runs' times ("2026-12-07 05:37", ...) were drawn over each other. Its ticks are thinned as the other
charts' are: both ends always, and between them only the times that fit beside their neighbours."""

from datetime import timedelta

import pytest

from scoring.models import ScoringRun

from ..conftest import PASSWORD
from ..crowd_data import scored, simulated_round
from .conftest import login
from .test_charts_editor_browser import assert_no_overlap, x_labels

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _earlier_runs(dataset, batch, count):
    """`count` finished scores runs of the round before its latest one, a few minutes apart (the
    trend reads each run's alphas; the pages read the latest, which stays the real one)."""
    latest = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind=ScoringRun.Kind.SCORES).latest("pk")
    for i in range(count):
        run = ScoringRun.objects.create(
            dataset=dataset,
            batch=batch,
            kind=latest.kind,
            status=latest.status,
            trigger="test",
            inputs=latest.inputs,
            outputs={"alpha": latest.outputs["alpha"]},
        )
        earlier = latest.started_at - timedelta(minutes=3 * (count - i))
        ScoringRun.objects.filter(pk=run.pk).update(started_at=earlier)  # auto_now_add: set after


@pytest.mark.parametrize("width", [390, 1280])
def test_the_agreement_chart_draws_run_times_that_do_not_overlap(live_server, browser, shoot, lead, width):
    dataset, batch = simulated_round()
    scored(dataset, batch)
    _earlier_runs(dataset, batch, 2)
    context = browser.new_context(viewport={"width": width, "height": 860})
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/?round={batch.pk}")
    page.wait_for_function("window.Chart && Chart.getChart(document.querySelector('canvas[data-chart=trend-chart]'))")
    shoot(page, f"agreement-chart-{width}")
    labels = x_labels(page, "trend-chart")
    assert_no_overlap(labels)
    points = page.evaluate(
        "Chart.getChart(document.querySelector('canvas[data-chart=trend-chart]')).data.datasets[0].data.length"
    )
    assert points == 3  # every run is drawn: only labels that would overlap are left out
    assert len(labels) >= 2  # the first and the last run are always named
    context.close()
