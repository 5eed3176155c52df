"""Issue 47 item 4: export then re-import gives back the same dataset. The RoSE export carries the
source data of Krippendorff's alpha (each annotator's labels) and where each label came from
(imported expert labels, an expert round, a crowd round under its provider and worker id), so
that an import of it under another name has the same system scores, the same alphas, the same
"N of M summaries are gold" and the same workers table: crowd labels come back as
crowd labels under their worker, never as expert labels, and the work that counts nowhere (a careless
worker's rejected work, an excluded worker's) comes back as it was, with the gold accuracy and
agreement the lead's decision rests on. Bad sources are refused whole."""

import io
import json
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.importing import DatasetImportError
from annotation.models import Dataset
from hits import gold
from hits.models import HIT, Assignment, Batch, Worker
from hits.selectors import counted_judgments
from hits.services import expert, review
from hits.services.dataset_import import import_dataset
from hits.services.simulate import simulate_crowd
from scoring.results.dashboard import workers_table
from scoring.results.exports.rose import export_rose
from scoring.runs.services import compute_scores

from .crowd_data import published_batch
from .test_expert_labels import label_all
from .test_expert_provider import partly_labelled

pytestmark = [pytest.mark.portable, pytest.mark.django_db]

# The workers table's columns an export carries (pay stays with the batch made here).
CARRIED = (
    "provider",
    "assignments",
    "labels",
    "agreement",
    "gold_accuracy",
    "median_seconds",
    "flags",
    "rejected",
    "blocked",
    "excluded",
)
FEEDBACK = "Every fact marked at random in a few seconds."


def studied(tmp_path, author) -> Dataset:
    """Imported expert labels on the first document, an expert round, and a crowd batch worked
    by three simulated workers and a careless one, whose work the lead rejects and whom the lead
    blocks; the third careful worker is excluded."""
    dataset = partly_labelled(tmp_path)
    round_ = expert.create_round(dataset, count=4, experts=1, seed=0)
    label_all(round_, author)
    expert.stop_round(round_)
    crowd = published_batch(dataset, assignments=3, gold_share=0.5)
    simulate_crowd(crowd, workers=3, accuracy=0.85, spammers=1, seed=7, prefix="crowd")
    careless = Worker.objects.get(external_id=f"crowd-{crowd.pk}-spam1")
    for pk in careless.assignments.values_list("pk", flat=True):
        review.reject(assignment_id=pk, feedback=FEEDBACK)
    review.block_worker(worker_id=careless.pk, reason="Careless: rejected work.")
    review.set_excluded(worker_id=Worker.objects.get(external_id=f"crowd-{crowd.pk}-3").pk, excluded=True)
    return dataset


def figures(dataset) -> dict:
    run = compute_scores(dataset, None, trigger="test")
    rows = {}
    for row in workers_table(run)["rows"]:
        name = row["worker"].removeprefix(f"{dataset.name}/") if row["provider"] == "expert" else row["worker"]
        rows[(row["provider"], name)] = {key: row[key] for key in CARRIED}
    return {
        "systems": run.outputs["systems"],
        "alpha": run.outputs["alpha"],
        "workers": rows,
        "gold": gold.gold_summary_count(dataset),
    }


def exported(dataset, path) -> None:
    call_command("export_dataset", dataset.name, "--format", "rose", "--output", str(path))


def test_export_then_import_gives_the_same_figures(client, lead, author, tmp_path):
    original = studied(tmp_path, author)
    path = tmp_path / "study.jsonl"
    exported(original, path)
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    sources = [s for a in record["annotations"].values() for s in a["label_sources"].values()]
    assert {s["kind"] for s in sources} >= {"imported", "crowd"}
    crowd_source = next(s for s in sources if s["kind"] == "crowd")
    assert crowd_source["provider"] == "inhouse" and crowd_source["worker"].startswith("crowd-")
    assert crowd_source["round"] == Batch.objects.get(dataset=original, kind="crowd").name

    import_dataset(path, name="copy", fmt="rose")
    copy = Dataset.objects.get(name="copy")
    before, after = figures(original), figures(copy)
    assert after["systems"] == before["systems"]
    assert after["alpha"] == before["alpha"]
    assert after["alpha"]["acu_level"] is not None and after["alpha"]["summary_level"] is not None
    assert after["workers"] == before["workers"]
    expert_summaries = HIT.objects.filter(batch__dataset=original, batch__kind__in=Batch.EXPERT_KINDS)
    assert after["gold"] == before["gold"] == expert_summaries.values("summary").distinct().count() > 4
    crowd_rows = [key for key in after["workers"] if key[0] == "inhouse"]
    assert len(crowd_rows) == 4 and any(after["workers"][k]["flags"] for k in crowd_rows)
    # The careless worker's row: all their work rejected, blocked, with the evidence measured on it.
    careless = next(after["workers"][k] for k in crowd_rows if "spam" in k[1])
    assert careless["rejected"] > 0 and careless["assignments"] == 0 and careless["blocked"]
    assert careless["agreement"] is not None and careless["gold_accuracy"] is not None
    assert any(after["workers"][k]["gold_accuracy"] is not None for k in crowd_rows)
    assert sum(after["workers"][k]["excluded"] for k in crowd_rows) == 1
    stored = Assignment.objects.filter(hit__batch__dataset=copy, worker__external_id__contains="spam")
    assert set(stored.values_list("status", "feedback")) == {("rejected", FEEDBACK)}
    assert stored.count() == careless["rejected"]
    assert not counted_judgments(copy).filter(assignment__in=stored).exists()

    # Where each label came from: expert labels in read-only expert rounds, crowd labels in a
    # read-only crowd round under their own workers, none of them gold.
    kinds = sorted(copy.batches.values_list("kind", "provider"))
    assert kinds == [("imported", "expert"), ("imported", "expert"), ("imported_crowd", "inhouse")]
    crowd_workers = Worker.objects.filter(assignments__hit__batch__dataset=copy, provider="inhouse").distinct()
    assert crowd_workers.count() == 4

    client.force_login(lead)
    for dataset, figure in ((original, before), (copy, after)):
        page = client.get(reverse("dataset_detail", args=[dataset.pk])).content.decode()
        assert re.search(rf"<b>{figure['gold']}</b> of \d+ summaries are gold", page)
        workers_page = client.get(reverse("dashboard_workers", args=[dataset.pk])).content.decode()
        assert "No worker has judged yet" not in workers_page
        assert all(name in workers_page for _, name in crowd_rows)

    # And the export of the copy carries the same labels from the same rounds.
    again = tmp_path / "copy.jsonl"
    exported(copy, again)
    first = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    second = [json.loads(line) for line in again.read_text(encoding="utf-8").splitlines()]
    for a, b in zip(first, second, strict=True):
        for system, annotation in a["annotations"].items():
            other = b["annotations"][system]
            assert other["annotator_labels"] == annotation["annotator_labels"]
            assert other["acu"] == annotation["acu"] and other["normalized_acu"] == annotation["normalized_acu"]
            assert {k: s["round"] for k, s in other["label_sources"].items()} == {
                k: s["round"] for k, s in annotation["label_sources"].items()
            }


def _with(path, change) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    change(record)
    lines[0] = json.dumps(record)
    return "\n".join(lines) + "\n"


def _same_worker_twice(record) -> None:
    crowd = [[s for s in a["label_sources"].values() if s["kind"] == "crowd"] for a in record["annotations"].values()]
    first, second = next(sources for sources in crowd if len(sources) > 1)[:2]
    second.update(provider=first["provider"], worker=first["worker"])


def _sources_without_labels(record) -> None:
    annotation = next(iter(record["annotations"].values()))
    del annotation["annotator_labels"]


def _first_source(record) -> dict:
    annotation = next(iter(record["annotations"].values()))
    return next(iter(annotation["label_sources"].values()))


def _rejected(record, **change) -> None:
    """A rejected copy of the first crowd annotator's labels as `uncounted_labels`, changed by `change`."""
    annotation = next(a for a in record["annotations"].values() if "label_sources" in a)
    annotator, source = next((k, s) for k, s in annotation["label_sources"].items() if s["kind"] == "crowd")
    item = {"labels": annotation["annotator_labels"][annotator], "status": "rejected", "feedback": "No."}
    annotation.setdefault("uncounted_labels", []).append({**item, **source, "round": "elsewhere", **change})


BAD_UNCOUNTED = [
    (lambda r: _rejected(r, status="pending"), r"\['status'\] must be one of rejected, approved"),
    (lambda r: _rejected(r, status="approved"), "approved work of a worker not excluded"),
    (lambda r: _rejected(r, gold={"correct": 5, "total": 2}), r"\['gold'\] must be"),
    (lambda r: _rejected(r, blocked="yes"), r"\['blocked'\] must be true or false"),
    (lambda r: _rejected(r, labels=[1]), r"\['labels'\] has 1 labels, but reference_acus has"),
    (lambda r: _rejected(r, feedback="x" * 2000), "rejection feedback of .+ is over 1024 characters"),
    (lambda r: _rejected(r, kind="expert", excluded=True), "expert labels are never blocked or excluded"),
    (
        lambda r: next(iter(r["annotations"].values())).update(uncounted_labels={"a": 1}),
        r"\['uncounted_labels'\] must be a list of objects",
    ),
]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: _first_source(r).update(kind="gold"), r"\['kind'\] must be one of imported, expert, crowd"),
        (lambda r: _first_source(r).update(round=""), r"\['round'\] must be a text of 1 to 200 characters"),
        (lambda r: _first_source(r).update(seconds="fast"), r"\['seconds'\] must be a number of seconds"),
        (
            lambda r: next(iter(r["annotations"].values()))["label_sources"].update(nobody=_first_source(r)),
            "names 'nobody', who has no annotator_labels",
        ),
        (
            lambda r: [
                s.update(provider="acme") for a in r["annotations"].values() for s in a["label_sources"].values()
            ],
            "a crowd provider is one of inhouse, mturk, prolific, panel",
        ),
        (_same_worker_twice, r"labels '.+' twice in round"),
        (_sources_without_labels, "needs the 'annotator_labels' they describe"),
        *BAD_UNCOUNTED,
    ],
)
def test_bad_label_sources_are_refused_whole(tmp_path, author, change, message):
    dataset = partly_labelled(tmp_path)
    crowd = published_batch(dataset, assignments=2)
    simulate_crowd(crowd, workers=2, accuracy=0.9, seed=3, prefix="crowd")
    path = tmp_path / "good.jsonl"
    exported(dataset, path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_with(path, change), encoding="utf-8")
    workers = Worker.objects.count()
    with pytest.raises(DatasetImportError, match=message) as raised:
        import_dataset(bad, name="bad", fmt="rose")
    assert "line 1" in str(raised.value)
    assert not Dataset.objects.filter(name="bad").exists() and Worker.objects.count() == workers


def test_a_plain_file_export_carries_no_sources(tmp_path):
    """The labels imported with a dataset, alone, are the file's own: its export stays RoSE's layout."""
    dataset = partly_labelled(tmp_path)
    buffer = io.StringIO()
    export_rose(dataset, buffer)
    assert "label_sources" not in buffer.getvalue()


def test_an_unknown_in_house_worker_never_becomes_a_later_account(tmp_path):
    """An export of another installation names in-house workers this one does not have: their labels
    stay crowd labels under "<dataset>/<id>", which no username can be, so a later account named
    like them starts with no work."""
    from hits.services.people import create_user_with_role

    dataset = partly_labelled(tmp_path)
    crowd = published_batch(dataset, assignments=2)
    simulate_crowd(crowd, workers=2, accuracy=0.9, seed=3, prefix="crowd")
    path = tmp_path / "good.jsonl"
    exported(dataset, path)

    def stranger(record) -> None:
        for annotation in record["annotations"].values():
            for source in annotation["label_sources"].values():
                if source["kind"] == "crowd" and source["worker"] == f"crowd-{crowd.pk}-1":
                    source["worker"] = "stranger"

    other = tmp_path / "other.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        stranger(record)
    other.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    import_dataset(other, name="elsewhere", fmt="rose")
    copy = Dataset.objects.get(name="elsewhere")
    labelled = Worker.objects.filter(assignments__hit__batch__dataset=copy, provider="inhouse").distinct()
    assert set(labelled.values_list("external_id", "user")) == {
        ("elsewhere/stranger", None),
        (f"crowd-{crowd.pk}-2", Worker.objects.get(external_id=f"crowd-{crowd.pk}-2").user_id),
    }
    user = create_user_with_role(username="stranger", password="a-long-test-password", role="worker")
    assert not Worker.objects.get(user=user).assignments.exists()


def test_a_worker_the_import_makes_takes_the_files_state(tmp_path):
    """Rejected work of a worker this installation lacks comes back rejected, with its feedback, under
    a worker blocked and excluded as the file says; a worker this installation has keeps its own state."""
    dataset = partly_labelled(tmp_path)
    crowd = published_batch(dataset, assignments=2)
    simulate_crowd(crowd, workers=2, accuracy=0.9, seed=3, prefix="crowd")
    path = tmp_path / "good.jsonl"
    exported(dataset, path)
    known = Worker.objects.get(external_id=f"crowd-{crowd.pk}-1")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        if any("label_sources" in a for a in record["annotations"].values()):
            _rejected(record, worker="stranger", blocked=True, block_reason="Careless.", excluded=True)
            _rejected(record, worker=known.external_id, round="later", blocked=True, excluded=True)
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    import_dataset(other, name="elsewhere", fmt="rose")
    stranger = Worker.objects.get(external_id="elsewhere/stranger")
    assert (stranger.blocked, stranger.block_reason, stranger.excluded) == (True, "Careless.", True)
    assert set(stranger.assignments.values_list("status", "feedback")) == {("rejected", "No.")}
    known.refresh_from_db()
    assert not known.blocked and not known.excluded
    copy = Dataset.objects.get(name="elsewhere")
    rejected = Assignment.objects.filter(hit__batch__dataset=copy, status="rejected")
    assert rejected.filter(worker=known).exists()
    assert not counted_judgments(copy).filter(assignment__in=rejected).exists()
