"""One worker, one value per (summary, ACU) when rounds are pooled ("All judgments").

Within a round the handout never gives a worker a summary twice (hits.services.handout._eligible,
pinned by tests/test_handout.py and tests/test_allocation_pairs_app.py); nothing keeps a worker from
the same summary in another batch of the dataset. "All judgments" then holds two judgments of that
worker on each of its (summary, ACU) pairs, and RoSE's definitions (shared/design/scoring.md: the
majority of the workers who judged it; alpha with workers as coders) count the worker's latest
one only (hits.latest_labels.latest_per_worker, applied by scoring.runs.data.load_judgments).
"""

import csv
import json

import krippendorff
import numpy as np
import pytest

from annotation.models import Dataset, Summary
from hits.models import Batch, Judgment
from hits.services import handout
from hits.services.batches import publish_batch
from hits.services.dataset_import import import_dataset
from hits.services.submission import submit_assignment
from scoring.results.exports.rose import rose_lines
from scoring.results.exports.tables import iter_judgments_csv
from scoring.runs.data import load_judgments
from scoring.runs.services import compute_scores

from .crowd_data import batch_of, demo_dataset
from .test_handout import make_workers

pytestmark = pytest.mark.portable


def _one_summary_batch(dataset, summary, assignments: int, name: str):
    """A published in-house batch of one HIT: the summary's (through the services)."""
    batch = batch_of(
        dataset,
        name=name,
        assignments=assignments,
        systems=[summary.system],
        references=[summary.document.reference],
    )
    assert list(batch.hits.values_list("summary_id", flat=True)) == [summary.pk]
    return publish_batch(batch)


def _work(worker, batch, answers: dict[int, bool]) -> None:
    assignment = handout.next_assignment(worker, batch)
    submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers={str(a): p for a, p in answers.items()})


def _pooled_setup():
    """The imported expert labels of one summary (`expert`), then worker A (against the expert on every
    ACU) and worker B (with it) in a first batch, and A again, as before, in a second batch."""
    dataset = demo_dataset()
    summary = Summary.objects.filter(document__dataset=dataset).order_by("pk").first()
    acus = list(summary.document.reference.acus.order_by("pk").values_list("pk", flat=True))
    expert = dict(
        Judgment.objects.filter(assignment__hit__summary=summary, acu_id__in=acus).values_list("acu_id", "present")
    )
    assert set(expert) == set(acus) and any(expert.values()), "the demo's expert labels of the summary"
    a, b = make_workers(2)
    first = _one_summary_batch(dataset, summary, assignments=2, name="first")
    _work(a, first, {acu: not expert[acu] for acu in acus})
    _work(b, first, dict(expert))
    second = _one_summary_batch(dataset, summary, assignments=1, name="second")
    _work(a, second, {acu: not expert[acu] for acu in acus})  # the handout allows it: another batch
    return dataset, summary, acus, expert, (a, b), (first, second)


@pytest.mark.django_db
def test_a_worker_in_two_rounds_is_one_coder_and_one_vote_in_all_judgments():
    dataset, summary, acus, expert, (a, b), (first, second) = _pooled_setup()
    # it happens: the pooled scope holds A's two judgments of every pair
    assert Judgment.objects.filter(assignment__worker=a, assignment__hit__summary=summary).count() == 2 * len(acus)

    run = compute_scores(dataset, n_resamples=200)
    # the majority of three workers (expert, A, B: the expert's label) on every pair, where A's second
    # vote made it a tie (not present) on every ACU the expert found present
    score = run.detail.summaries["acu"][run.detail.summaries["ids"].index(summary.pk)]
    assert score == pytest.approx(sum(expert.values()) / len(acus)) and score > 0
    # the alphas: three coders (expert, A, B), one value each per unit; the other summaries have one
    # coder (the expert) and are not pairable
    reliability = np.array([[expert[x] for x in acus], [not expert[x] for x in acus], [expert[x] for x in acus]])
    assert run.outputs["alpha"]["acu_level"] == pytest.approx(
        krippendorff.alpha(reliability_data=reliability.astype(float), level_of_measurement="nominal"), abs=1e-9
    )
    scores = reliability.sum(axis=1, keepdims=True) / len(acus)
    assert run.outputs["alpha"]["summary_level"] == pytest.approx(
        krippendorff.alpha(reliability_data=scores, level_of_measurement="interval"), abs=1e-9
    )
    assert run.outputs["alpha_units"] == {"acu_level": len(acus), "summary_level": 1}
    # the loader gives the rounds one judgment per worker and pair, A's latest
    pooled = load_judgments(dataset)
    mine = pooled.summary == summary.pk
    assert sorted(zip(pooled.worker[mine].tolist(), pooled.acu[mine].tolist(), strict=True)) == sorted(
        (w, acu) for w in (a.pk, b.pk, expert_worker(summary)) for acu in acus
    ), "one judgment per worker and pair"
    latest = Judgment.objects.filter(assignment__worker=a, assignment__hit__batch=second)
    assert set(latest.values_list("pk", flat=True)) <= set(pooled.ids.tolist())  # A's latest judgments

    # each round alone is as before: A's one judgment there
    assert compute_scores(dataset, second, n_resamples=200).outputs["counts"]["judgments"] == len(acus)


@pytest.mark.django_db
def test_the_exports_of_all_judgments_give_the_worker_one_label_the_scores_read():
    dataset, summary, acus, expert, (a, _), _ = _pooled_setup()
    run = compute_scores(dataset, n_resamples=200)
    score = run.detail.summaries["acu"][run.detail.summaries["ids"].index(summary.pk)]
    document = summary.document.external_id
    line = next(json.loads(x) for x in rose_lines(dataset) if json.loads(x)["example_id"] == document)
    exported = line["annotations"][summary.system.name]
    assert exported["acu"] == pytest.approx(score)
    assert sum(exported["acu_labels"]) == sum(expert.values())  # the expert's, as the scores read them
    name = f"{a.provider}:{a.external_id}"
    rows = [r for r in csv.reader("".join(iter_judgments_csv(dataset)).splitlines()) if r[0] == name]
    assert len(rows) == len(acus)  # one row per ACU: A's latest label
    assert sorted(int(r[3]) for r in rows) == list(range(len(acus)))


def expert_worker(summary) -> int:
    """The worker of the summary's imported expert labels."""
    return (
        Judgment.objects.filter(assignment__hit__summary=summary, assignment__hit__batch__kind="imported")
        .values_list("assignment__worker_id", flat=True)
        .first()
    )


@pytest.mark.django_db
def test_the_export_names_the_round_of_the_label_it_gives():
    dataset, summary, _, _, (a, _), (_, second) = _pooled_setup()
    document = summary.document.external_id
    line = next(json.loads(x) for x in rose_lines(dataset) if json.loads(x)["example_id"] == document)
    sources = line["annotations"][summary.system.name]["label_sources"]
    assert sources[f"{a.provider}:{a.external_id}"]["round"] == second.name  # A's latest labels' round


@pytest.mark.django_db
def test_an_imported_crowd_round_and_a_crowd_batch_count_a_worker_known_here_once(tmp_path):
    """An export imported under another name keeps its crowd workers known here (an imported crowd
    round); the same worker then takes the summary in a crowd batch of the copy."""
    dataset = demo_dataset()
    summary = Summary.objects.filter(document__dataset=dataset).order_by("pk").first()
    acus = list(summary.document.reference.acus.order_by("pk").values_list("pk", flat=True))
    (a,) = make_workers(1)
    _work(a, _one_summary_batch(dataset, summary, assignments=1, name="crowd"), dict.fromkeys(acus, True))
    path = tmp_path / "demo.rose.jsonl"
    path.write_text("".join(line + "\n" for line in rose_lines(dataset)))
    import_dataset(path, name="copy", fmt="rose")
    copy = Dataset.objects.get(name="copy")
    assert copy.batches.filter(kind=Batch.Kind.IMPORTED_CROWD).exists()
    twin = Summary.objects.get(
        document__dataset=copy, document__external_id=summary.document.external_id, system__name=summary.system.name
    )
    twin_acus = list(twin.document.reference.acus.values_list("pk", flat=True))
    _work(a, _one_summary_batch(copy, twin, assignments=1, name="again"), dict.fromkeys(twin_acus, False))
    # it happens: the copy's rounds hold A's two judgments of every pair of the summary
    assert Judgment.objects.filter(assignment__worker=a, assignment__hit__summary=twin).count() == 2 * len(acus)
    pooled = load_judgments(copy)
    mine = (pooled.summary == twin.pk) & (pooled.worker == a.pk)
    assert len(twin_acus) == len(acus) and mine.sum() == len(acus)
    assert not pooled.present[mine].any()  # A's latest: the crowd batch's "absent"
