"""Issue 45 item 10: every write serializer under /api/ refuses unknown fields with a 400
naming them (nested objects too), writes nothing, and the schema's request bodies say so."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Dataset
from hits.models import Batch, JudgeRun

from .conftest import DEMO_ROSE, PASSWORD
from .crowd_data import demo_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(lead):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    return api


@pytest.fixture
def demo(db):
    return demo_dataset()


def refused_naming(response, *names: str) -> dict:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid"
    for name in names:
        assert name in body["error"], body
    return body


@pytest.mark.parametrize(
    "extra, path",
    [
        ({"pay_buckets": [{"min_acus": 1, "reward": "2.00"}]}, ["pay_buckets"]),
        ({"buckets": [{"min_acus": 1, "reward": "2.00", "max": 3}]}, ["buckets", "0", "max"]),
        ({"provider": "mturk", "mturk": {"sandbox": True, "sandboxed": True}}, ["mturk", "sandboxed"]),
        ({"provider": "prolific", "prolific": {"hits_per_sesion": 3}}, ["prolific", "hits_per_sesion"]),
        ({"id": 5, "status": "published"}, ["id"]),
    ],
)
def test_batch_create_refuses_unknown_fields_and_creates_nothing(client, demo, extra, path):
    response = client.post("/api/batches/", {"dataset": demo.pk, "assignments": 1, **extra}, format="json")
    body = refused_naming(response, path[-1])
    node = body["fields"]
    for key in path:
        node = node[key]  # a list's items by their index, as strings (JSON object keys)
    assert node[0].startswith("Unknown field; this object takes ")
    if path == ["pay_buckets"]:  # the message names the field meant
        assert "buckets" in node[0].removeprefix("Unknown field")
    assert not Batch.objects.filter(kind=Batch.Kind.CROWD).exists()


def test_a_known_body_still_creates_the_batch(client, demo):
    response = client.post(
        "/api/batches/",
        {"dataset": demo.pk, "assignments": 1, "buckets": [{"min_acus": 1, "reward": "2.00"}]},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert [str(b.reward) for b in Batch.objects.get(pk=response.json()["id"]).buckets.all()] == ["2.00"]


def test_judge_run_refuses_unknown_fields(client, demo):
    response = client.post(f"/api/datasets/{demo.pk}/judge-runs/", {"judge": "lexical", "rounds": 3}, format="json")
    refused_naming(response, "rounds")
    assert not JudgeRun.objects.exists()


def test_import_refuses_unknown_form_fields(client):
    upload = SimpleUploadedFile("d.jsonl", DEMO_ROSE.read_bytes(), "application/x-ndjson")
    response = client.post("/api/datasets/import/", {"name": "x", "file": upload, "overwrite": "true"})
    refused_naming(response, "overwrite")
    assert not Dataset.objects.exists()


def test_token_refuses_unknown_fields(lead):
    response = APIClient().post(
        "/api/token/", {"username": lead.username, "password": PASSWORD, "remember": True}, format="json"
    )
    refused_naming(response, "remember")


def test_schema_request_bodies_admit_no_other_property(client):
    schemas = client.get("/api/schema/?format=json").json()["components"]["schemas"]
    requests = {name: s for name, s in schemas.items() if name.endswith("Request")}
    assert {"BatchCreateInputRequest", "BucketRequest", "StartJudgeRunRequest", "CredentialsRequest"} <= set(requests)
    assert all(s["additionalProperties"] is False for s in requests.values()), requests


@pytest.mark.parametrize(
    "url, typo, known",
    [
        ("/api/datasets/{id}/scores/?rond=2", "rond", "round"),  # the dataset-wide figures came back
        ("/api/datasets/{id}/workers/?round=1&pagesize=5", "pagesize", "page_size"),
        ("/api/datasets/{id}/?round=1", "round", "none"),
    ],
)
def test_a_query_parameter_the_operation_does_not_take_is_refused_naming_it(client, demo, url, typo, known):
    """A misspelt query parameter was ignored: the answer held other figures than asked for."""
    body = refused_naming(client.get(url.format(id=demo.pk)), typo)
    assert body["fields"][typo][0].startswith("Unknown query parameter") and known in body["fields"][typo][0]
    assert client.get(f"/api/datasets/{demo.pk}/workers/?page_size=5").status_code == 200  # what it takes, it takes


def test_an_anonymous_caller_with_an_unknown_query_parameter_gets_401_not_the_parameter_list(demo):
    assert APIClient().get(f"/api/datasets/{demo.pk}/scores/?rond=2").status_code == 401
