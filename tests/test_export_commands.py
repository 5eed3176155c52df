"""The export commands' --output: a file others may read as any file the user writes, written
whole or not at all, and a path that cannot be written refused with a message, not a traceback."""

import os
import re
import stat

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Dataset
from hits.models import Batch
from hits.services.dataset_import import import_dataset

from .conftest import DEMO_ROSE

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

EXPORTS = [
    ("export_dataset", "--format", "rose"),
    ("export_judgments",),
]


@pytest.fixture
def demo():
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.mark.parametrize("command", EXPORTS)
def test_an_export_file_gets_the_permissions_of_any_new_file(tmp_path, demo, umask_022, command):
    """export_dataset wrote its file private to its owner (0600, mkstemp's): a colleague on the lab's
    machine could not read the exported dataset."""
    path = tmp_path / "out"
    call_command(command[0], "demo", *command[1:], "--output", str(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # nothing partial left beside it


@pytest.mark.parametrize("command", EXPORTS)
def test_an_output_path_that_cannot_be_written_is_refused_with_a_message(tmp_path, demo, command):
    """A missing folder or a folder as --output ended in FileNotFoundError or IsADirectoryError
    with a traceback."""
    for target, reason in ((tmp_path / "no-such-folder" / "out", "No such file or directory"), (tmp_path, "directory")):
        with pytest.raises(CommandError, match=rf"Cannot write {target}: .*{reason}"):
            call_command(command[0], "demo", *command[1:], "--output", str(target))
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no partial file left


def test_a_failed_export_leaves_the_old_file_as_it_was(tmp_path, demo, monkeypatch):
    path = tmp_path / "judgments.csv"
    path.write_text("the last good export\n")

    def broken(dataset, stream, batch):
        stream.write("worker,example_id\nhalf a file")
        raise RuntimeError("the database went away")

    monkeypatch.setattr("scoring.management.commands.export_judgments.write_judgments_csv", broken)
    with pytest.raises(RuntimeError):
        call_command("export_judgments", "demo", "--output", str(path))
    assert path.read_text() == "the last good export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["judgments.csv"]


@pytest.mark.parametrize(
    "kind, protocol, says",
    [(Batch.Kind.MACHINE, "", "is a machine round"), (Batch.Kind.CROWD, "prior", "is a rating batch (prior)")],
)
def test_exporting_a_round_without_acu_labels_is_refused_with_a_message(tmp_path, demo, kind, protocol, says):
    """export_dataset --round of a judge run's machine round (or of a rating batch) wrote "100
    documents" with no labels at all: a copy imported from it had lost every label."""
    round_ = Batch.objects.create(dataset=Dataset.objects.get(name="demo"), name="r", kind=kind, protocol=protocol)
    path = tmp_path / "round.jsonl"
    with pytest.raises(CommandError, match=f"Round {round_.pk} {re.escape(says)}"):
        call_command("export_dataset", "demo", "--output", str(path), "--round", str(round_.pk))
    assert not path.exists()
    with pytest.raises(CommandError, match="Dataset 'demo' has no round 0"):
        call_command("export_dataset", "demo", "--output", str(path), "--round", "0")


@pytest.mark.parametrize(
    "kind, protocol, says",
    [(Batch.Kind.MACHINE, "", "is a machine round"), (Batch.Kind.CROWD, "prior", "is a rating batch (prior)")],
)
@pytest.mark.parametrize("export", ["rose.jsonl", "judgments.csv"])
def test_the_apis_export_of_a_round_without_acu_labels_is_refused_with_a_message(
    demo, lead, kind, protocol, says, export
):
    """The API's exports read the commands' rule: a machine round or a rating batch gave a RoSE file
    of every document with no labels (and a judgments CSV of none), status 200."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    dataset = Dataset.objects.get(name="demo")
    round_ = Batch.objects.create(dataset=dataset, name="r", kind=kind, protocol=protocol)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    response = client.get(f"/api/datasets/{dataset.pk}/exports/{export}?round={round_.pk}")
    assert response.status_code == 400
    assert f"Round {round_.pk} {says}" in str(response.json())


@pytest.mark.parametrize("export", ["rose.jsonl", "judgments.csv"])
@pytest.mark.parametrize("machine", [True, False])
def test_the_apis_refusal_names_the_apis_address_of_the_figures(demo, lead, export, machine):
    """A script following docs/api.md was sent to `judge_dataset`, `compute_scores --json` or the
    Protocols page, which it cannot call: the refusal names the endpoint that has the round's figures."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from hits.models import JudgeRun

    dataset = Dataset.objects.get(name="demo")
    round_ = Batch.objects.create(
        dataset=dataset,
        name="r",
        kind=Batch.Kind.MACHINE if machine else Batch.Kind.CROWD,
        protocol="" if machine else "prior",
    )
    where = f"/api/datasets/{dataset.pk}/protocols/?rating_round={round_.pk}"
    if machine:
        where = f"/api/judge-runs/{JudgeRun.objects.create(batch=round_, judge='lexical').pk}/"
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    response = client.get(f"/api/datasets/{dataset.pk}/exports/{export}?round={round_.pk}")
    assert response.status_code == 400
    message = response.json()["fields"]["round"][0]
    assert f"GET {where}." in message and "compute_scores" not in message and "Protocols page" not in message
    assert client.get(where).status_code in (200, 404)  # the address exists (a bare rating round has no ratings: 404)
