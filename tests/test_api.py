"""REST API for leads: every endpoint for every role, token authentication, pagination,
JSON errors, import, batches (create, cost, publish) and results."""

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import ACU, Dataset, Document, Summary
from config.api_permissions import IsLead
from hits.batch_fields import BatchSpec
from hits.models import Batch, Judgment
from hits.services.batches import create_batch
from hits.services.simulate import simulate_crowd
from scoring.models import ScoringRun

from .conftest import DEMO_ROSE, PASSWORD
from .crowd_data import demo_dataset, published_batch, scored

pytestmark = pytest.mark.django_db

ROLES = ["lead", "author", "worker", "outsider", "anonymous"]


@pytest.fixture
def as_role(request):
    """An API client holding the role's token (anonymous: no credentials)."""

    def make(role: str) -> APIClient:
        client = APIClient()
        if role != "anonymous":
            user = request.getfixturevalue(role)
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
        return client

    return make


@pytest.fixture
def demo(db):
    return demo_dataset()


@pytest.fixture
def draft(demo):
    return create_batch(
        dataset=demo,
        spec=BatchSpec(name="draft", assignments=2),
        systems=list(demo.systems.filter(name="abs_bart_out")),
    )


def upload(name="upload.jsonl", content: bytes | None = None):
    return SimpleUploadedFile(name, DEMO_ROSE.read_bytes() if content is None else content, "application/x-ndjson")


def error_of(response) -> str:
    """The JSON error message; fails if the body is not the API's error shape."""
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert isinstance(body.get("error"), str) and body["error"], body
    return body["error"]


# (name, method, path, request kwargs, lead's status)
def endpoints(demo, draft):
    return [
        ("datasets", "get", "/api/datasets/", {}, 200),
        ("dataset", "get", f"/api/datasets/{demo.pk}/", {}, 200),
        (
            "import",
            "post",
            "/api/datasets/import/",
            {"data": {"name": "uploaded", "format": "rose", "file": upload()}, "format": "multipart"},
            201,
        ),
        ("batches", "get", f"/api/batches/?dataset={demo.pk}", {}, 200),
        (
            "batch_create",
            "post",
            "/api/batches/",
            {"data": {"dataset": demo.pk, "assignments": 1}, "format": "json"},
            201,
        ),
        ("batch", "get", f"/api/batches/{draft.pk}/", {}, 200),
        ("cost", "get", f"/api/batches/{draft.pk}/cost/", {}, 200),
        ("publish", "post", f"/api/batches/{draft.pk}/publish/", {}, 202),  # a broker is set: queued
        ("sync", "post", f"/api/batches/{draft.pk}/sync/", {}, 200),  # in-house: nothing to sync
        ("scores", "get", f"/api/datasets/{demo.pk}/scores/", {}, 200),
        ("recompute", "post", f"/api/datasets/{demo.pk}/recompute/", {}, 202),
        ("agreement", "get", f"/api/datasets/{demo.pk}/agreement/", {}, 200),
        ("workers", "get", f"/api/datasets/{demo.pk}/workers/", {}, 200),
        ("protocols", "get", f"/api/datasets/{demo.pk}/protocols/", {}, 404),  # no rating round yet
        ("judgments_csv", "get", f"/api/datasets/{demo.pk}/exports/judgments.csv", {}, 200),
        ("scores_csv", "get", f"/api/datasets/{demo.pk}/exports/scores.csv", {}, 200),
        ("rose_jsonl", "get", f"/api/datasets/{demo.pk}/exports/rose.jsonl", {}, 200),
        ("judge_runs", "get", f"/api/datasets/{demo.pk}/judge-runs/", {}, 200),
        (
            "judge_run_start",
            "post",
            f"/api/datasets/{demo.pk}/judge-runs/",
            {"data": {"judge": "lexical"}, "format": "json"},
            202,
        ),
        ("judge_run", "get", f"/api/judge-runs/{_judge_run(demo).pk}/", {}, 200),
        ("schema", "get", "/api/schema/", {}, 200),
        ("docs", "get", "/api/docs/", {}, 200),
        ("redoc", "get", "/api/redoc/", {}, 200),
        ("redoc_bundle", "get", "/api/redoc/redoc.standalone.js", {}, 200),
    ]


ENDPOINT_NAMES = [
    "datasets",
    "dataset",
    "import",
    "batches",
    "batch_create",
    "batch",
    "cost",
    "publish",
    "sync",
    "scores",
    "recompute",
    "agreement",
    "workers",
    "protocols",
    "judgments_csv",
    "scores_csv",
    "rose_jsonl",
    "judge_runs",
    "judge_run_start",
    "judge_run",
    "schema",
    "docs",
    "redoc",
    "redoc_bundle",
]


def _judge_run(dataset):
    """A finished lexical judge run of the dataset (made once)."""
    from hits.models import JudgeRun
    from scoring.machine.runs import run_judge_run, start_judge_run

    run = JudgeRun.objects.filter(batch__dataset=dataset).first()
    return run or run_judge_run(start_judge_run(dataset, "lexical").pk)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", ENDPOINT_NAMES)
def test_every_endpoint_for_every_role(name, role, demo, draft, as_role):
    table = {row[0]: row[1:] for row in endpoints(demo, draft)}
    assert sorted(table) == sorted(ENDPOINT_NAMES)
    method, path, kwargs, lead_status = table[name]
    datasets, batches = Dataset.objects.count(), Batch.objects.count()
    response = getattr(as_role(role), method)(path, **kwargs)
    if role == "lead":
        assert response.status_code == lead_status, response.content[:500]
        return
    if role == "anonymous":
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == "Token"
        assert "credentials" in error_of(response).lower()
    else:
        assert response.status_code == 403
        assert error_of(response) == IsLead.message
    # Refused requests write nothing.
    assert (Dataset.objects.count(), Batch.objects.count()) == (datasets, batches)
    assert Batch.objects.get(pk=draft.pk).status == Batch.Status.DRAFT


def test_every_api_route_is_in_the_role_table(demo, draft):
    """Every route (but the token one, tested below) is in the table above, so no endpoint
    escapes the role tests."""
    from django.urls import URLResolver, resolve

    from config.api import urlpatterns

    def names(patterns):
        for p in patterns:
            yield from names(p.url_patterns) if isinstance(p, URLResolver) else [p.name]

    routed = {name for name in names(urlpatterns) if name} - {"api_token"}
    tested = {resolve(path.split("?")[0]).url_name for _, _, path, _, _ in endpoints(demo, draft)}
    assert tested == routed


# --- authentication -----------------------------------------------------------------------------


def test_token_endpoint_gives_leads_their_token(lead):
    client = APIClient()
    response = client.post("/api/token/", {"username": lead.username, "password": PASSWORD}, format="json")
    assert response.status_code == 200
    key = response.json()["token"]
    assert key == Token.objects.get(user=lead).key
    # The same token again, and it opens the API.
    assert client.post("/api/token/", {"username": lead.username, "password": PASSWORD}).json()["token"] == key
    assert client.get("/api/datasets/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


@pytest.mark.parametrize("role", ["author", "worker", "outsider"])
def test_token_endpoint_refuses_other_roles(role, request):
    user = request.getfixturevalue(role)
    response = APIClient().post("/api/token/", {"username": user.username, "password": PASSWORD}, format="json")
    assert response.status_code == 403
    assert error_of(response) == IsLead.message
    assert not Token.objects.filter(user=user).exists()


def test_token_endpoint_with_wrong_or_missing_credentials(lead):
    client = APIClient()
    wrong = client.post("/api/token/", {"username": lead.username, "password": "nope"}, format="json")
    # Well-formed credentials that match no account: 401, not the 400 of a malformed request.
    assert wrong.status_code == 401 and "Unable to log in" in error_of(wrong)
    assert wrong.json()["code"] == "invalid_credentials" and "fields" not in wrong.json()
    unknown = client.post("/api/token/", {"username": "nobody-here", "password": PASSWORD}, format="json")
    assert unknown.status_code == 401 and unknown.json() == wrong.json()  # nothing tells which one was wrong
    missing = client.post("/api/token/", {}, format="json")
    assert missing.status_code == 400 and missing.json()["code"] == "invalid"
    assert set(missing.json()["fields"]) == {"username", "password"}
    assert "username: This field is required." in error_of(missing)


def test_invalid_token_is_401_json(lead):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = client.get("/api/datasets/")
    assert response.status_code == 401 and error_of(response) == "Invalid token."
    client.credentials(HTTP_AUTHORIZATION="Bearer something")  # another scheme: no credentials at all
    assert client.get("/api/datasets/").status_code == 401


def test_inactive_lead_token_is_refused(lead, as_role):
    client = as_role("lead")
    lead.is_active = False
    lead.save()
    response = client.get("/api/datasets/")
    assert response.status_code == 401 and "inactive" in error_of(response).lower()


def test_session_of_a_signed_in_lead_works_and_a_worker_gets_403(client, lead, worker):
    client.force_login(lead)
    assert client.get("/api/datasets/").status_code == 200
    client.force_login(worker)
    response = client.get("/api/datasets/")
    assert response.status_code == 403 and error_of(response) == IsLead.message


def test_superuser_counts_as_lead(django_user_model):
    boss = django_user_model.objects.create_superuser("boss", password=PASSWORD)
    client = APIClient()
    client.force_authenticate(boss)
    assert client.get("/api/datasets/").status_code == 200


# --- datasets and pagination --------------------------------------------------------------------


def test_dataset_list_is_paginated_with_counts(as_role, demo):
    for i in range(3):
        demo_dataset(f"extra-{i}")
    client = as_role("lead")
    first = client.get("/api/datasets/?page_size=2").json()
    assert set(first) == {"count", "next", "previous", "results"}
    assert first["count"] == 4 and len(first["results"]) == 2 and first["previous"] is None
    assert "page=2" in first["next"] and "page_size=2" in first["next"]
    second = client.get(first["next"]).json()
    assert second["next"] is None and len(second["results"]) == 2
    assert [d["name"] for d in first["results"] + second["results"]] == ["demo", "extra-0", "extra-1", "extra-2"]
    row = first["results"][0]
    assert row["documents"] == 10 and row["systems"] == 4 and row["summaries"] == 40
    assert row["acus"] == ACU.objects.filter(reference__document__dataset=demo).count()
    assert row["rounds"] == demo.batches.count() == 1  # the imported label round
    # Defaults and limits: 50 a page, a maximum page size, a page past the end is a JSON 404.
    assert len(client.get("/api/datasets/").json()["results"]) == 4
    assert client.get("/api/datasets/?page_size=100000").status_code == 200
    past = client.get("/api/datasets/?page=9")
    assert past.status_code == 404 and "Invalid page" in error_of(past)
    # A page that is not a whole number from 1 is outside the schema: a 400 naming it (issue 45).
    not_a_page = client.get("/api/datasets/?page=abc")
    assert not_a_page.status_code == 400 and "page" in not_a_page.json()["fields"]


def test_page_size_is_capped(as_role, demo, settings):
    settings.API_MAX_PAGE_SIZE = 1
    demo_dataset("second")
    body = as_role("lead").get("/api/datasets/?page_size=50").json()
    assert len(body["results"]) == 1 and body["count"] == 2


def test_dataset_detail_lists_systems_and_rounds(as_role, demo, draft):
    body = as_role("lead").get(f"/api/datasets/{demo.pk}/").json()
    assert [s["name"] for s in body["system_list"]] == sorted(demo.systems.values_list("name", flat=True))
    kinds = {r["id"]: r["kind"] for r in body["round_list"]}
    assert kinds[draft.pk] == "crowd" and sorted(kinds.values()) == ["crowd", "imported"]
    missing = as_role("lead").get("/api/datasets/999999/")
    assert missing.status_code == 404 and error_of(missing) == "No dataset with id 999999."


def test_import_upload_creates_the_dataset(as_role, lead):
    response = as_role("lead").post(
        "/api/datasets/import/", {"name": "uploaded", "format": "rose", "file": upload()}, format="multipart"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    dataset = Dataset.objects.get(name="uploaded")
    assert body["dataset"]["id"] == dataset.pk and body["dataset"]["documents"] == 10
    assert body["round"] == dataset.batches.get(kind=Batch.Kind.IMPORTED).pk and body["judgments"] > 0
    assert body["message"].startswith("Imported 'uploaded': 10 documents")
    assert dataset.created_by == lead


def test_bad_import_file_is_422_naming_file_and_line_and_writes_nothing(as_role, demo):
    lines = DEMO_ROSE.read_text(encoding="utf-8").splitlines()
    broken = lines[0] + "\n" + lines[1][:-5] + "\n"  # line 2 is cut short: invalid JSON
    before = (Dataset.objects.count(), Document.objects.count(), Summary.objects.count(), Judgment.objects.count())
    response = as_role("lead").post(
        "/api/datasets/import/", {"name": "broken", "file": upload("broken.jsonl", broken.encode())}, format="multipart"
    )
    assert response.status_code == 422
    message = error_of(response)
    assert message.startswith("Nothing was imported.") and "broken.jsonl" in message and "line 2" in message
    body = response.json()
    assert body["code"] == "import_failed" and body["file"] == "broken.jsonl" and body["line"] == 2
    assert (
        Dataset.objects.count(),
        Document.objects.count(),
        Summary.objects.count(),
        Judgment.objects.count(),
    ) == before


def test_import_refusals_are_json(as_role, demo, settings):
    client = as_role("lead")
    taken = client.post("/api/datasets/import/", {"name": "demo", "file": upload()}, format="multipart")
    assert taken.status_code == 409 and "exists" in error_of(taken) and "replace=true" in error_of(taken)
    assert taken.json()["code"] == "conflict"
    missing = client.post("/api/datasets/import/", {"name": "x", "format": "csv"}, format="multipart")
    assert missing.status_code == 400 and set(missing.json()["fields"]) == {"format", "file"}
    not_archive = client.post(
        "/api/datasets/import/",
        {"name": "x", "format": "pyramid", "file": upload("p.zip", b"not a zip")},
        format="multipart",
    )
    assert not_archive.status_code == 422 and "p.zip" in error_of(not_archive)
    assert not_archive.json()["code"] == "import_failed"
    empty = client.post("/api/datasets/import/", {"name": "x", "file": upload("e.jsonl", b"")}, format="multipart")
    assert empty.status_code == 422 and empty.json()["code"] == "import_failed" and "e.jsonl" in error_of(empty)
    nameless = client.post("/api/datasets/import/", {"name": " ", "file": upload()}, format="multipart")
    assert nameless.status_code == 422
    assert error_of(nameless) == "Nothing was imported. The dataset needs a name (1 to 100 characters)."
    settings.IMPORT_UPLOAD_MAX_BYTES = 100
    too_big = client.post("/api/datasets/import/", {"name": "x", "file": upload()}, format="multipart")
    # Refused by its Content-Length before the body is read (config/limits.py).
    assert too_big.status_code == 413 and "the limit here is 100" in error_of(too_big)
    settings.IMPORT_UPLOAD_MAX_BYTES = 1024 * 1024
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    long_form = client.post(
        "/api/datasets/import/", {"name": "x" * 2000, "file": upload("small.jsonl", b"{}")}, format="multipart"
    )
    assert long_form.status_code == 413 and error_of(long_form) == "The request body is too large."
    as_json = client.post("/api/datasets/import/", {"name": "x"}, format="json")
    assert as_json.status_code == 415 and "Unsupported media type" in error_of(as_json)
    assert Dataset.objects.count() == 1


# --- batches ------------------------------------------------------------------------------------


def test_create_batch_then_cost_and_status(as_role, demo, lead):
    client = as_role("lead")
    response = client.post(
        "/api/batches/",
        {
            "dataset": demo.pk,
            "name": "api batch",
            "assignments": 3,
            "systems": ["abs_bart_out"],
            "budget": "50.00",
            "buckets": [
                {"min_acus": 1, "max_acus": 10, "reward": "0.20"},
                {"min_acus": 11, "max_acus": None, "reward": "0.40"},
            ],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    batch = Batch.objects.get(pk=body["id"])
    assert batch.created_by == lead and batch.name == "api batch" and batch.status == "draft"
    assert body["systems"] == ["abs_bart_out"] and body["hits"] == batch.hits.count() == 10
    assert body["progress"]["places"] == 30 and body["publishing"] == {"done": 0, "total": 10, "percent": 0}
    assert [b["reward"] for b in body["buckets"]] == ["0.20", "0.40"]

    cost = client.get(f"/api/batches/{batch.pk}/cost/").json()
    assert cost["hits"] == 10 and cost["assignments"] == 30 and cost["provider"] == "In-house workers"
    assert [b["label"] for b in cost["buckets"]] == ["1–10", "11+"]
    expected = sum(h.reward for h in batch.hits.all()) * 3
    assert cost["total"] == f"{expected:.2f}" and cost["fees"] == "0.00"

    listing = client.get(f"/api/batches/?dataset={demo.pk}").json()
    assert [b["kind"] for b in listing["results"]] == ["imported", "crowd"]
    assert client.get("/api/batches/?dataset=999999").json()["count"] == 0
    bad_filter = client.get("/api/batches/?dataset=abc")
    assert bad_filter.status_code == 400 and "dataset" in error_of(bad_filter)


def test_mturk_batch_keeps_its_options(as_role, demo):
    body = (
        as_role("lead")
        .post(
            "/api/batches/",
            {
                "dataset": demo.pk,
                "provider": "mturk",
                "assignments": 1,
                "mturk": {"locales": ["us", "de"], "sandbox": True},
            },
            format="json",
        )
        .json()
    )
    config = Batch.objects.get(pk=body["id"]).provider_config
    assert config["locales"] == ["US", "DE"] and config["min_approval_rate"] == 98 and config["sandbox"] is True


def test_prolific_batch_keeps_its_options(as_role, demo):
    body = (
        as_role("lead")
        .post(
            "/api/batches/",
            {
                "dataset": demo.pk,
                "provider": "prolific",
                "assignments": 1,
                "prolific": {"hits_per_session": 3, "currency": "GBP", "device_compatibility": ["desktop", "mobile"]},
            },
            format="json",
        )
        .json()
    )
    config = Batch.objects.get(pk=body["id"]).provider_config
    assert config["hits_per_session"] == 3 and config["currency"] == "GBP"
    assert config["device_compatibility"] == ["desktop", "mobile"] and config["languages"] == ["19"]


@pytest.mark.parametrize(
    "payload, field, fragment",
    [
        ({"assignments": 12}, "assignments", "less than or equal to 9"),
        ({"assignments": 0}, "assignments", "greater than or equal to 1"),
        ({"provider": "nobody"}, "provider", "not a valid choice"),
        ({"gold_share": 0.9}, "gold_share", "less than or equal to 0.5"),
        ({"lifetime_hours": "nan"}, "lifetime_hours", "valid number"),
        ({"budget": -1}, "budget", "The budget is between $0.00 and $99,999,999.99."),
        ({"provider": "prolific", "prolific": {"hits_per_session": 0}}, "prolific", "greater than or equal to 1"),
        ({"provider": "mturk", "mturk": {"locales": ["USA"]}}, "mturk", "two-letter"),
    ],
)
def test_batch_options_outside_the_schema_are_400_json(payload, field, fragment, as_role, demo):
    body = {"dataset": demo.pk, **payload}
    response = as_role("lead").post("/api/batches/", body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert fragment in error_of(response)
    assert field in response.json()["fields"]
    assert not Batch.objects.filter(kind=Batch.Kind.CROWD).exists()


@pytest.mark.parametrize(
    "payload, field, fragment",
    [
        ({"systems": ["no_such_system"]}, "systems", "no system 'no_such_system'"),
        ({"qualification_test": 12345}, "qualification_test", "no qualification test 12345"),
        ({"mturk": {"sandbox": True}}, "mturk", "need provider mturk"),
        ({"prolific": {"currency": "GBP"}}, "prolific", "need provider prolific"),
        ({"dataset": 999999}, "dataset", "No dataset with id 999999"),
    ],
)
def test_schema_valid_batch_options_the_data_lacks_are_422_json(payload, field, fragment, as_role, demo):
    """Names and ids the dataset does not hold, options for another provider: valid by the
    schema, so not a 400, but nothing the server can make a batch of."""
    body = {"dataset": demo.pk, **payload}
    response = as_role("lead").post("/api/batches/", body, format="json")
    assert response.status_code == 422
    assert response.json()["code"] == "unprocessable"
    assert fragment in error_of(response) and error_of(response).startswith("Not processed.")
    assert field in response.json()["fields"]
    assert not Batch.objects.filter(kind=Batch.Kind.CROWD).exists()


def test_batch_service_refusals_are_422_json(as_role, demo):
    client = as_role("lead")
    gap = client.post(
        "/api/batches/",
        {
            "dataset": demo.pk,
            "buckets": [{"min_acus": 1, "max_acus": 5, "reward": "0.1"}, {"min_acus": 9, "reward": "0.2"}],
        },
        format="json",
    )
    assert gap.status_code == 422 and error_of(gap) == "Pay buckets: buckets 1–5 and 9+ overlap or leave a gap."
    assert gap.json()["code"] == "refused"
    bounds = client.post(
        "/api/batches/",
        {"dataset": demo.pk, "allocation": "adaptive", "allocation_min": 5, "allocation_max": 3},
        format="json",
    )
    assert bounds.status_code == 422 and bounds.json()["code"] == "refused" and "Allocation" in error_of(bounds)
    from annotation.models import Reference

    Reference.objects.filter(document__dataset=demo).update(status=Reference.Status.IN_REVIEW)
    nothing = client.post("/api/batches/", {"dataset": demo.pk}, format="json")
    assert nothing.status_code == 422 and "No summary of an approved reference" in error_of(nothing)
    garbled = client.post("/api/batches/", "{not json", content_type="application/json")
    assert garbled.status_code == 400 and "JSON parse error" in error_of(garbled)
    assert not Batch.objects.filter(kind=Batch.Kind.CROWD).exists()


def test_publish_in_house_batch_in_process(as_role, draft, eager_celery):
    client = as_role("lead")
    response = client.post(f"/api/batches/{draft.pk}/publish/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["outcome"] == "published" and body["batch"]["status"] == "published"
    assert body["batch"]["publishing"] == {"done": 1 * draft.hits.count(), "total": draft.hits.count(), "percent": 100}
    draft.refresh_from_db()
    assert draft.status == Batch.Status.PUBLISHED and draft.published_at is not None
    again = client.post(f"/api/batches/{draft.pk}/publish/")
    assert again.status_code == 409 and error_of(again) == "The batch is already published."
    assert again.json()["code"] == "conflict" and again.json()["batch"] == draft.pk
    status = client.get(f"/api/batches/{draft.pk}/").json()
    assert status["status"] == "published" and status["progress"]["left"] == status["progress"]["places"]


def test_publish_failure_is_422_and_the_batch_stays_resumable(as_role, draft, eager_celery, monkeypatch):
    from hits.provider_interface import ProviderError
    from hits.providers.inhouse import InHouseProvider

    def refuse(self, batch):
        raise ProviderError("the provider is down")

    monkeypatch.setattr(InHouseProvider, "publish", refuse)
    response = as_role("lead").post(f"/api/batches/{draft.pk}/publish/")
    assert response.status_code == 422 and response.json()["code"] == "refused"
    assert "the provider is down" in error_of(response) and "publish again to resume" in error_of(response)
    draft.refresh_from_db()
    assert draft.status == Batch.Status.PUBLISHING and "the provider is down" in draft.last_error
    assert as_role("lead").get(f"/api/batches/{draft.pk}/").json()["last_error"] == draft.last_error


def test_publish_with_a_broker_is_queued_202(as_role, draft, django_capture_on_commit_callbacks):
    lead = as_role("lead")  # made (and given the role) before the request
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = lead.post(f"/api/batches/{draft.pk}/publish/")
    assert response.status_code == 202 and response.json()["outcome"] == "queued"
    assert len(callbacks) == 1  # the publishing task, sent once the transaction commits


def test_imported_round_cannot_be_published(as_role, demo):
    imported = demo.batches.get(kind=Batch.Kind.IMPORTED)
    response = as_role("lead").post(f"/api/batches/{imported.pk}/publish/")
    assert response.status_code == 409 and response.json()["code"] == "conflict"
    assert error_of(response) == "Only a crowd batch is published; this round holds Imported labels."
    assert as_role("lead").post("/api/batches/999999/publish/").status_code == 404


# --- results and exports ------------------------------------------------------------------------


@pytest.fixture
def crowd(demo):
    batch = published_batch(
        demo, assignments=3, systems=list(demo.systems.filter(name__in=["abs_bart_out", "ext_matchsumm_out"]))
    )
    simulate_crowd(batch, workers=3, accuracy=0.9, seed=1)
    return batch


def test_scores_state_what_their_intervals_and_tests_are(as_role, demo, crowd, eager_celery, client, lead):
    """A lab quoting the API or the systems page must be able to say what an interval and a p-value
    are: 95% percentile bootstrap over documents with its resamples, the paired test's sides and
    that the pairs are not corrected for multiple comparisons (4 systems: 6 pairs)."""
    scored(demo, crowd)
    methods = as_role("lead").get(f"/api/datasets/{demo.pk}/scores/").json()["methods"]
    resamples = (
        ScoringRun.objects.filter(dataset=demo, batch=None, kind="scores").latest("pk").parameters["n_resamples"]
    )
    assert methods["ci"] == {
        "level": 0.95,
        "method": "percentile bootstrap",
        "resampled": "documents",
        "resamples": resamples,
        "seed": 0,
    }
    pairwise = methods["pairwise"]
    assert pairwise["test"] == "paired bootstrap" and pairwise["resamples"] == resamples
    assert pairwise["score"] == "ACU score (un-normalized)"
    assert pairwise["pairs"] == 6 and pairwise["multiple_comparisons"] == "none"
    assert "one-sided" in pairwise["sides"] and pairwise["expected_false_pairs_at_0_05"] == 0.6
    holm = pairwise["holm"]
    assert holm["key"] == "p_holm" and holm["method"] == "Holm (1979) step-down" and holm["pairs"] == 6
    assert holm["controls"] == "family-wise error rate" and holm["zero_reads_below"] == 12 / resamples
    client.force_login(lead)
    url = reverse("dashboard_systems", args=[demo.pk])
    page = client.get(url).content.decode()
    assert f"95% CI: percentile bootstrap over documents ({resamples} resamples, seed 0)" in page
    assert (
        f"{resamples:,} resamples (enough for the 6 pairs to resolve after Holm's correction; the intervals take "
        in page
    )
    assert "), on the ACU score (un-normalized). The cell in row A, column B tests whether A" in page
    # By default the matrix reads the Holm-adjusted p, the raw p in each cell's tooltip.
    assert "Corrected for multiple comparisons: Holm's step-down method over the 6 system pairs" in page
    assert "about 0.6 if no pair" in page and "No correction for multiple comparisons" not in page
    assert page.count(", Holm-adjusted p: ") == 12 and 'href="/datasets/' in page and "?p=raw#significance" in page
    raw = client.get(url, {"p": "raw"}).content.decode()
    assert "No correction for multiple comparisons: of the 6 pairs" in raw and "about 0.6 if no pair" in raw
    assert "The Holm-adjusted p (over the 6 pairs) is in each cell's tooltip" in raw


def test_scores_carry_holm_adjusted_p_values_beside_the_raw_ones(as_role, demo, crowd, eager_celery):
    """The API keeps `p` and `n` as they were and adds `p_holm` (Holm over the 6 pairs of
    the two-sided p) and `holm_pairs`."""
    from scoring.stats.multiple_testing import pairwise_holm

    scored(demo, crowd)
    pairwise = as_role("lead").get(f"/api/datasets/{demo.pk}/scores/").json()["pairwise"]
    assert {"systems", "p", "n", "p_holm", "holm_pairs"} <= pairwise.keys() and pairwise["holm_pairs"] == 6
    p = [[float("nan") if v is None else v for v in row] for row in pairwise["p"]]
    expected, _ = pairwise_holm(p)
    for i, row in enumerate(pairwise["p_holm"]):
        for j, v in enumerate(row):
            assert (v is None) if i == j else v == pytest.approx(expected[i][j])
            if i != j:
                assert pairwise["p"][i][j] <= v <= 1 or v == 1


def test_scores_agreement_and_workers(as_role, demo, crowd, eager_celery):
    scored(demo, crowd)
    client = as_role("lead")
    scores = client.get(f"/api/datasets/{demo.pk}/scores/").json()
    assert scores["round"] is None and scores["stale"] is False and scores["run"]
    assert len(scores["systems"]) == 4
    system = scores["systems"]["abs_bart_out"]
    assert 0 <= system["acu"] <= 1 and len(system["acu_ci"]) == 2 and system["length"] > 0
    assert scores["counts"]["judgments"] > 0 and scores["pairwise"]["systems"]

    one = client.get(f"/api/datasets/{demo.pk}/scores/?round={crowd.pk}").json()
    assert one["round"] == crowd.pk and set(one["systems"]) == {"abs_bart_out", "ext_matchsumm_out"}

    agreement = client.get(f"/api/datasets/{demo.pk}/agreement/?round={crowd.pk}").json()
    assert agreement["alpha"]["acu_level"] is not None and agreement["rose_alpha"]["acu_level"] == 0.7528
    assert agreement["trend"] and agreement["trend"][-1]["run"] == agreement["run"]

    workers = client.get(f"/api/datasets/{demo.pk}/workers/?round={crowd.pk}&page_size=2").json()
    assert workers["count"] == 3 and len(workers["results"]) == 2 and workers["next"]
    row = workers["results"][0]
    assert row["provider"] == "inhouse" and row["assignments"] > 0 and row["labels"] > 0 and row["flags"] == []


def test_recompute_is_asked_once_and_answers_the_run_state(as_role, demo, crowd, django_capture_on_commit_callbacks):
    """With a broker: the first ask queues the round's recompute (after the commit), the next
    joins it; both answer 202 with the stale run, and nothing is computed in the request."""
    from hits import versions
    from scoring.models import RecomputeRequest, ScoringRun

    scored(demo, crowd)
    versions.bump(demo.pk, crowd.pk)  # judgments changed since the stored run
    runs = ScoringRun.objects.count()
    client = as_role("lead")
    path = f"/api/datasets/{demo.pk}/recompute/?round={crowd.pk}"
    with django_capture_on_commit_callbacks() as queued:
        first, second = client.post(path), client.post(path)
    assert first.status_code == second.status_code == 202
    body = first.json()
    assert body["round"] == crowd.pk and body["stale"] is True and body["run"] and body["queued"] is True
    assert body["dispatched"] is True and second.json()["dispatched"] is False and second.json()["queued"] is True
    assert len(queued) == 1  # one task sent for the two asks
    assert RecomputeRequest.objects.filter(dataset=demo, round_id=crowd.pk, queued=True).count() == 1
    assert ScoringRun.objects.count() == runs
    assert client.post(f"/api/datasets/{demo.pk}/recompute/?round=0").status_code == 400
    assert client.post(f"/api/datasets/{demo.pk + 1000}/recompute/").status_code == 404


def test_recompute_in_process_leaves_the_scores_current(as_role, demo, crowd, eager_celery):
    """Without a broker (and no background threads) the recompute runs in the request: the
    answer and the scores after it are current."""
    from hits import versions

    scored(demo)
    versions.bump(demo.pk, crowd.pk)
    client = as_role("lead")
    before = client.get(f"/api/datasets/{demo.pk}/scores/").json()
    assert before["stale"] is True
    body = client.post(f"/api/datasets/{demo.pk}/recompute/").json()
    assert body["dispatched"] is True and body["stale"] is False and body["queued"] is False
    assert body["run"] != before["run"] and body["round"] is None
    after = client.get(f"/api/datasets/{demo.pk}/scores/").json()
    assert after["stale"] is False and after["run"] == body["run"]


def test_exports_are_downloads(as_role, demo, crowd, eager_celery):
    scored(demo, crowd)
    client = as_role("lead")
    judgments = client.get(f"/api/datasets/{demo.pk}/exports/judgments.csv?round={crowd.pk}")
    assert judgments.status_code == 200 and judgments["Content-Type"].startswith("text/csv")
    assert judgments["Content-Disposition"] == f'attachment; filename="demo-round{crowd.pk}-judgments.csv"'
    rows = list(csv.reader(io.StringIO(b"".join(judgments.streaming_content).decode())))
    assert rows[0] == ["worker", "example_id", "system", "acu_index", "label"]
    assert len(rows) - 1 == Judgment.objects.filter(assignment__hit__batch=crowd).count()

    scores = client.get(f"/api/datasets/{demo.pk}/exports/scores.csv", HTTP_ACCEPT="text/csv")
    assert scores.status_code == 200
    rows = list(csv.reader(io.StringIO(b"".join(scores.streaming_content).decode())))
    assert rows[0] == ["example_id", "system", "acu", "normalized_acu", "summary_words"] and len(rows) == 41

    rose = client.get(f"/api/datasets/{demo.pk}/exports/rose.jsonl")
    assert rose.status_code == 200 and rose["Content-Type"].startswith("application/x-ndjson")
    records = [json.loads(line) for line in b"".join(rose.streaming_content).decode().splitlines()]
    assert len(records) == 10 and records[0]["annotations"]


def test_unknown_round_is_404_json(as_role, demo, crowd):
    other = demo_dataset("other")
    client = as_role("lead")
    for path in (
        "scores/",
        "agreement/",
        "workers/",
        "exports/judgments.csv",
        "exports/scores.csv",
        "exports/rose.jsonl",
    ):
        accept = {"exports/judgments.csv": "text/csv", "exports/scores.csv": "text/csv"}.get(path, "*/*")
        response = client.get(f"/api/datasets/{other.pk}/{path}?round={crowd.pk}", HTTP_ACCEPT=accept)
        assert response.status_code == 404, path
        assert error_of(response) == f"Dataset 'other' has no round {crowd.pk} (a batch or an imported label set)."
        bad = client.get(f"/api/datasets/{other.pk}/{path}?round=first")
        assert bad.status_code == 400 and "round: A valid integer is required." in error_of(bad)
    missing = client.get("/api/datasets/999999/scores/")
    assert missing.status_code == 404 and error_of(missing)


def test_other_errors_are_json(as_role, demo):
    client = as_role("lead")
    nowhere = client.get("/api/nothing/here/")
    assert nowhere.status_code == 404 and "No API endpoint at /api/nothing/here/" in error_of(nowhere)
    slash = client.get("/api/datasets")
    assert slash.status_code == 404 and "Did you mean /api/datasets/" in error_of(slash)
    not_allowed = client.delete(f"/api/datasets/{demo.pk}/")
    assert not_allowed.status_code == 405 and error_of(not_allowed) == 'Method "DELETE" not allowed.'
    not_acceptable = client.get("/api/datasets/", HTTP_ACCEPT="text/html")
    assert not_acceptable.status_code == 406 and error_of(not_acceptable)
    csv_as_xml = client.get(f"/api/datasets/{demo.pk}/exports/scores.csv", HTTP_ACCEPT="application/xml")
    assert csv_as_xml.status_code == 406 and error_of(csv_as_xml)


def test_unexpected_errors_are_json_500(as_role, demo, monkeypatch):
    from scoring.results import api as results

    def crash(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(results, "scores_run", crash)
    response = as_role("lead").get(f"/api/datasets/{demo.pk}/scores/")
    assert response.status_code == 500
    assert response.json() == {"error": "Internal server error; the error was logged.", "code": "server_error"}


# --- schema and docs ----------------------------------------------------------------------------


def test_schema_documents_every_endpoint(as_role):
    client = as_role("lead")
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "ACU evaluation API"
    assert set(schema["paths"]) == {
        "/api/batches/{batch_id}/sync/",
        "/api/token/",
        "/api/datasets/",
        "/api/datasets/import/",
        "/api/datasets/{dataset_id}/",
        "/api/datasets/{dataset_id}/scores/",
        "/api/datasets/{dataset_id}/recompute/",
        "/api/datasets/{dataset_id}/agreement/",
        "/api/datasets/{dataset_id}/workers/",
        "/api/datasets/{dataset_id}/protocols/",
        "/api/datasets/{dataset_id}/exports/judgments.csv",
        "/api/datasets/{dataset_id}/exports/scores.csv",
        "/api/datasets/{dataset_id}/exports/rose.jsonl",
        "/api/batches/",
        "/api/batches/{batch_id}/",
        "/api/batches/{batch_id}/cost/",
        "/api/batches/{batch_id}/publish/",
        "/api/datasets/{dataset_id}/judge-runs/",
        "/api/judge-runs/{run_id}/",
    }
    assert "tokenAuth" in schema["components"]["securitySchemes"]
    upload_body = schema["paths"]["/api/datasets/import/"]["post"]["requestBody"]["content"]
    assert list(upload_body) == ["multipart/form-data"]
    csv_ok = schema["paths"]["/api/datasets/{dataset_id}/exports/judgments.csv"]["get"]["responses"]["200"]["content"]
    assert list(csv_ok) == ["text/csv"]
    params = {p["name"] for p in schema["paths"]["/api/datasets/{dataset_id}/workers/"]["get"]["parameters"]}
    assert {"round", "page", "page_size"} <= params
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "403" in operation["responses"], (method, path)
            if path.startswith("/api/") and path != "/api/token/":
                assert "401" in operation["responses"], (method, path)


def test_docs_pages_use_the_sidecar_assets(as_role):
    client = as_role("lead")
    docs = client.get("/api/docs/")
    assert docs.status_code == 200 and "drf_spectacular_sidecar/swagger-ui-dist" in docs.content.decode()
    redoc = client.get("/api/redoc/")
    assert redoc.status_code == 200 and "/api/redoc/redoc.standalone.js" in redoc.content.decode()
    assert "fonts.googleapis.com" not in redoc.content.decode()
    bundle = client.get("/api/redoc/redoc.standalone.js")
    assert (
        bundle.status_code == 200
        and b"cdn.redoc.ly" not in bundle.content
        and b"/static/img/redoc-logo-mini.svg" in bundle.content
    )


@pytest.mark.parametrize("body", ["[1]", '"demo-lead"', "null", "42"])
def test_token_endpoint_a_body_that_is_no_object_is_a_400(lead, body):
    # Not credentials at all: the 400 of a malformed request (it was the 401 of wrong credentials).
    response = APIClient().post("/api/token/", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "invalid", response.content


def test_judge_runs_are_listed_page_by_page_as_every_list(as_role, demo):
    # docs/api.md: lists are {"count", "next", "previous", "results"}; the judge runs were one
    # {"results"} of the newest 100, the older ones out of reach.
    from scoring.machine.runs import start_judge_run

    runs = [start_judge_run(demo, "lexical") for _ in range(3)]
    client = as_role("lead")
    first = client.get(f"/api/datasets/{demo.pk}/judge-runs/?page_size=2").json()
    assert first["count"] == 3 and first["previous"] is None and first["next"]
    second = client.get(first["next"]).json()
    assert second["next"] is None
    assert [r["id"] for r in first["results"] + second["results"]] == [r.pk for r in reversed(runs)]
    bad = client.get(f"/api/datasets/{demo.pk}/judge-runs/?page=0")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid"


def test_every_list_operation_is_paginated_in_the_schema(as_role):
    schema = as_role("lead").get("/api/schema/?format=json").json()
    lists = set()
    for path, operations in schema["paths"].items():
        listing = operations.get("get", {}).get("responses", {}).get("200", {}).get("content", {})
        body = listing.get("application/json", {}).get("schema", {})
        ref = body.get("$ref", "")
        paginated = ref.rsplit("/", 1)[-1].startswith("Paginated")
        component = schema["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {}) if ref else body
        if "results" in component.get("properties", {}) or body.get("type") == "array":
            names = {p["name"] for p in operations["get"].get("parameters", [])}
            assert paginated and {"page", "page_size"} <= names, path
            lists.add(path)
    assert lists == {
        "/api/datasets/",
        "/api/batches/",
        "/api/datasets/{dataset_id}/workers/",
        "/api/datasets/{dataset_id}/judge-runs/",
    }


def test_protocols_of_a_dataset_without_ratings_says_what_to_do(as_role, demo):
    # It said "has no such rating round" when none was asked for.
    client = as_role("lead")
    none_yet = client.get(f"/api/datasets/{demo.pk}/protocols/")
    assert none_yet.status_code == 404 and "no rating round yet: import ratings" in error_of(none_yet)
    named = client.get(f"/api/datasets/{demo.pk}/protocols/?rating_round=7")
    assert named.status_code == 404 and error_of(named) == f"Dataset {demo.name!r} has no rating round 7."


def test_the_nli_judge_without_a_model_names_the_apis_field(as_role, demo, monkeypatch):
    # The refusal named only the command's --model-dir to an API client.
    from config import extras

    monkeypatch.setattr(extras, "not_installed", lambda name: "")
    response = as_role("lead").post(f"/api/datasets/{demo.pk}/judge-runs/", {"judge": "nli"}, format="json")
    assert response.status_code == 422 and "the API's model_dir" in error_of(response)


def test_an_unknown_id_is_named_in_words_not_by_its_model_class(as_role, demo):
    client = as_role("lead")
    for method, url, message in [
        ("get", "/api/batches/999999/", "No batch with id 999999."),
        ("post", "/api/batches/999999/publish/", "No batch with id 999999."),
        ("get", "/api/judge-runs/999999/", "No judge run with id 999999."),
        ("get", "/api/datasets/999999/scores/", "No dataset with id 999999."),
    ]:
        response = getattr(client, method)(url)
        assert response.status_code == 404 and response.json() == {"error": message, "code": "not_found"}, url
