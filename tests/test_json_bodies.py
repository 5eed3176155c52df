"""One bounded JSON reader (config/json_body.py) for every JSON body: a body nested 100,000 deep,
too large, or not UTF-8 is a JSON 400 with a message on the API token endpoint, the API's batch
creation, the task submission and the authoring autosave; never a 500 or an HTML page."""

import pytest
from django.urls import reverse

from annotation.models import Reference
from annotation.services import authoring
from config import json_body
from hits.services import handout
from hits.services.submission import task_token

from .authoring_data import unauthored_dataset
from .crowd_data import published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000


def assert_json_400(response, words):
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert words in response.json()["error"]


@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["array", "object"])
def test_api_token_and_batch_creation_refuse_deep_json_with_json(client, lead, body):
    assert_json_400(client.post("/api/token/", body, content_type="application/json"), "nested too deeply")
    client.force_login(lead)
    assert_json_400(client.post("/api/batches/", body, content_type="application/json"), "nested too deeply")


def test_the_task_submission_refuses_deep_json(client):
    batch = published_batch(gold_share=0.0)
    (worker,) = make_workers(1)
    token = task_token(handout.next_assignment(worker, batch))
    for body, words in ((DEEP, "nested too deeply"), (b"\xff\xfe", "not UTF-8"), (b"[1]", "JSON object")):
        response = client.post(reverse("task_submit", args=[token]), body, content_type="application/json")
        assert response.status_code == 400 and words in response.json()["error"]


def test_the_autosave_refuses_deep_and_oversized_json(client, author, tmp_path, settings):
    dataset = unauthored_dataset(tmp_path)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    reference = Reference.objects.get(writer=author)
    client.force_login(author)
    url = reverse("authoring_save", args=[reference.pk])
    assert_json_400(client.post(url, DEEP_OBJECT, content_type="application/json"), "nested too deeply")
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    assert_json_400(client.post(url, b'{"a": "' + b"x" * 2000 + b'"}', content_type="application/json"), "too large")


def test_the_reader_itself():
    assert json_body.parse_json_bytes(b'{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    with pytest.raises(json_body.JSONBodyError, match="nested too deeply"):
        json_body.parse_json_bytes(b"[" * 33 + b"]" * 33)
    with pytest.raises(json_body.JSONBodyError, match="too many digits"):
        json_body.parse_json_bytes(b"1" * 40)
