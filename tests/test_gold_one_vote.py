"""One expert, one vote in the gold answers (hits.gold.known_answers).

An expert can label a summary in more than one expert round: a file with two imported rounds of
one annotator (an export of an installation where they labelled it again), as the import allows
(it refuses a worker labelling a summary twice in one round only). The gold answers count each
expert once per (summary, ACU), with their latest label, by the rule the scores apply
(hits.latest_labels.latest_per_worker; docs/scoring.md, "One worker, one value per pair"), and
so do the qualification tests, gold HITs and grades drawn from them, and the judges' expert target
(scoring.machine.data.human_labels)."""

import json

import pytest

from annotation.models import Dataset, Summary
from hits import gold
from hits.models import Batch, Judgment, Worker
from hits.services import qualification
from hits.services.dataset_import import import_dataset
from scoring.machine.data import label_sources

from .conftest import DEMO_ROSE

pytestmark = [pytest.mark.portable, pytest.mark.django_db]

SYSTEM = "abs_bart_out"


def _relabelled_file(tmp_path):
    """The demo with one summary labelled by three experts in a first round and by one of them,
    `ann`, again in a second: first against the others' majority, then with bob."""
    lines = DEMO_ROSE.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    units = len(record["reference_acus"])
    later = [int(i % 2 == 0) for i in range(units)]  # ann's second label, and bob's
    earlier = [1 - v for v in later]  # ann's first, and carol's
    labels = {"ann-first": earlier, "ann-again": later, "bob": later, "carol": earlier}
    rounds = {"ann-first": "first round", "ann-again": "second round", "bob": "first round", "carol": "first round"}
    record["annotations"][SYSTEM] = {
        "acu_labels": later,
        "annotator_labels": labels,
        "label_sources": {
            key: {"kind": "imported", "round": rounds[key], "provider": "expert", "worker": key.split("-")[0]}
            for key in labels
        },
    }
    lines[0] = json.dumps(record)
    path = tmp_path / "relabelled.rose.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, record["example_id"]


def _relabelled(tmp_path):
    """The dataset of `_relabelled_file`, its relabelled summary and ann's latest labels of it."""
    path, example = _relabelled_file(tmp_path)
    import_dataset(path, name="relabelled", fmt="rose")
    dataset = Dataset.objects.get(name="relabelled")
    summary = Summary.objects.get(document__dataset=dataset, document__external_id=example, system__name=SYSTEM)
    ann = Worker.objects.get(provider=Worker.Provider.EXPERT, external_id="relabelled/ann")
    mine = Judgment.objects.filter(assignment__worker=ann, assignment__hit__summary=summary)
    acus = summary.document.reference.acus.count()
    # it happens: two expert rounds hold ann's two labels of every pair, the second round's later
    assert mine.count() == 2 * acus
    first = dict(mine.filter(assignment__hit__batch__name="first round").values_list("acu_id", "pk"))
    again = dict(mine.filter(assignment__hit__batch__name="second round").values_list("acu_id", "present"))
    latest = dict(mine.filter(assignment__hit__batch__name="second round").values_list("acu_id", "pk"))
    assert Batch.objects.get(dataset=dataset, name="second round").kind == Batch.Kind.IMPORTED
    assert all(latest[a] > first[a] for a in first) and set(again.values()) == {True, False}
    return dataset, summary, again


def test_an_expert_who_labelled_a_summary_in_two_rounds_is_one_vote_in_the_gold(tmp_path):
    dataset, summary, again = _relabelled(tmp_path)
    # ann (latest) and bob against carol: 2 of 3 on every ACU. Counted twice, ann made it 2 of 4,
    # a tie, and every ACU not present.
    assert gold.known_answers(dataset)[summary.pk] == again
    assert gold.known_answers(dataset, [summary.pk]) == {summary.pk: again}

    # The qualification test drawn from it asks for those answers, and grades by them.
    other = next(s for s, sheet in gold.known_answers(dataset).items() if s != summary.pk and any(sheet.values()))
    test = qualification.build_test(dataset=dataset, name="q", items=2, pool=2, summary_ids=[summary.pk, other], seed=1)
    item = test.items.get(summary=summary)
    assert item.answers == {str(a): v for a, v in again.items()}
    answered = {qualification.answer_key(item.pk, a): v for a, v in again.items()}
    assert qualification.grade([item], answered).score == 1.0


def test_the_judges_expert_target_counts_the_expert_once_too(tmp_path):
    dataset, summary, again = _relabelled(tmp_path)
    expert = label_sources(dataset)["expert"]
    assert {acu: expert[(summary.pk, acu)] for acu in again} == again
