"""Walk 62: the dashboard's "Agreement over time" chart labelled each scoring run with its time in
UTC and no zone, while every other time on the page is in the site's zone (TIME_ZONE) with its
name (tests/test_times_with_zone.py). Its ticks are now the site's time and its axis names the zone."""

from datetime import UTC, datetime

import pytest
from django.test import override_settings

from scoring.models import ScoringRun
from scoring.results import dashboard

from .crowd_data import scored, simulated_round

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def _chart_at(zone):
    dataset, batch = simulated_round()
    scored(dataset, batch)
    ScoringRun.objects.filter(dataset=dataset, batch=batch).update(started_at=datetime(2026, 12, 7, 5, 37, tzinfo=UTC))
    run = ScoringRun.objects.filter(dataset=dataset, batch=batch).latest("pk")
    with override_settings(TIME_ZONE=zone):
        return dashboard.trend_chart(dataset, batch, run)


def test_the_agreement_chart_reads_the_site_time_and_names_its_zone():
    chart = _chart_at("Europe/Berlin")
    assert chart["xLabels"] == ["2026-12-07 06:37"]  # 05:37 UTC is 06:37 in Berlin in December
    assert chart["options"]["scales"]["x"]["title"]["text"] == "scoring runs (times in Europe/Berlin)"


def test_in_utc_the_axis_says_so():
    chart = _chart_at("UTC")
    assert chart["xLabels"] == ["2026-12-07 05:37"]
    assert chart["options"]["scales"]["x"]["title"]["text"] == "scoring runs (times in UTC)"
