"""Dashboard pages: access for every role, bounded queries, live JSON, exports, actions."""

import csv
import io
import json
import re

import pytest
from django.apps import apps
from django.db.models import Count, Max
from django.urls import reverse

from hits import versions
from scoring.models import RecomputeRequest, ScoringRun
from scoring.runs.selectors import run_part

from .crowd_data import simulated_round
from .fresh_settings import read_in_fresh_process
from .test_access import ROLES

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowd(eager_celery, django_capture_on_commit_callbacks):
    """A simulated round, its submissions committed: they asked for the recomputes of the
    dataset's and the round's scores (run here, eager)."""
    with django_capture_on_commit_callbacks(execute=True):
        return simulated_round()


def test_the_submissions_asked_for_both_recomputes(crowd):
    dataset, batch = crowd
    for scope in (None, batch):
        run = ScoringRun.objects.filter(dataset=dataset, batch=scope, kind="scores").get()
        assert run.trigger == "judgments" and run.status == "done"
        assert run.inputs["version"] == versions.current(dataset.pk, scope.pk if scope else None)


def pages(dataset, batch):
    q = f"?round={batch.pk}"
    return [
        reverse("dashboard", args=[dataset.pk]) + q,
        reverse("dashboard_live", args=[dataset.pk]) + q,
        reverse("dashboard_systems", args=[dataset.pk]) + q,
        reverse("dashboard_workers", args=[dataset.pk]) + q,
        reverse("dashboard_metrics", args=[dataset.pk]),
        reverse("dashboard_export", args=[dataset.pk, "judgments.csv"]),
        reverse("dashboard_export", args=[dataset.pk, "scores.csv"]) + q,
    ]


@pytest.mark.parametrize("role", ROLES)
def test_only_leads_see_dashboards(role, crowd, client, request, eager_celery):
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    for url in pages(*crowd):
        response = client.get(url)
        if role == "lead":
            assert response.status_code == 200, url
        elif role == "anonymous":
            assert response.status_code == 302, url
        else:
            assert response.status_code == 403, url


def test_overview_query_count_is_bounded(crowd, client, lead, django_assert_max_num_queries, eager_celery):
    dataset, batch = crowd
    client.force_login(lead)
    with django_assert_max_num_queries(25):
        response = client.get(reverse("dashboard", args=[dataset.pk]) + f"?round={batch.pk}")
    assert response.status_code == 200
    assert "0.7528" in response.content.decode() and "trend-chart" in response.content.decode()


def test_live_json_and_unknown_round(crowd, client, lead, eager_celery):
    dataset, batch = crowd
    client.force_login(lead)
    data = client.get(reverse("dashboard_live", args=[dataset.pk]) + f"?round={batch.pk}").json()
    assert data["progress"]["done"] == batch.hits.count() * 3 and data["progress"]["left"] == 0
    assert data["alpha"]["acu_level"] is not None and data["run"] and data["trend"]["type"] == "scatter"
    assert client.get(reverse("dashboard_live", args=[dataset.pk]) + "?round=999999").status_code == 404


def test_exports_from_the_pages(crowd, client, lead, eager_celery):
    dataset, batch = crowd
    client.force_login(lead)
    judgments = client.get(reverse("dashboard_export", args=[dataset.pk, "judgments.csv"]) + f"?round={batch.pk}")
    rows = list(csv.DictReader(io.StringIO(b"".join(judgments.streaming_content).decode())))
    assert rows and set(rows[0]) == {"worker", "example_id", "system", "acu_index", "label"}
    assert judgments["Content-Disposition"].startswith("attachment")
    scores = client.get(reverse("dashboard_export", args=[dataset.pk, "scores.csv"]) + f"?round={batch.pk}")
    assert len(list(csv.DictReader(io.StringIO(scores.content.decode())))) == batch.hits.count()


def test_exclude_recomputes_and_include_restores(crowd, client, lead, eager_celery):
    dataset, batch = crowd
    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk]) + f"?round={batch.pk}")
    run = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind="scores").first()
    spam = next(r for r in run_part(run, "workers")["rows"] if "spam" in r["worker"])
    assert spam["notes"] and not spam["flags"] and page.status_code == 200  # no gold: noted, never flagged
    url = reverse("dashboard_worker_action", args=[dataset.pk, spam["worker_id"], "exclude"]) + f"?round={batch.pk}"
    client.post(url)
    after = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind="scores").first()
    assert after.pk != run.pk and after.outputs["counts"]["workers"] == 3
    assert after.outputs["alpha"]["acu_level"] > run.outputs["alpha"]["acu_level"]
    client.post(url.replace("/exclude", "/include"))
    restored = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind="scores").first()
    assert restored.outputs["alpha"] == run.outputs["alpha"]


def test_pages_cached_by_run_follow_a_new_run(crowd, client, lead, eager_celery):
    """The trend chart, the workers table and the systems page's fragments are cached by run id: a
    recompute (here after an exclusion) shows at once, and the page read from the cache is the same."""
    dataset, batch = crowd
    client.force_login(lead)
    q = f"?round={batch.pk}"
    urls = [reverse(name, args=[dataset.pk]) + q for name in ("dashboard_systems", "dashboard_workers")]

    def tables(html: bytes) -> list[str]:  # the run's tables (the page's tokens change per request)
        return re.findall(r'<table class="(?:data sortable|matrix)".*?</table>', html.decode(), re.S)

    first = [client.get(url).content for url in urls]
    assert tables(first[0]) and tables(client.get(urls[0]).content) == tables(first[0])  # from the cache
    trend = client.get(reverse("dashboard_live", args=[dataset.pk]) + q).json()["trend"]
    run = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind="scores").first()
    spam = next(r for r in run_part(run, "workers")["rows"] if "spam" in r["worker"])
    client.post(reverse("dashboard_worker_action", args=[dataset.pk, spam["worker_id"], "exclude"]) + q)
    after = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind="scores").first()
    assert after.pk != run.pk
    systems, workers = (client.get(url).content.decode() for url in urls)
    assert tables(systems.encode()) != tables(first[0])
    assert f"{spam['worker_id']}/include" in workers and "excluded</span>" in workers
    again = client.get(reverse("dashboard_live", args=[dataset.pk]) + q).json()["trend"]
    assert len(again["data"]["datasets"][0]["data"]) == len(trend["data"]["datasets"][0]["data"]) + 1


def test_power_analysis_started_from_the_page(crowd, client, lead, eager_celery, settings):
    settings.LONG_TASKS_IN_BACKGROUND = False  # in the request (the background thread: test_charts_tables.py)
    dataset, batch = crowd
    client.force_login(lead)
    client.post(
        reverse("dashboard_start", args=[dataset.pk, "power"]),
        {"round": batch.pk, "n_trials": "20", "n_resamples": "200"},
    )
    run = ScoringRun.objects.get(dataset=dataset, kind="power")
    assert run.status == "done" and run.parameters["n_trials"] == 20
    page = client.get(reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    assert "power-chart" in page and "significance-matrix" in page


def stored() -> dict:
    """Per model: its row count and latest auto_now stamps."""
    state = {}
    for model in apps.get_models():
        stamps = {f"max_{f.name}": Max(f.name) for f in model._meta.concrete_fields if getattr(f, "auto_now", False)}
        state[model._meta.label] = model._base_manager.aggregate(rows=Count("pk"), **stamps)
    return state


def api_pages(dataset, batch):
    return [f"/api/datasets/{dataset.pk}/{part}/?round={batch.pk}" for part in ("scores", "agreement", "workers")]


def test_a_get_of_a_dashboard_page_stores_nothing_even_when_stale(crowd, client, lead):
    """No GET writes: with the stored runs current, then stale (new judgments), every dashboard
    page, live.json and the API read the stored run, say it is stale and store nothing (no run,
    no recompute flag); the write asked for the recompute, or the lead's POST "Recompute now"."""
    dataset, batch = crowd
    client.force_login(lead)
    run = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind="scores").get()
    for stale in (False, True):
        if stale:
            versions.bump(dataset.pk, batch.pk)  # a write's new judgments (its commit is not run here)
        before = stored()
        for url in pages(dataset, batch) + api_pages(dataset, batch):
            response = client.get(url)
            if response.streaming:
                b"".join(response.streaming_content)
            assert response.status_code == 200, url
        assert stored() == before
        live = client.get(reverse("dashboard_live", args=[dataset.pk]) + f"?round={batch.pk}").json()
        assert live["stale"] is stale and live["run"] == run.pk
        overview = client.get(reverse("dashboard", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
        assert ('id="stale-note"' in overview) is stale and ("Recompute now" in overview) is stale
        assert client.get(f"/api/datasets/{dataset.pk}/scores/?round={batch.pk}").json()["stale"] is stale
    assert not RecomputeRequest.objects.filter(queued=True).exists()
    response = client.post(reverse("dashboard_recompute", args=[dataset.pk]), {"round": batch.pk, "section": "workers"})
    assert response.status_code == 302 and response["Location"].endswith(f"/dashboard/workers/?round={batch.pk}")
    fresh = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind="scores").order_by("-pk").first()
    assert fresh.pk != run.pk and fresh.outputs["alpha"] == run.outputs["alpha"]  # the same judgments
    assert client.get(reverse("dashboard_live", args=[dataset.pk]) + f"?round={batch.pk}").json()["stale"] is False


def test_recompute_now_with_a_broker_queues_one_coalesced_task(
    client, lead, monkeypatch, django_capture_on_commit_callbacks
):
    """With a broker (the suite's Redis, replaced by a recorder): "Recompute now" sets the flag
    and queues one task after the commit; a second ask while it is queued adds nothing."""
    from config import dispatch

    dataset, batch = simulated_round()
    sent = []
    monkeypatch.setattr(dispatch.current_app, "send_task", lambda name, args=None, **kw: sent.append((name, args)))
    client.force_login(lead)
    url = reverse("dashboard_recompute", args=[dataset.pk])
    assert client.get(url).status_code == 405
    with_round = {"round": batch.pk}
    with django_capture_on_commit_callbacks(execute=True):  # queued once the request commits
        assert client.post(url, with_round).status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url, with_round).status_code == 302
    assert sent == [("scoring.tasks.recompute_scores", [dataset.pk, batch.pk])]
    assert RecomputeRequest.objects.get(dataset=dataset, round_id=batch.pk).queued
    assert not ScoringRun.objects.filter(dataset=dataset).exists()  # the task stores the run, not the request


def test_with_redis_down_every_page_still_shows(crowd, client, lead, eager_celery, settings):
    """The pages' caches of finished runs only save work: a Redis that does not answer costs
    the work, never the page. The caches as a process reads them with CACHE_URL set (database
    sessions here)."""
    caches = read_in_fresh_process("json.dumps(settings.CACHES)", CACHE_URL="redis://127.0.0.1:9/0")
    settings.CACHES = json.loads(caches)  # nothing listens on port 9
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"
    client.force_login(lead)
    dataset, _ = crowd
    for url in pages(*crowd)[:4]:
        assert client.get(url).status_code == 200, url
    overview, _, systems, workers = (client.get(url).content.decode() for url in pages(*crowd)[:4])
    assert "trend-chart" in overview
    assert all(s.name in systems for s in dataset.systems.all())
    assert "data-worker=" in workers
