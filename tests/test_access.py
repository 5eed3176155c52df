"""Who may open which page: every view tested for every role."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Dataset
from hits.services.dataset_import import import_dataset

from .conftest import DEMO_ROSE, PASSWORD

ROLES = ["lead", "author", "worker", "outsider", "anonymous"]


@pytest.fixture
def demo(db):
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    return Dataset.objects.get(name="demo")


@pytest.fixture
def as_role(client, request):
    def login(role: str):
        if role != "anonymous":
            user = request.getfixturevalue(role)
            assert client.login(username=user.username, password=PASSWORD)
        return client

    return login


def urls(dataset):
    doc = dataset.documents.order_by("position").first()
    return {
        "home": reverse("home"),
        "datasets": reverse("dataset_list"),
        "dataset": reverse("dataset_detail", args=[dataset.pk]),
        "document": reverse("document_detail", args=[dataset.pk, doc.pk]),
        "import": reverse("dataset_import"),
        "export": reverse("dataset_export", args=[dataset.pk]),
        "admin": reverse("admin:index"),
    }


# page -> roles that may open it
ALLOWED = {
    "home": {"lead", "author", "worker"},
    "datasets": {"lead", "author"},
    "dataset": {"lead", "author"},
    "document": {"lead", "author"},
    "import": {"lead"},
    "export": {"lead"},
    "admin": {"lead"},
}


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("page", sorted(ALLOWED))
def test_page_access(role, page, demo, as_role):
    client = as_role(role)
    response = client.get(urls(demo)[page])
    if role == "anonymous":
        assert response.status_code == 302 and "login" in response["Location"]
    elif page == "home" and role == "outsider":
        assert response.status_code == 403  # signed in, but holds no role
    elif page == "home" and role == "worker":
        assert response.status_code == 302 and response["Location"] == reverse("work")
    elif role in ALLOWED[page]:
        assert response.status_code == 200
    elif page == "admin":
        assert response.status_code == 302 and "login" in response["Location"]
    else:
        assert response.status_code == 403


@pytest.mark.django_db
def test_home_lists_datasets_for_staff_but_not_for_workers(demo, as_role, client):
    assert "demo" in as_role("lead").get(reverse("home")).content.decode()
    client.logout()
    page = as_role("worker").get(reverse("home"), follow=True).content.decode()
    assert "My work" in page and demo.name not in page


@pytest.mark.django_db
def test_only_leads_can_post_an_import(as_role, client):
    upload = SimpleUploadedFile("demo.jsonl", DEMO_ROSE.read_bytes())
    for role in ["author", "worker"]:
        response = as_role(role).post(reverse("dataset_import"), {"name": "x", "format": "rose", "file": upload})
        assert response.status_code == 403
        client.logout()
    assert not Dataset.objects.filter(name="x").exists()


@pytest.mark.django_db
def test_upload_import_and_its_error_message(as_role):
    client = as_role("lead")
    bad = SimpleUploadedFile("bad.jsonl", b'{"example_id": "a"\n')
    response = client.post(reverse("dataset_import"), {"name": "up", "format": "rose", "file": bad})
    assert response.status_code == 400
    assert "Nothing was imported. bad.jsonl, line 1: the line is not complete JSON" in response.content.decode()
    assert not Dataset.objects.filter(name="up").exists()

    good = SimpleUploadedFile("demo.jsonl", DEMO_ROSE.read_bytes())
    response = client.post(reverse("dataset_import"), {"name": "up", "format": "rose", "file": good})
    dataset = Dataset.objects.get(name="up")
    assert response.status_code == 302 and response["Location"] == reverse("dataset_detail", args=[dataset.pk])
    assert dataset.documents.count() == 10


@pytest.mark.django_db
def test_zipped_pyramid_upload(as_role, realsumm_path, tmp_path):
    import shutil

    archive = shutil.make_archive(str(tmp_path / "realsumm"), "zip", realsumm_path.parent, realsumm_path.name)
    client = as_role("lead")
    with open(archive, "rb") as fh:
        response = client.post(
            reverse("dataset_import"),
            {"name": "zipped", "format": "pyramid", "file": SimpleUploadedFile("realsumm.zip", fh.read())},
        )
    assert response.status_code == 302
    assert Dataset.objects.get(name="zipped").documents.count() == 100


@pytest.mark.django_db
def test_export_download_is_rose_jsonl(demo, as_role):
    import json

    response = as_role("lead").get(reverse("dataset_export", args=[demo.pk]))
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == 10
    assert {"example_id", "source", "reference", "reference_acus", "system_outputs", "annotations"} <= set(
        json.loads(lines[0])
    )


@pytest.mark.django_db
def test_upload_over_the_size_limit_is_refused(as_role, settings):
    settings.IMPORT_UPLOAD_MAX_BYTES = 1000
    upload = SimpleUploadedFile("demo.jsonl", DEMO_ROSE.read_bytes())
    response = as_role("lead").post(reverse("dataset_import"), {"name": "big", "format": "rose", "file": upload})
    # Refused by its Content-Length before the body is read (config/limits.py).
    assert response.status_code == 413
    assert "the limit here is" in response.content.decode()
    assert not Dataset.objects.filter(name="big").exists()
