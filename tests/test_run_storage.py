"""A scoring run is stored once: its outputs without its large parts (per-summary values, workers
table, scatter sample), those in their own row (ScoringRunDetail); the migration moves the parts of
runs stored before and drops the copies."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from scoring.models import ScoringRun, ScoringRunDetail
from scoring.results import dashboard
from scoring.runs import selectors
from scoring.runs.services import compute_scores

from .crowd_data import simulated_round

BEFORE = [("scoring", "0006_scoringrun_pages")]
AFTER = [("scoring", "0008_scoringrun_stored_once")]


@pytest.mark.django_db
def test_a_run_stores_its_large_parts_beside_its_outputs():
    dataset, batch = simulated_round()
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    run.refresh_from_db()
    assert {"systems", "alpha", "counts"} <= set(run.outputs)
    assert not set(run.outputs) & {"summaries", "workers", "length_scatter"}
    workers, scatter = selectors.run_part(run, "workers"), selectors.run_part(run, "length_scatter")
    assert len(workers["rows"]) == run.outputs["counts"]["workers"] and scatter["words"]
    # A page's parts in one read: small ones from the outputs, large ones from the detail row.
    read = selectors.latest_run(dataset, batch, parts=("alpha", "workers", "length_scatter"))
    assert read.outputs == {"alpha": run.outputs["alpha"], "workers": workers, "length_scatter": scatter}
    summaries = selectors.run_summaries(run)
    assert len(summaries["ids"]) == run.outputs["counts"]["summaries"] > 0
    assert len(summaries["acu"]) == len(summaries["normalized_acu"]) == len(summaries["words"]) == len(summaries["ids"])
    assert selectors.run_summaries(ScoringRun.objects.create(dataset=dataset, status="done")) == {}
    # The overview's alpha, read by a JSON key lookup of the latest run.
    assert selectors.latest_run(dataset, batch, parts=("alpha",)).outputs == {"alpha": run.outputs["alpha"]}
    assert dashboard.alpha_trend(dataset, batch)[-1]["acu_level"] == run.outputs["alpha"]["acu_level"]


@pytest.mark.django_db
def test_the_latest_run_skips_dawid_skene_runs_and_others_scopes():
    dataset, batch = simulated_round()
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    newer = ScoringRun.objects.create(
        dataset=dataset, batch=batch, status="done", parameters={"aggregation": "dawid-skene"}, outputs={"x": 1}
    )
    assert newer.started_at > run.started_at
    assert selectors.latest_run(dataset, batch).pk == run.pk
    assert selectors.latest_run(dataset, None) is None
    failed = ScoringRun.objects.create(dataset=dataset, batch=batch, status="failed")
    assert selectors.latest_run(dataset, batch, parts=("counts",)).pk == run.pk != failed.pk
    trend = dashboard.alpha_trend(dataset, batch)
    assert [t["run"] for t in trend] == [run.pk, newer.pk] and trend[1]["acu_level"] is None


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_the_large_parts_to_their_own_row_and_back():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps
        dataset = old.get_model("annotation", "Dataset").objects.create(name="stored before")
        summaries = {"ids": list(range(3000)), "acu": [0.5] * 3000, "normalized_acu": [0.25] * 3000}
        summaries["words"] = [i % 80 for i in range(3000)]
        workers = {"rows": [{"worker": "w1", "alpha": 0.5}], "flagged": 0}
        outputs = {"alpha": {"acu_level": 0.7, "summary_level": 0.6}, "counts": {"summaries": 3000}}
        OldRun = old.get_model("scoring", "ScoringRun")
        kept = OldRun.objects.create(
            dataset_id=dataset.pk,
            status="done",
            outputs={**outputs, "summaries": summaries, "workers": workers},
            alpha=outputs["alpha"],
            digest=outputs,
            systems_page="{}",
        )
        power = OldRun.objects.create(dataset_id=dataset.pk, kind="power", status="done", outputs={"sizes": [1]})

        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        run = ScoringRun.objects.get(pk=kept.pk)
        detail = ScoringRunDetail.objects.get(run=run)
        assert detail.summaries == summaries and detail.workers == workers
        scatter = detail.length_scatter  # stored before the part: sampled now, every 2nd
        assert run.outputs == outputs and scatter["words"] == summaries["words"][::2]
        assert scatter["acu"] == [0.5] * 1500
        assert ScoringRun.objects.get(pk=power.pk).outputs == {"sizes": [1]}
        assert not ScoringRunDetail.objects.filter(run_id=power.pk).exists()
        columns = {
            c.name for c in connection.introspection.get_table_description(connection.cursor(), "scoring_scoringrun")
        }
        assert not columns & {"alpha", "digest", "systems_page", "workers_page"}

        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        back = executor.loader.project_state(BEFORE).apps.get_model("scoring", "ScoringRun").objects.get(pk=kept.pk)
        parts = {"workers": workers, "length_scatter": scatter}
        assert back.outputs == {**outputs, **parts, "summaries": summaries}
        assert back.alpha == outputs["alpha"] and back.digest == {**outputs, **parts}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
