"""Power analysis split into parts for several worker processes: the same result as the
single-process run for the same seed, whatever the partition and the order the parts finish in;
and the planner that balances the parts by their estimated running time."""

import numpy as np
import pytest

from hits.services.simulate import simulate_crowd
from scoring import tasks
from scoring.models import ScoringRun
from scoring.runs import statistics
from scoring.stats import bootstrap, power

from .crowd_data import published_batch

pytestmark = pytest.mark.slow

PARAMS = {"sizes": [10, 30, 100], "n_trials": 30, "n_resamples": 1000, "seed": 4}


def small_scores(m=5, n_docs=60):
    rng = np.random.default_rng(1)
    return rng.random((n_docs, m)) * 0.3 + np.linspace(0, 0.1, m)


def rose_like_scores():
    """The synthetic scores of bench/power_split_bench.py: 2,500 documents x 12 systems."""
    rng = np.random.default_rng(1)
    return np.clip(rng.normal(np.linspace(0.30, 0.40, 12), 0.15, (2500, 12)), 0, 1)


def run_parts(scores, sizes, plan, **kwargs):
    return {
        part: power.power_part(scores, sizes, part[0], plan.columns(part), **kwargs) for part in reversed(plan.parts)
    }


def test_parts_of_the_plan_combined_equal_the_single_run():
    scores, sizes = small_scores(), (10, 30, 100)
    single = power.power_analysis(scores, sizes=sizes, n_trials=50, n_resamples=2000, rng=7)
    plan = power.power_plan(scores, sizes, 50, 2000, workers=4, seed=7)
    assert plan.labels  # some size is split
    parts = run_parts(scores, sizes, plan, n_trials=50, n_resamples=2000, seed=7)
    split = power.combine_parts(scores, sizes, plan, parts, n_trials=50)
    for field in ("power", "bucket_power", "resamples", "pairs", "differences", "buckets"):
        assert np.array_equal(getattr(single, field), getattr(split, field)), field
    with pytest.raises(ValueError, match="columns computed"):
        power.combine_parts(scores, sizes, plan, dict(list(parts.items())[1:]), n_trials=50)


def test_any_partition_of_the_columns_gives_the_single_run():
    """A column's decision does not depend on the columns tested with it."""
    scores, sizes = small_scores(m=6), (20, 80)
    single = power.power_analysis(scores, sizes=sizes, n_trials=40, n_resamples=3000, rng=3)
    rng = np.random.default_rng(0)
    labels = {i: rng.integers(0, 3, 40 * 15).astype(np.uint8) for i in range(2)}
    plan = power.PowerPlan([(i, j) for i in range(2) for j in range(3)], [1.0] * 6, labels)
    split = power.combine_parts(
        scores, sizes, plan, run_parts(scores, sizes, plan, n_trials=40, n_resamples=3000, seed=3), n_trials=40
    )
    assert np.array_equal(single.power, split.power) and np.array_equal(single.resamples, split.resamples)
    assert 0.05 < single.power.mean() < 0.95  # informative: decisions both ways


def test_settle_estimate_predicts_each_columns_running_time():
    scores, n, trials, resamples = small_scores(m=6, n_docs=200), 150, 60, 20_000
    _, _, pairs, diffs = power._oriented(scores)
    docs = power._trial_docs(len(diffs), n, trials, 5, 0)
    estimate = power.settle_estimate(diffs, docs, resamples)
    boot = power._size_rngs(5, 0)[1]
    actual = bootstrap.bootstrap_test(
        lambda c: diffs[docs[:, c // len(pairs)], c % len(pairs)], trials * len(pairs), n, resamples, rng=boot
    ).used
    assert abs(estimate.sum() / actual.sum() - 1) < 0.15
    assert np.corrcoef(np.log(estimate), np.log(actual))[0, 1] > 0.8
    grid, runs = power._settle_curve(n, resamples, 0.05, 1e-6)
    assert runs[np.argmin(abs(grid - 0.05))] == resamples and runs[0] < resamples / 10


def test_size_parts_put_the_long_running_columns_together_and_balance_the_cost():
    rng = np.random.default_rng(2)
    need = rng.choice([600.0, 900.0, 1500.0], 20_000)
    need[rng.choice(20_000, 50, replace=False)] = 100_000  # a few columns near alpha run to the end
    labels, costs = power._size_parts(10_000, need, 100_000, 2)
    assert labels is not None and sorted(set(labels.tolist())) == [0, 1]
    assert (labels[need == 100_000] == 0).all() and need[labels == 1].max() <= 1500
    assert max(costs) / min(costs) < 1.02
    whole_labels, whole = power._size_parts(10_000, need, 100_000, 1)
    assert whole_labels is None and len(whole) == 1
    assert sum(costs) < whole[0] * 1.01  # the second part does not pay another whole pass


def test_rose_defaults_split_only_the_largest_size_costliest_first():
    sizes = power.ROSE_SIZES
    plan = power.power_plan(rose_like_scores(), sizes, 1000, 100_000, workers=2)
    assert sorted(plan.parts[:2]) == [(8, 0), (8, 1)]  # n = 10,000 in two
    assert plan.parts[2:] == [(i, 0) for i in range(7, -1, -1)]  # every other size whole, largest first
    assert plan.costs == sorted(plan.costs, reverse=True)
    assert list(plan.labels) == [8] and np.bincount(plan.labels[8]).sum() == 66_000
    assert power.makespan(plan.costs, 2) < 0.51 * sum(plan.costs)
    one = power.power_plan(rose_like_scores(), sizes, 1000, 100_000, workers=1)
    assert one.parts == [(i, 0) for i in range(8, -1, -1)] and not one.labels


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("sizes", [(10, 50, 100, 200, 300, 500, 700, 1000, 10000), (100,), (40, 40, 40), (5, 2000)])
def test_plan_covers_every_column_once_and_only_splits_to_finish_sooner(workers, sizes):
    scores, n_trials, n_resamples = small_scores(), 30, 5000
    plan = power.power_plan(scores, sizes, n_trials, n_resamples, workers)
    assert plan.costs == sorted(plan.costs, reverse=True) and len(plan.costs) == len(plan.parts)
    for i in range(len(sizes)):
        numbers = sorted(j for index, j in plan.parts if index == i)
        assert numbers == list(range(len(numbers)))
        if len(numbers) == 1:
            assert i not in plan.labels and plan.columns((i, 0)) is None
        else:
            covered = np.concatenate([plan.columns((i, j)) for j in numbers])
            assert sorted(covered.tolist()) == list(range(n_trials * 10))
    whole = power.power_plan(scores, sizes, n_trials, n_resamples, workers=1)
    assert len(whole.parts) == len(sizes)
    assert power.makespan(plan.costs, workers) <= power.makespan(whole.costs, workers)


def test_makespan_gives_each_part_to_the_first_free_process():
    assert power.makespan([5, 4, 3, 3, 1], 2) == 8  # 5+3 / 4+3+1
    assert power.makespan([5, 4, 3], 1) == 12
    assert power.makespan([5, 4, 3], 4) == 5
    assert power.makespan([], 2) == 0


@pytest.mark.django_db
def test_split_run_stores_what_the_single_run_stores():
    batch = published_batch(assignments=3)
    simulate_crowd(batch, workers=3, accuracy=0.85, seed=3)
    single = statistics.run_power(statistics.start(batch.dataset, ScoringRun.Kind.POWER, PARAMS, batch=batch).pk)
    assert single.status == "done", single.error

    run = statistics.start(batch.dataset, ScoringRun.Kind.POWER, PARAMS, batch=batch)
    plan = statistics.plan_power(run.pk, workers=4)
    assert len(plan) > len(PARAMS["sizes"])
    run.refresh_from_db()
    costs = dict(zip(map(tuple, run.inputs["plan"]), run.inputs["costs"], strict=True))
    assert statistics.run_power_part(run.pk, [len(PARAMS["sizes"]), 0]) is False  # not a part of the plan
    finished = []
    for part in reversed(plan):
        finished.append(statistics.run_power_part(run.pk, part))
        if not finished[-1]:
            run.refresh_from_db()  # progress: the estimated share of the work done
            assert run.progress == pytest.approx(
                sum(costs[tuple(q)] for q in plan[plan.index(part) :]) / sum(costs.values())
            )
    assert finished == [False] * (len(plan) - 1) + [True]
    run.refresh_from_db()
    assert run.status == "done" and run.progress == 1.0
    assert run.outputs == single.outputs
    assert "matrix" not in run.inputs  # the working copy is dropped once combined
    assert statistics.run_power_part(run.pk, plan[0]) is False  # a redelivered part changes nothing


@pytest.mark.django_db
def test_the_task_dispatches_the_parts_that_finish_the_run(eager_celery):
    batch = published_batch(assignments=3)
    simulate_crowd(batch, workers=3, accuracy=0.85, seed=3)
    single = statistics.run_power(statistics.start(batch.dataset, ScoringRun.Kind.POWER, PARAMS, batch=batch).pk)
    run = statistics.start(batch.dataset, ScoringRun.Kind.POWER, PARAMS, batch=batch)
    # the one dispatch runs each part here (eager, as in the embedded mode); a broker queues them
    tasks.run_power_analysis.apply(args=[run.pk]).get()
    run.refresh_from_db()
    assert run.status == "done" and run.inputs["parts"] >= len(PARAMS["sizes"])
    assert run.outputs == single.outputs


@pytest.mark.django_db
def test_a_run_without_judgments_fails_with_its_reason_and_queues_nothing():
    batch = published_batch(assignments=3)
    run = statistics.start(batch.dataset, ScoringRun.Kind.POWER, PARAMS, batch=batch)
    assert statistics.plan_power(run.pk) == []
    run.refresh_from_db()
    assert run.status == "failed" and "no judgments" in run.error
