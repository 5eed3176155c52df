"""No request of method GET writes (issue 41): every URL pattern of the app, opened by a lead
with GET, leaves every table as it was (row counts and the latest `auto_now` stamp of every
model), also while the scores' stored run is stale. On PostgreSQL and SQLite."""

import re

import pytest
from django.apps import apps
from django.db.models import Count, Max
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RoutePattern

from hits import versions
from hits.models import Assignment, Worker
from hits.services.submission import task_token
from scoring.runs.services import compute_scores

from .crowd_data import simulated_round

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def snapshot() -> dict:
    """Per model: its row count and the latest value of each of its auto_now fields."""
    state = {}
    for model in apps.get_models():
        stamps = [f.name for f in model._meta.concrete_fields if getattr(f, "auto_now", False)]
        aggregates = {"rows": Count("pk"), **{f"max_{name}": Max(name) for name in stamps}}
        state[model._meta.label] = model._base_manager.aggregate(**aggregates)
    return state


def patterns(resolvers=None, prefix=""):
    """(route, pattern) of every URL pattern, includes walked."""
    for entry in get_resolver().url_patterns if resolvers is None else resolvers:
        if isinstance(entry, URLResolver):
            yield from patterns(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


def fill(route: str, values: dict) -> str | None:
    """A URL of `route` with each parameter set from `values` (by name; 1 or 'x' otherwise).
    Regular-expression routes (the admin's and the API's catch-alls) get a plain path."""
    if "(?P<" in route or "^" in route:
        route = re.sub(r"\(\?P<app_label>[^)]*\)", "hits", route)
        route = re.sub(r"\(\?P<\w+>[^)]*\)|\^\.\*|\^|\$", "", route)
        route = route.replace(".*", "nothing-here")
    return "/" + re.sub(
        r"<(?:(\w+):)?(\w+)>",
        lambda m: str(values.get(m.group(2), 1 if m.group(1) == "int" else "x")),
        route,
    )


@pytest.fixture
def scene(lead):
    dataset, batch = simulated_round()
    assignment = Assignment.objects.filter(hit__batch=batch).select_related("hit__summary__document").first()
    worker = Worker.objects.filter(assignments__hit__batch=batch).first()
    document = assignment.hit.summary.document
    compute_scores(dataset, None, n_resamples=20, trigger="test")
    compute_scores(dataset, batch, n_resamples=20, trigger="test")
    values = {
        "dataset_id": dataset.pk,
        "batch_id": batch.pk,
        "hit_id": assignment.hit_id,
        "assignment_id": assignment.pk,
        "worker_id": worker.pk,
        "user_id": worker.user_id or lead.pk,
        "document_id": document.pk,
        "reference_id": document.reference.pk,
        "object_id": assignment.pk,
        "id": lead.pk,
        "token": task_token(assignment),
        "what": "judgments.csv",
        "kind": "power",
        "action": "stop",
    }
    return dataset, batch, values


def urls(values: dict, batch) -> list[str]:
    found = []
    for route, _ in patterns():
        url = fill(route, values)
        found += [url, f"{url}?round={batch.pk}"] if "<int:dataset_id>" in route else [url]
    return found


def read(response) -> None:
    """Run a streamed response's generator: an export writes nothing either."""
    if response.streaming:
        b"".join(response.streaming_content)


def test_the_walk_covers_the_dashboards_and_the_api():
    routes = {route for route, _ in patterns()}
    assert "datasets/<int:dataset_id>/dashboard/" in routes and "api/datasets/<int:dataset_id>/scores/" in routes
    assert all(isinstance(p.pattern, RoutePattern) for r, p in patterns() if r.startswith("datasets/"))
    assert fill("datasets/<int:dataset_id>/exports/<str:what>", {"dataset_id": 7, "what": "a.csv"}) == (
        "/datasets/7/exports/a.csv"
    )


@pytest.mark.parametrize("stale", [False, True], ids=["fresh", "stale"])
def test_no_get_of_any_url_writes(scene, client, lead, stale):
    dataset, batch, values = scene
    if stale:  # new judgments since the stored runs: a page shows them stale and stores nothing
        versions.bump(dataset.pk, batch.pk)
    client.force_login(lead)
    before = snapshot()
    answered = {}
    for url in urls(values, batch):
        response = client.get(url)
        read(response)
        answered[url] = response.status_code
        assert response.status_code < 500, url
    after = snapshot()
    assert {label for label in before if before[label] != after[label]} == set()
    # the walk reached the pages themselves, not only refusals
    assert answered[f"/datasets/{dataset.pk}/dashboard/?round={batch.pk}"] == 200
    assert answered[f"/api/datasets/{dataset.pk}/scores/?round={batch.pk}"] == 200
    assert answered[f"/batches/{batch.pk}/"] == 200
    assert sum(code == 200 for code in answered.values()) > 40
