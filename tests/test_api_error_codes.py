"""Issue 45 item 12: every JSON error under /api/ carries `code`, 413 and 429 included (the request
size limit, DRF's own body limit, the token endpoint's lockout, the lockout answer itself), and the
schema documents the token endpoint's 429."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config import lockout

from .conftest import PASSWORD
from .crowd_data import published_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(lead):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    return client


def _error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["code"] == code and body["error"], body
    return body


def test_an_upload_over_the_size_limit_is_a_413_with_its_code(api, settings):
    settings.IMPORT_UPLOAD_MAX_BYTES = 100
    upload = SimpleUploadedFile("d.jsonl", b"{}\n" * 100)
    body = _error(
        api.post("/api/datasets/import/", {"name": "x", "file": upload}, format="multipart"), 413, "too_large"
    )
    assert "the limit here is 100" in body["error"]


def test_a_body_over_djangos_limit_is_a_413_with_its_code(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    upload = SimpleUploadedFile("small.jsonl", b"{}")
    _error(
        api.post("/api/datasets/import/", {"name": "x" * 2000, "file": upload}, format="multipart"), 413, "too_large"
    )


def test_a_content_length_that_is_no_number_is_a_400_with_its_code(api):
    _error(api.post("/api/batches/", "{}", content_type="application/json", CONTENT_LENGTH="many"), 400, "invalid")


def test_the_token_endpoints_lockout_is_a_429_with_its_code(client, lead, settings):
    settings.AXES_FAILURE_LIMIT = 10
    url = reverse("api_token")
    for _ in range(12):
        client.post(url, json.dumps({"username": lead.username, "password": "wrong"}), content_type="application/json")
    response = client.post(
        url, json.dumps({"username": lead.username, "password": PASSWORD}), content_type="application/json"
    )
    body = _error(response, 429, "locked_out")
    assert "token" not in body and int(response["Retry-After"]) > 0


def test_the_lockout_answer_under_the_api_is_json_with_its_code(lead):
    request = RequestFactory().post("/api/token/", {"username": lead.username})
    response = lockout.refused_page(request)
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert json.loads(response.content)["code"] == "locked_out"
    page = lockout.refused_page(RequestFactory().post("/accounts/login/", {"username": lead.username}))
    assert page.status_code == 429 and page["Content-Type"].startswith("text/html")


def test_the_work_rate_limit_says_its_code(client, make_user, settings, still_ratelimit_clock):
    settings.RATE_LIMIT_WORK_PER_MINUTE = (1, 1000)
    published_batch()
    client.force_login(make_user("quick-worker", "worker"))
    codes = [client.post(reverse("work_next")) for _ in range(3)]
    _error(codes[-1], 429, "rate_limited")


def test_the_schema_documents_the_token_endpoints_429(api):
    responses = api.get("/api/schema/?format=json").json()["paths"]["/api/token/"]["post"]["responses"]
    assert "429" in responses
    assert responses["429"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("{bad", "not valid JSON"),
        ("[" * 40 + "]" * 40, "nested too deeply"),
        ('{"dataset": 1' + "0" * 40 + "}", "too many digits"),
        (b'{"name": "\xff"}', "not UTF-8"),
    ],
)
def test_a_body_that_is_not_json_is_a_400_with_the_code_invalid(api, body, words):
    # docs/api.md: a 400's code is `invalid`, malformed JSON included (it was DRF's `parse_error`).
    body = _error(api.post("/api/batches/", body, content_type="application/json"), 400, "invalid")
    assert words in body["error"]


def test_a_json_body_over_djangos_limit_is_a_413_with_its_code(api, settings):
    # The request limit lets it through (REQUEST_MAX_BYTES above Django's); the JSON reader's own bound is a
    # 413 as a form body over it is, not the 400 of a malformed request.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    settings.REQUEST_MAX_BYTES = 100_000
    body = _error(
        api.post("/api/batches/", json.dumps({"dataset": 1, "name": "x" * 2000}), content_type="application/json"),
        413,
        "too_large",
    )
    assert "at most 1,000 bytes" in body["error"]
