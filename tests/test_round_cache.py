"""A dataset's recompute reads from the database only the rounds that changed since the
process last read them (scoring.runs.round_cache, issue 14), and computes what a full read gives."""

import numpy as np
import pytest

from hits import versions
from hits.models import Assignment
from hits.services import handout, review
from hits.services.simulate import simulate_crowd
from hits.services.submission import submit_assignment
from hits.views.worker import inhouse_worker
from scoring.runs import data, round_cache, scoped, services, workers

from .crowd_data import all_answers, demo_dataset, published_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_rounds():
    """The demo dataset: its imported round, a finished crowd round and a live one with room."""
    round_cache.clear()
    dataset = demo_dataset()
    finished = published_batch(dataset)
    simulate_crowd(finished, workers=3, accuracy=0.9, spammers=1, seed=4)
    live = published_batch(dataset, assignments=5)
    simulate_crowd(live, workers=2, accuracy=0.8, seed=5, prefix="live")
    yield dataset, finished, live
    round_cache.clear()


@pytest.fixture
def reads(monkeypatch):
    """The round ids each read of judgments and of worker figures asked the database for."""
    seen = {"judgments": [], "stats": []}
    rows_by_round, stats_by_round = data._rows_by_round, scoped.assignment_stats_by_round

    def judgments(dataset_id, batch_ids):
        seen["judgments"].append(list(batch_ids))
        return rows_by_round(dataset_id, batch_ids)

    def stats(dataset_id, batch_ids):
        seen["stats"].append(list(batch_ids))
        return stats_by_round(dataset_id, batch_ids)

    monkeypatch.setattr(data, "_rows_by_round", judgments)
    monkeypatch.setattr(scoped, "assignment_stats_by_round", stats)
    return seen


def _full_read(dataset_id: int) -> np.ndarray:
    """Every counted judgment of the dataset in one query, without the cache, by (round, id)."""
    sql, params = scoped.judgments_query(dataset_id)
    rows = data._copy_ints(sql, params).reshape(-1, 5)
    return rows[np.argsort(rows[:, 0], kind="stable")]


def _as_set(rows: np.ndarray) -> set[tuple]:
    return {tuple(r) for r in rows.tolist()}


def _submit_one(make_user, name, batch, present=True):
    worker = inhouse_worker(make_user(name, "worker"))
    assignment = handout.next_assignment(worker, batch)
    submit_assignment(
        assignment_id=assignment.pk, worker_id=worker.pk, answers=all_answers(assignment, present), active_seconds=30
    )
    return assignment


def _stats(dataset):
    stats = workers._assignment_stats(dataset, None)
    return {w: {**s, "seconds": sorted(s["seconds"])} for w, s in stats.items()}


def test_a_submission_makes_the_next_read_fetch_only_its_round(two_rounds, reads, make_user):
    dataset, finished, live = two_rounds
    rounds = sorted(dataset.batches.values_list("pk", flat=True))
    assert len(rounds) == 3

    first = data.dataset_judgment_rows(dataset.pk)
    assert reads["judgments"] == [rounds]  # nothing kept yet: every round, in one query
    assert _as_set(first) == _as_set(_full_read(dataset.pk))

    again = data.dataset_judgment_rows(dataset.pk)
    assert reads["judgments"] == [rounds]  # no version moved: nothing read
    assert np.array_equal(again, first)

    _submit_one(make_user, "newcomer", live, present=False)
    after = data.dataset_judgment_rows(dataset.pk)
    assert reads["judgments"][1:] == [[live.pk]]
    assert len(after) > len(first) and _as_set(after) == _as_set(_full_read(dataset.pk))

    round_cache.clear()
    assert np.array_equal(data.dataset_judgment_rows(dataset.pk), after)  # kept rows in the order a full read gives


def test_worker_figures_from_kept_rounds_equal_one_query_over_the_dataset(two_rounds, reads, make_user):
    dataset, finished, live = two_rounds
    _stats(dataset)
    newcomer = _submit_one(make_user, "newcomer", live).worker_id
    kept = _stats(dataset)
    assert reads["stats"][1:] == [[live.pk]]

    whole = {
        w: {"assignments": n, "reward": r, "gold_correct": g, "gold_total": t, "seconds": sorted(s or [])}
        for w, n, r, g, t, s in scoped.assignment_stats(dataset.pk)
    }
    assert kept == whole
    assert kept[newcomer]["assignments"] == 1 and kept[newcomer]["seconds"] == [30]
    # A worker of both crowd rounds: summed over the rounds.
    veteran = Assignment.objects.filter(hit__batch=finished, status=Assignment.Status.SUBMITTED).first().worker
    assignment = handout.next_assignment(veteran, live)
    submit_assignment(assignment_id=assignment.pk, worker_id=veteran.pk, answers=all_answers(assignment))
    summed = _stats(dataset)
    assert reads["stats"][2:] == [[live.pk]]
    counted = Assignment.objects.filter(
        worker=veteran, hit__batch__dataset=dataset, status__in=Assignment.COUNTED, confirmed=True
    )
    assert counted.filter(hit__batch=finished).exists() and counted.filter(hit__batch=live).exists()
    assert summed[veteran.pk]["assignments"] == counted.count() == kept[veteran.pk]["assignments"] + 1


def test_a_rejection_or_an_exclusion_in_a_finished_round_is_read_again(two_rounds, reads):
    dataset, finished, live = two_rounds
    before = data.load_judgments(dataset)
    victim = Assignment.objects.filter(hit__batch=finished, status=Assignment.Status.SUBMITTED).order_by("pk").first()
    review.reject(assignment_id=victim.pk, feedback="careless")
    after = data.load_judgments(dataset)
    assert reads["judgments"][1:] == [[finished.pk]]
    gone = set(victim.judgments.values_list("pk", flat=True))
    assert gone and gone <= set(before.ids.tolist()) and not gone & set(after.ids.tolist())

    other = Assignment.objects.filter(hit__batch=live, status=Assignment.Status.SUBMITTED).first().worker_id
    review.set_excluded(worker_id=other, excluded=True)
    counted = data.load_judgments(dataset)
    everyone = data.load_judgments(dataset, include_excluded=True)
    assert other not in set(counted.worker.tolist()) and other in set(everyone.worker.tolist())
    round_cache.clear()
    fresh = data.load_judgments(dataset)
    assert np.array_equal(fresh.ids, counted.ids) and np.array_equal(fresh.present, counted.present)


def test_a_run_from_kept_rounds_equals_a_run_that_read_everything(two_rounds, make_user):
    dataset, _, live = two_rounds
    services.compute_scores(dataset, n_resamples=200)  # fills the cache
    _submit_one(make_user, "newcomer", live, present=False)
    kept = services.compute_scores(dataset, n_resamples=200)
    round_cache.clear()
    full = services.compute_scores(dataset, n_resamples=200)
    assert kept.outputs == full.outputs
    assert kept.inputs == full.inputs and kept.inputs["version"] == versions.current(dataset.pk)


def test_the_limit_drops_the_least_recently_used_and_zero_keeps_nothing(two_rounds, reads, settings):
    dataset, finished, live = two_rounds
    imported = dataset.batches.get(kind="imported")
    sizes = {r: len(part) for r, part in data._rows_by_round(dataset.pk, [imported.pk, finished.pk, live.pk]).items()}
    reads["judgments"].clear()
    settings.SCORING_ROUND_CACHE_ROWS = sizes[imported.pk] + sizes[finished.pk] + 3  # not all three rounds
    whole = _full_read(dataset.pk)
    for _ in range(2):
        assert _as_set(data.dataset_judgment_rows(dataset.pk)) == _as_set(whole)
    assert round_cache.kept_rows() <= settings.SCORING_ROUND_CACHE_ROWS
    assert reads["judgments"][0] == sorted(sizes) and reads["judgments"][1]  # some round had to be read again

    round_cache.clear()
    reads["judgments"].clear()
    settings.SCORING_ROUND_CACHE_ROWS = 0
    for _ in range(2):
        assert _as_set(data.dataset_judgment_rows(dataset.pk)) == _as_set(whole)
    assert round_cache.kept_rows() == 0 and reads["judgments"] == [sorted(sizes)] * 2


def test_rounds_of_another_database_are_not_taken_for_these(two_rounds, reads, monkeypatch):
    dataset, *_ = two_rounds
    data.dataset_judgment_rows(dataset.pk)
    identity, current = versions.rounds(dataset.pk)
    assert identity and set(current) == set(dataset.batches.values_list("pk", flat=True))
    monkeypatch.setattr(versions, "rounds", lambda dataset_id: (identity + 1, current))
    data.dataset_judgment_rows(dataset.pk)
    assert reads["judgments"] == [sorted(current)] * 2
