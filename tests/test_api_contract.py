"""Issue 45 item 11: the API's schema states what its validators take, so a schema-valid request is
not refused for a parameter and a schema-violating one is not answered 200 (the generated census is
tests/test_api_schemathesis.py; these are its findings, one each)."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from .crowd_data import demo_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(lead):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    return api


@pytest.fixture
def schema(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def _parameter(schema, path, name):
    (found,) = [p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name]
    return found["schema"]


@pytest.mark.parametrize(
    "path, name",
    [
        ("/api/batches/", "dataset"),
        ("/api/batches/", "page"),
        ("/api/datasets/", "page_size"),
        ("/api/datasets/{dataset_id}/scores/", "round"),
        ("/api/datasets/{dataset_id}/workers/", "round"),
        ("/api/datasets/{dataset_id}/protocols/", "rating_round"),
    ],
)
def test_id_and_page_parameters_say_they_start_at_one(schema, path, name):
    stated = _parameter(schema, path, name)
    assert stated["type"] == "integer" and stated["minimum"] == 1
    if name in ("dataset", "round", "rating_round"):
        assert stated["maximum"] == 2**63 - 1


@pytest.mark.parametrize("value", ["null", "false", "x", "0", "-3", "1.5"])
def test_a_page_size_or_page_outside_the_schema_is_a_400_naming_it(client, value):
    for name in ("page_size", "page"):
        response = client.get(f"/api/datasets/?{name}={value}")
        assert response.status_code == 400, (name, value, response.content)
        assert name in response.json()["fields"]


def test_a_page_size_over_the_maximum_is_cut_to_it(client, settings):
    settings.API_MAX_PAGE_SIZE = 2
    demo_dataset()
    assert client.get("/api/datasets/?page_size=1000000").status_code == 200


def test_an_export_format_outside_its_enum_is_refused(client):
    """`?format=` names the file's own format only: json (the file is never JSON; it was served the
    CSV) and an unknown one are refused like an empty one, by a 400 naming the download's format
    alone (it said "Not one of json, csv.")."""
    dataset = demo_dataset()
    for name, own, other in (("judgments.csv", "csv", "jsonl"), ("rose.jsonl", "jsonl", "csv")):
        url = f"/api/datasets/{dataset.pk}/exports/{name}"
        assert client.get(url + f"?format={own}").status_code == 200
        for asked in ("", "xml", "json", other):
            response = client.get(url + f"?format={asked}")
            assert response.status_code == 400 and response["Content-Type"] == "application/json", (name, asked)
            assert response.json()["code"] == "invalid"
            assert response.json()["fields"] == {"format": [f"Not one of {own}: this download is always that file."]}


def test_an_export_s_schema_offers_its_own_format_only(schema):
    for path, own in (("judgments.csv", "csv"), ("scores.csv", "csv"), ("rose.jsonl", "jsonl")):
        parameters = schema["paths"][f"/api/datasets/{{dataset_id}}/exports/{path}"]["get"]["parameters"]
        assert [p["schema"]["enum"] for p in parameters if p["name"] == "format"] == [[own]], path


def test_a_wrong_export_format_is_refused_only_once_the_caller_is_known(lead):
    dataset = demo_dataset()
    response = APIClient().get(f"/api/datasets/{dataset.pk}/exports/judgments.csv?format=xml")
    assert response.status_code in (401, 403) and response["Content-Type"] == "application/json"


def test_a_path_with_an_encoded_newline_is_a_json_404(client):
    response = client.get("/api/datasets/%0Aabc/protocols/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json" and response.json()["code"] == "not_found"


def test_money_fields_state_ascii_digits_and_two_decimals(schema):
    request = schema["components"]["schemas"]["BatchCreateInputRequest"]["properties"]
    bucket = schema["components"]["schemas"]["BucketRequest"]["properties"]
    assert request["budget"]["pattern"] == "^[0-9]{1,8}(?:\\.[0-9]{1,2})?$"
    assert bucket["reward"]["pattern"] == "^[0-9]{1,4}(?:\\.[0-9]{1,2})?$"


@pytest.mark.parametrize("amount", ["٣.٥٠", ".", "-05.", "1.505"])
def test_an_amount_outside_the_money_pattern_is_refused(client, amount):
    dataset = demo_dataset()
    response = client.post("/api/batches/", {"dataset": dataset.pk, "budget": amount}, format="json")
    assert response.status_code == 400 and "budget" in response.json()["fields"]


@pytest.mark.parametrize(
    "path, method, statuses",
    [
        ("/api/token/", "post", {"400", "401", "403", "429"}),
        ("/api/datasets/import/", "post", {"400", "409", "413", "415", "422"}),
        ("/api/datasets/{dataset_id}/judge-runs/", "post", {"400", "404", "422"}),
        ("/api/batches/", "post", {"400", "422"}),
        ("/api/batches/{batch_id}/publish/", "post", {"404", "409", "422"}),
    ],
)
def test_schema_valid_requests_the_server_cannot_act_on_have_their_own_statuses_in_the_schema(
    schema, path, method, statuses
):
    """Wrong credentials (401), a state conflict (409), contents that cannot be processed (422):
    each declared where it can happen, with the error body, so a client need not read a 400 as
    "my request was malformed" when it was not."""
    responses = schema["paths"][path][method]["responses"]
    assert statuses <= set(responses), (path, sorted(responses))
    for status in statuses:
        assert responses[status]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
