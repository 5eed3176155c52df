"""The database builder of bench/overview_bench.py and bench/recompute_bench.py (bench/dashboard_data.py)."""

import json
import sys

import pytest
from django.db import connection

from annotation.models import Dataset
from hits.models import Assignment
from hits.services.dataset_import import import_dataset
from scoring.runs.selectors import latest_run
from scoring.runs.services import compute_scores

from .conftest import PROJECT, REALSUMM_ROSE
from .crowd_data import demo_dataset

sys.path.insert(0, str(PROJECT / "bench"))
import dashboard_data

pytestmark = pytest.mark.django_db


def test_realsumm_copies_have_new_ids_and_three_annotators(tmp_path):
    path = dashboard_data.generate_realsumm_copy(tmp_path / "copy.jsonl", REALSUMM_ROSE, 3)
    records = [json.loads(line) for line in path.open()]
    originals = [json.loads(line) for line in REALSUMM_ROSE.open()]
    assert len(records) == len(originals) == 100
    assert all(r["example_id"] == f"copy3-{o['example_id']}" for r, o in zip(records, originals, strict=True))
    for annotation in records[0]["annotations"].values():
        labels = annotation["annotator_labels"]
        assert len(labels) == 3
        assert annotation["acu_labels"] == [int(sum(col) >= 2) for col in zip(*labels.values(), strict=True)]
    small = tmp_path / "small.jsonl"
    small.write_text("".join(json.dumps(r) + "\n" for r in records[:2]))
    summary = import_dataset(small, name="copy", fmt="rose")
    assignments = Assignment.objects.filter(hit__batch_id=summary.batch_id)
    assert 3 <= summary.annotators <= 30 and assignments.count() == 3 * summary.summaries


def test_the_importers_analyze_can_be_left_out():
    seen = []

    def record(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with dashboard_data.without_analyze(), connection.execute_wrapper(record), connection.cursor() as cursor:
        cursor.execute("ANALYZE hits_hit")
        cursor.execute("SELECT 1")
    assert seen == ["SELECT 1"]


def test_history_copies_are_older_and_keep_the_alphas():
    dataset = demo_dataset()
    run = compute_scores(dataset, n_resamples=20, trigger="test")
    dashboard_data.add_history(run, 3)
    runs = list(dataset.scoring_runs.order_by("-started_at"))
    assert len(runs) == 4 and runs[0].pk == run.pk and latest_run(dataset).pk == run.pk
    assert all(r.outputs["alpha"] == run.outputs["alpha"] and r.outputs == run.outputs for r in runs)
    assert Dataset.objects.count() == 1
