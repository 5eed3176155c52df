"""A recompute reads the counted judgments and worker figures as they are now: what a
submission, a rejection or an exclusion in any round of the dataset changed since the last
recompute is in the next one (nothing is kept between recomputes)."""

from datetime import timedelta

import numpy as np
import pytest

from hits import versions
from hits.models import Assignment
from hits.services import handout, review
from hits.services.simulate import simulate_crowd
from hits.services.submission import submit_assignment
from hits.views.worker import inhouse_worker
from scoring.runs import data, services, workers

from .crowd_data import all_answers, demo_dataset, published_batch

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def two_rounds():
    """The demo dataset: its imported round, a finished crowd round and a live one with room."""
    dataset = demo_dataset()
    finished = published_batch(dataset)
    simulate_crowd(finished, workers=3, accuracy=0.9, spammers=1, seed=4)
    live = published_batch(dataset, assignments=5)
    simulate_crowd(live, workers=2, accuracy=0.8, seed=5, prefix="live")
    return dataset, finished, live


def _submit_one(make_user, name, batch, present=True):
    worker = inhouse_worker(make_user(name, "worker"))
    assignment = handout.next_assignment(worker, batch)
    submit_assignment(
        assignment_id=assignment.pk,
        worker_id=worker.pk,
        answers=all_answers(assignment, present),
        active_seconds=30,
        now=assignment.created_at + timedelta(minutes=1),  # at most the time since the handout is stored
    )
    return assignment


def _stats(dataset):
    stats = workers._assignment_stats(dataset, None)
    return {w: {**s, "seconds": sorted(s["seconds"])} for w, s in stats.items()}


def test_a_recompute_after_new_submissions_sees_them(two_rounds, make_user):
    dataset, _, live = two_rounds
    first = services.compute_scores(dataset, n_resamples=200)
    before = data.load_judgments(dataset)
    assignment = _submit_one(make_user, "newcomer", live, present=False)
    after = data.load_judgments(dataset)
    new = set(assignment.judgments.values_list("pk", flat=True))
    assert new and not new & set(before.ids.tolist()) and new <= set(after.ids.tolist())
    assert set(before.ids.tolist()) <= set(after.ids.tolist())
    run = services.compute_scores(dataset, n_resamples=200)
    assert run.inputs["judgments"] == len(after) == first.inputs["judgments"] + len(new)
    assert run.inputs["version"] == versions.current(dataset.pk) != first.inputs["version"]
    again = services.compute_scores(dataset, n_resamples=200)
    assert again.outputs == run.outputs and again.inputs == run.inputs  # the same reads, the same run


def test_worker_figures_follow_new_submissions_summed_over_rounds(two_rounds, make_user):
    dataset, finished, live = two_rounds
    _stats(dataset)
    newcomer = _submit_one(make_user, "newcomer", live).worker_id
    kept = _stats(dataset)
    assert kept[newcomer]["assignments"] == 1 and kept[newcomer]["seconds"] == [30]
    # A worker of both crowd rounds: summed over the rounds.
    veteran = Assignment.objects.filter(hit__batch=finished, status=Assignment.Status.SUBMITTED).first().worker
    assignment = handout.next_assignment(veteran, live)
    submit_assignment(assignment_id=assignment.pk, worker_id=veteran.pk, answers=all_answers(assignment))
    summed = _stats(dataset)
    counted = Assignment.objects.filter(
        worker=veteran, hit__batch__dataset=dataset, status__in=Assignment.COUNTED, confirmed=True
    )
    assert counted.filter(hit__batch=finished).exists() and counted.filter(hit__batch=live).exists()
    assert summed[veteran.pk]["assignments"] == counted.count() == kept[veteran.pk]["assignments"] + 1


def test_a_rejection_or_an_exclusion_in_a_finished_round_is_read_again(two_rounds):
    dataset, finished, live = two_rounds
    before = data.load_judgments(dataset)
    victim = Assignment.objects.filter(hit__batch=finished, status=Assignment.Status.SUBMITTED).order_by("pk").first()
    review.reject(assignment_id=victim.pk, feedback="careless")
    after = data.load_judgments(dataset)
    gone = set(victim.judgments.values_list("pk", flat=True))
    assert gone and gone <= set(before.ids.tolist()) and not gone & set(after.ids.tolist())

    other = Assignment.objects.filter(hit__batch=live, status=Assignment.Status.SUBMITTED).first().worker_id
    review.set_excluded(worker_id=other, excluded=True)
    counted = data.load_judgments(dataset)
    everyone = data.load_judgments(dataset, include_excluded=True)
    assert other not in set(counted.worker.tolist()) and other in set(everyone.worker.tolist())
    assert len(everyone) == len(after) > len(counted)
    assert np.isin(counted.ids, after.ids).all()
