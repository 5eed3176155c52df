"""Every import error is a clear message (issue 15, item 4): over-long values, NUL characters,
lone surrogates, huge integers, deep JSON, archive bombs, oversized requests and very long
paragraphs are refused (or bounded) with a message naming file and line, and nothing is written."""

import io
import json
import tarfile
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import text as annotation_text
from annotation.models import Dataset

from .conftest import DEMO_ROSE
from .test_import_errors import row_counts

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def first_record() -> dict:
    return json.loads(DEMO_ROSE.read_text(encoding="utf-8").splitlines()[0])


def cli_fails(tmp_path, line: str, *fragments, name="bad", fmt="rose"):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8", errors="surrogatepass")
    before = row_counts()
    with pytest.raises(CommandError) as info:
        call_command("import_dataset", str(path), "--name", name, "--format", fmt)
    message = str(info.value)
    assert "bad.jsonl, line 1" in message or not fragments or "dataset name" in message, message
    for fragment in fragments:
        assert fragment in message, message
    assert row_counts() == before
    return message


def test_values_over_the_column_lengths(tmp_path):
    r = first_record()
    cli_fails(tmp_path, json.dumps({**r, "example_id": "d" * 201}), "document id", "201 characters", "at most 200")
    system = next(iter(r["system_outputs"]))
    outputs = {**r["system_outputs"], "s" * 201: "a summary"}
    cli_fails(tmp_path, json.dumps({**r, "system_outputs": outputs}), "system name", "201 characters")
    annotations = {system: {"annotator_labels": {"a" * 150: [1] * len(r["reference_acus"])}}}
    cli_fails(tmp_path, json.dumps({**r, "annotations": annotations}), "annotator name", "150 characters")


def test_nul_characters_and_lone_surrogates(tmp_path):
    r = first_record()
    cli_fails(tmp_path, json.dumps({**r, "source": "a\u0000b"}), "NUL character")
    cli_fails(tmp_path, json.dumps({**r, "source": "bad \ud800 text"}), "lone surrogate")
    with pytest.raises(CommandError, match="dataset name holds a NUL"):
        call_command("import_dataset", str(DEMO_ROSE), "--name", "bad\x00name", "--format", "rose")


def test_pyramid_nul_bytes_name_file_and_line(tmp_path, realsumm_path):
    import shutil

    root = tmp_path / "p"
    shutil.copytree(realsumm_path, root)
    lines = (root / "documents.txt").read_bytes().split(b"\n")
    lines[2] = lines[2][:20] + b"\x00" + lines[2][20:]
    (root / "documents.txt").write_bytes(b"\n".join(lines))
    before = row_counts()
    with pytest.raises(CommandError, match=r"ids.txt, line 3: the source document holds a NUL"):
        call_command("import_dataset", str(root), "--name", "p", "--format", "pyramid")
    assert row_counts() == before


def test_huge_integers_and_deep_nesting(tmp_path):
    r = first_record()
    cli_fails(
        tmp_path,
        json.dumps(r).replace('"example_id": "cnndm1017"', '"example_id": ' + "7" * 5000),
        "integer of 5000 digits",
    )
    deep = json.dumps({**r, "annotations": None})[:-1] + ', "x": ' + "[" * 50000 + "]" * 50000 + "}"
    cli_fails(tmp_path, deep, "nested more than")


def _zip_bomb(size: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("realsumm/ids.txt", "d1\n")
        zf.writestr("realsumm/documents.txt", b"\0" * size)
    return buffer.getvalue()


def _tar_bomb(size: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        data = b"a" * size
        info = tarfile.TarInfo("realsumm/documents.txt")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_archive_bombs_are_refused_before_extraction(client, lead, settings, monkeypatch):
    from annotation import uploads

    extracted = []
    monkeypatch.setattr(uploads.tarfile.TarFile, "extractall", lambda *a, **k: extracted.append(1))
    client.force_login(lead)
    for name, data in (("bomb.zip", _zip_bomb(30 * 1024 * 1024)), ("bomb.tar.gz", _tar_bomb(30 * 1024 * 1024))):
        assert len(data) < 200 * 1024
        upload = SimpleUploadedFile(name, data)
        response = client.post(reverse("dataset_import"), {"name": "bomb", "format": "pyramid", "file": upload})
        assert response.status_code == 400, name
        assert "expands to more than" in response.content.decode()
    assert not extracted and not Dataset.objects.filter(name="bomb").exists()


def test_many_members_are_refused(client, lead, settings):
    settings.IMPORT_ARCHIVE_MAX_MEMBERS = 50
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for i in range(60):
            zf.writestr(f"p/f{i}.txt", "x")
    client.force_login(lead)
    upload = SimpleUploadedFile("many.zip", buffer.getvalue())
    response = client.post(reverse("dataset_import"), {"name": "many", "format": "pyramid", "file": upload})
    assert response.status_code == 400 and "more than 50 files" in response.content.decode()


def test_a_long_or_strange_file_name_is_no_error(client, lead):
    client.force_login(lead)
    upload = SimpleUploadedFile("n" * 300 + ".jsonl", DEMO_ROSE.read_bytes())
    response = client.post(reverse("dataset_import"), {"name": "long-name", "format": "rose", "file": upload})
    assert response.status_code in (200, 302) and Dataset.objects.filter(name="long-name").exists()


def test_oversized_requests_are_refused_by_content_length_before_reading(client):
    # An anonymous 300 MB post to the login page: refused from its header, the body is never read.
    response = client.generic(
        "POST",
        reverse("login"),
        b"username=x",
        content_type="application/x-www-form-urlencoded",
        CONTENT_LENGTH=str(300 * 1024 * 1024),
    )
    assert response.status_code == 413 and "Nothing was received" in response.json()["error"]
    # Anonymous uploads get the small limit as well, not the import one.
    response = client.generic(
        "POST",
        reverse("dataset_import"),
        b"x",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(50 * 1024 * 1024),
    )
    assert response.status_code == 413


def test_very_long_paragraphs_are_split_in_bounded_pieces():
    sentence = "The cat sat on the mat and looked around for a while. "
    paragraph = (sentence * 4000)[:200_000]
    pieces = annotation_text._pieces(paragraph)
    assert max(map(len, pieces)) <= annotation_text.SPLIT_PIECE
    assert "".join(p.replace(" ", "") for p in pieces) == paragraph.replace(" ", "")  # nothing lost
    sentences = annotation_text.split_sentences(paragraph)
    assert len(sentences) == 3704 and sentences[0] == sentence.strip()
    assert max(map(len, annotation_text._pieces("x" * 10_000))) <= annotation_text.SPLIT_PIECE


@pytest.mark.parametrize("authorization", ["Token not-a-token", "Bearer x", "Basic eDp5"])
def test_a_made_up_authorization_header_does_not_open_the_import_limit(client, authorization):
    # Anyone could send `Authorization: ...`: the import limit (and Django reading a 50 MB
    # multipart body to check its CSRF token) was given to every request that carried one.
    response = client.generic(
        "POST",
        reverse("dataset_import"),
        b"x",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(50 * 1024 * 1024),
        HTTP_AUTHORIZATION=authorization,
    )
    assert response.status_code == 413 and "Nothing was received" in response.json()["error"]


def test_the_import_limit_is_for_leads_signed_in_or_with_their_token(client, lead, author, worker, settings):
    from rest_framework.authtoken.models import Token

    settings.REQUEST_MAX_BYTES = 1000  # the demo file is larger; the import limit (1 GiB) is not

    def post(name, **extra):
        upload = SimpleUploadedFile("demo.jsonl", DEMO_ROSE.read_bytes())
        return client.post(reverse("dataset_import"), {"name": name, "format": "rose", "file": upload}, **extra)

    for user in (author, worker):  # signed in, but none of the large-upload views is theirs
        client.force_login(user)
        assert post("by-" + user.username).status_code == 413
        client.logout()
    worker_token = Token.objects.create(user=worker)
    assert post("by-token", HTTP_AUTHORIZATION=f"Token {worker_token.key}").status_code == 413
    lead_token = Token.objects.create(user=lead)
    # Past the size check with the lead's token: the page itself still wants the session (login).
    response = post("by-lead-token", HTTP_AUTHORIZATION=f"Token {lead_token.key}")
    assert response.status_code == 302 and "login" in response["Location"]
    client.force_login(lead)
    assert post("by-lead").status_code == 302
    assert list(Dataset.objects.values_list("name", flat=True)) == ["by-lead"]


@pytest.mark.django_db(transaction=True)
def test_an_oversized_request_is_a_413_under_the_development_server_too(live_server, settings):
    # run.sh serves with Django's development server (wsgiref), which refuses an application's
    # hop-by-hop header: the refusal's `Connection: close` turned the 413 into a bare 500.
    import http.client
    from urllib.parse import urlsplit

    settings.REQUEST_MAX_BYTES = 1000
    address = urlsplit(live_server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    connection.request(
        "POST",
        reverse("login"),
        body=b"username=" + b"x" * 5000,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    response = connection.getresponse()
    assert response.status == 413 and "Nothing was received" in json.loads(response.read())["error"]
    connection.close()
