"""A protocol-comparison file's `reference_acus` (RoSE's LLM file has them) become the references'
ACUs as a RoSE JSONL file's do; an example without them leaves its reference to the authors, and
the import's message says how many; a bad example imports nothing; the Protocols page still works
with the ACUs present, crowd judgments of them included."""

import html
import json

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.importing.protocols import read_protocol_file
from annotation.models import ACU, Dataset, RatingRound, Reference, ReferenceSentence
from annotation.services.ratings import export_ratings, import_ratings
from annotation.text import attach_units_to_sentences, split_sentences
from hits.batch_fields import BatchSpec
from hits.services.batches import create_batch, publish_batch
from hits.services.dataset_import import import_dataset
from hits.services.simulate import simulate_crowd
from scoring.protocols.report import Settings, build_report
from scoring.protocols.selectors import pick_round, protocol_data
from scoring.runs.selectors import run_summaries
from scoring.runs.services import compute_scores

from .conftest import SHARED

LLM = SHARED / "data" / "rose-protocols" / "protocol-comparison-llm.json"

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def examples() -> list[dict]:
    return json.loads(LLM.read_text(encoding="utf-8"))


def upload(client, data: list[dict], name="llm"):
    file = SimpleUploadedFile("protocol-comparison-llm.json", json.dumps(data).encode())
    return client.post(reverse("dataset_import"), {"name": name, "format": "rose-protocols", "file": file}, follow=True)


def test_the_llm_files_reference_acus_become_the_references_acus(client, lead):
    client.force_login(lead)
    data = examples()
    page = upload(client, data).content.decode()
    total = sum(len(e["reference_acus"]) for e in data)
    assert total == 1092
    assert "100 documents, 5 systems, 500 summaries, 1092 ACUs" in page
    assert "without ACUs" not in page
    dataset = Dataset.objects.get(name="llm")
    assert set(Reference.objects.filter(document__dataset=dataset).values_list("status", flat=True)) == {"approved"}
    assert set(ACU.objects.filter(reference__document__dataset=dataset).values_list("status", flat=True)) == {
        "approved"
    }
    # Each example's ACUs, in order, under the sentence the RoSE JSONL import attaches them to.
    for example in data[:10]:
        reference = Reference.objects.get(document__dataset=dataset, document__external_id=example["example_id"])
        sentences = split_sentences(example["reference"].strip())
        assert list(reference.sentences.order_by("position").values_list("text", flat=True)) == sentences
        units = [u.strip() for u in example["reference_acus"]]
        attached = attach_units_to_sentences(units, sentences)
        expected = [
            (s, u) for s, _, u in sorted((s, i, u) for i, (u, s) in enumerate(zip(units, attached, strict=True)))
        ]
        acus = ACU.objects.filter(reference=reference).order_by("sentence__position", "position")
        assert [(a.sentence.position, a.text) for a in acus] == expected
    # The ratings and ACU scores came in as before: one rating round.
    assert RatingRound.objects.filter(dataset=dataset).count() == 1


def test_examples_without_reference_acus_wait_for_authors_and_the_message_counts_them(client, lead):
    client.force_login(lead)
    data = examples()
    data[3].pop("reference_acus")
    data[7]["reference_acus"] = []
    data[9]["reference_acus"] = None
    page = upload(client, data).content.decode()
    kept = sum(len(e["reference_acus"] or []) for e in data if "reference_acus" in e)
    assert f"100 documents, 5 systems, 500 summaries, {kept} ACUs" in page
    assert "3 references came without ACUs: they wait for authors" in page
    dataset = Dataset.objects.get(name="llm")
    todo = Reference.objects.filter(document__dataset=dataset, status=Reference.Status.TODO)
    assert sorted(todo.values_list("document__external_id", flat=True)) == sorted(
        str(data[i]["example_id"]) for i in (3, 7, 9)
    )
    assert not ACU.objects.filter(reference__in=todo).exists()


def test_one_reference_without_acus_is_said_in_the_singular(tmp_path):
    data = examples()[:2]
    data[1]["reference_acus"] = []
    path = tmp_path / "two.json"
    path.write_text(json.dumps(data))
    message = str(import_dataset(path, name="two", fmt="rose-protocols"))
    assert message.endswith(
        ". 1 reference came without ACUs: they wait for authors (Assign authors on the dataset's page)"
    )


@pytest.mark.parametrize(
    "bad, message",
    [
        ([""], "example 60: reference_acus[0] is empty"),
        (["a fact", 3], "example 60: 'reference_acus' must be a list of strings"),
        ("one fact", "example 60: 'reference_acus' must be a list of strings"),
        (["x" * 5000], "example 60: unit 1"),
    ],
)
def test_a_bad_example_imports_nothing_and_says_which(client, lead, bad, message):
    client.force_login(lead)
    data = examples()
    data[59]["reference_acus"] = bad
    response = upload(client, data)
    page = html.unescape(response.content.decode())
    assert response.status_code == 400
    assert "Nothing was imported." in page and message in page
    assert not Dataset.objects.filter(name="llm").exists()
    assert not ACU.objects.exists() and not ReferenceSentence.objects.exists()


def test_the_protocols_page_works_with_the_acus_and_a_crowd_round_of_them(client, lead, tmp_path):
    import_dataset(LLM, name="llm", fmt="rose-protocols")
    dataset = Dataset.objects.get(name="llm")
    references = Reference.objects.filter(document__dataset=dataset, document__position__lt=4)
    batch = publish_batch(
        create_batch(
            dataset=dataset, spec=BatchSpec(name="crowd"), systems=list(dataset.systems.all()), references=references
        )
    )
    assert simulate_crowd(batch, workers=3, accuracy=0.9, seed=1).submitted == 4 * 5 * 3
    run = compute_scores(dataset, n_resamples=50)
    assert run.status == "done" and len(run_summaries(run)["ids"]) == 4 * 5
    client.force_login(lead)
    imported = pick_round(dataset)
    response = client.get(reverse("dashboard_protocols", args=[dataset.pk]))
    assert response.status_code == 200
    data = protocol_data(imported)
    assert data.acu_source == "imported with the ratings"  # the file's own ACU scores stay the ACU protocol
    report = build_report(data, Settings(n_resamples=50), with_power=False)
    assert report["documents"] == 100 and report["systems"] == ["bart", "brio", "gpt3", "reference", "t0"]
    # A round of ratings alone takes its ACU scores from the crowd's judgments of the imported ACUs.
    ratings_only = export_ratings(imported)
    for example in ratings_only:
        for annotation in example["annotations"].values():
            annotation.pop("acu", None), annotation.pop("normalized_acu", None)
    path = tmp_path / "ratings.json"
    path.write_text(json.dumps(ratings_only))
    alone = import_ratings(dataset, read_protocol_file(path), name="ratings only")
    response = client.get(reverse("dashboard_protocols", args=[dataset.pk]) + f"?rating_round={alone.round_id}")
    assert response.status_code == 200
    data = protocol_data(RatingRound.objects.get(pk=alone.round_id))
    assert data.acu_source == f"scoring run {run.pk}" and int((~np.isnan(data.acu)).sum()) == 4 * 5
    assert build_report(data, Settings(n_resamples=50), with_power=False)["documents"] == 100
