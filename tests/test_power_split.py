"""Power analysis split into parts for several worker processes: the same result as the
single-process run for the same seed, whatever order the parts finish in."""

import numpy as np
import pytest

from hits.services.simulate import simulate_crowd
from scoring import statistics
from scoring.models import ScoringRun
from scoring.stats import power

from .crowd_data import published_batch

PARAMS = {"sizes": [10, 30, 100], "n_trials": 30, "n_resamples": 1000, "seed": 4}


def test_parts_combined_equal_the_single_run():
    rng = np.random.default_rng(1)
    scores = rng.random((60, 5)) * 0.3 + np.linspace(0, 0.1, 5)
    sizes = (10, 30, 100)
    single = power.power_analysis(scores, sizes=sizes, n_trials=50, n_resamples=2000, rng=7)
    plan = power.power_plan(sizes, 50, 10, columns_per_part=20_000)
    assert len(plan) > len(sizes)  # the largest size is split too
    parts = {p: power.power_part(scores, sizes, p, n_trials=50, n_resamples=2000, seed=7) for p in reversed(plan)}
    split = power.combine_parts(scores, sizes, parts, n_trials=50)
    assert np.array_equal(single.power, split.power)
    assert np.array_equal(single.bucket_power, split.bucket_power)
    assert np.array_equal(single.resamples, split.resamples)
    with pytest.raises(ValueError, match="columns computed"):
        power.combine_parts(scores, sizes, dict(list(parts.items())[1:]), n_trials=50)


@pytest.mark.django_db
def test_split_run_stores_what_the_single_run_stores():
    batch = published_batch(assignments=3)
    simulate_crowd(batch, workers=3, accuracy=0.85, seed=3)
    single = statistics.run_power(statistics.start(batch.dataset, ScoringRun.Kind.POWER, PARAMS, batch=batch).pk)
    assert single.status == "done", single.error

    run = statistics.start(batch.dataset, ScoringRun.Kind.POWER, PARAMS, batch=batch)
    plan = statistics.plan_power(run.pk, cells_per_part=5_000)
    assert len(plan) > len(PARAMS["sizes"])
    finished = [statistics.run_power_part(run.pk, part) for part in reversed(plan)]
    assert finished == [False] * (len(plan) - 1) + [True]
    run.refresh_from_db()
    assert run.status == "done" and run.progress == 1.0
    assert run.outputs == single.outputs
    assert "matrix" not in run.inputs  # the working copy is dropped once combined
    assert statistics.run_power_part(run.pk, plan[0]) is False  # a redelivered part changes nothing
