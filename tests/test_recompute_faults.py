"""Recomputes converge after a lost task message, and a broker that is down never fails a
submission (issue 15, item 1). The suite runs with a broker configured, so nothing runs
in process here: the broker is replaced by a recorder that loses or refuses messages."""

from datetime import timedelta

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from config import dispatch
from hits.models import Judgment
from hits.services import handout
from hits.services.submission import task_token
from hits.views.worker import inhouse_worker
from scoring import tasks
from scoring.models import RecomputeRequest, ScoringRun
from scoring.runs import recompute

from .crowd_data import all_answers, published_batch
from .test_submission import post

pytestmark = pytest.mark.django_db


class Broker:
    """Stands in for `current_app.send_task`: loses every message, or is down."""

    def __init__(self, down=False):
        self.sent, self.down = [], down

    def __call__(self, name, args=None, countdown=None, **kwargs):
        if self.down:
            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        self.sent.append((name, tuple(args)))


def _submit(client, make_user, name, batch):
    worker = inhouse_worker(make_user(name, "worker"))
    assignment = handout.next_assignment(worker, batch)
    return post(client, task_token(assignment), {"answers": all_answers(assignment)})


def test_a_lost_task_message_is_requeued_and_the_latest_run_catches_up(
    client, make_user, monkeypatch, django_capture_on_commit_callbacks
):
    batch = published_batch()
    lost = Broker()
    monkeypatch.setattr(dispatch.current_app, "send_task", lost)
    with django_capture_on_commit_callbacks(execute=True):
        assert _submit(client, make_user, "w1", batch).status_code == 200
    # the dataset's and the round's recomputes queued ... and lost (worker killed holding them)
    assert {(batch.dataset_id, None), (batch.dataset_id, batch.pk)} <= {args for _, args in lost.sent}
    queued = len(lost.sent)
    with django_capture_on_commit_callbacks(execute=True):
        assert _submit(client, make_user, "w2", batch).status_code == 200
    assert len(lost.sent) == queued  # coalesced behind the lost ones
    assert tasks.repair_stale_recomputes.apply().get() == 0  # not expired yet

    expired = timezone.now() - timedelta(
        seconds=recompute.settings.SCORING_RECOMPUTE_DELAY + recompute.settings.SCORING_RECOMPUTE_GRACE + 1
    )
    RecomputeRequest.objects.update(queued_at=expired)
    with django_capture_on_commit_callbacks(execute=True):  # queued after the beat's commit
        assert tasks.repair_stale_recomputes.apply().get() == queued  # the beat repairs them, nobody needs to ask
    assert (recompute.RECOMPUTE_TASK, (batch.dataset_id, None)) in lost.sent[queued:]

    # This time the messages arrive: the run sees every judgment and the flags are free again.
    for _, args in lost.sent[queued:]:
        tasks.recompute_scores.apply(args=args).get()
    run = ScoringRun.objects.filter(dataset=batch.dataset, batch=None, trigger="judgments").first()
    assert run.inputs["last_judgment_id"] == Judgment.objects.order_by("-pk").values_list("pk", flat=True).first()
    assert not RecomputeRequest.objects.filter(queued=True).exists()


def test_an_expired_flag_is_requeued_by_the_next_submission_too(
    client, make_user, monkeypatch, django_capture_on_commit_callbacks
):
    batch = published_batch()
    lost = Broker()
    monkeypatch.setattr(dispatch.current_app, "send_task", lost)
    with django_capture_on_commit_callbacks(execute=True):  # queued once the request's transaction commits
        assert recompute.request_recompute(batch.dataset_id)
    RecomputeRequest.objects.update(queued_at=timezone.now() - timedelta(hours=2))
    with django_capture_on_commit_callbacks(execute=True):
        assert _submit(client, make_user, "w1", batch).status_code == 200
    assert lost.sent.count((recompute.RECOMPUTE_TASK, (batch.dataset_id, None))) == 2


def test_a_submission_while_the_broker_is_down_is_stored_and_answered_200(
    client, make_user, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    batch = published_batch()
    down = Broker(down=True)
    monkeypatch.setattr(dispatch.current_app, "send_task", down)
    with django_capture_on_commit_callbacks(execute=True):
        response = _submit(client, make_user, "w1", batch)
    assert response.status_code == 200 and response.json()["ok"]
    assert Judgment.objects.filter(assignment__hit__batch=batch).exists()
    assert "could not queue the recompute" in caplog.text
    # The flag was undone, so the next ask (or the beat) queues once the broker is back.
    assert not RecomputeRequest.objects.filter(queued=True).exists()
    down.down = False
    with django_capture_on_commit_callbacks(execute=True):
        assert _submit(client, make_user, "w2", batch).status_code == 200
    assert {(batch.dataset_id, None), (batch.dataset_id, batch.pk)} <= {args for _, args in down.sent}


def test_a_long_recompute_is_queued_later_so_recomputes_keep_to_their_share(
    settings, monkeypatch, django_capture_on_commit_callbacks
):
    """Under a steady stream of submissions a run of d seconds is queued d x 100 / share
    seconds after the last: at least the delay, at most the delay plus half the grace."""
    settings.SCORING_RECOMPUTE_DELAY, settings.SCORING_RECOMPUTE_GRACE = 5, 60
    settings.SCORING_RECOMPUTE_MAX_SHARE = 25
    batch = published_batch()
    dataset = batch.dataset
    assert recompute.recompute_countdown(dataset.pk) == 5  # no run yet: the delay

    def last_run(seconds, batch=None):
        ScoringRun.objects.create(
            dataset=dataset, batch=batch, kind=ScoringRun.Kind.SCORES, status=ScoringRun.Status.DONE, seconds=seconds
        )

    last_run(0.6)
    assert recompute.recompute_countdown(dataset.pk) == 5  # a quick run: the delay
    last_run(8.0)
    assert recompute.recompute_countdown(dataset.pk) == 32  # 8 s every 32 s: a quarter
    assert recompute.recompute_countdown(dataset.pk, batch.pk) == 5  # the round has its own runs
    last_run(2.0, batch)
    assert recompute.recompute_countdown(dataset.pk, batch.pk) == 8
    last_run(60.0)
    assert recompute.recompute_countdown(dataset.pk) == 35  # bounded: the flag outlives its task's wait
    settings.SCORING_RECOMPUTE_MAX_SHARE = 100
    assert recompute.recompute_countdown(dataset.pk) == 5

    # The countdown is what the queued task gets.
    settings.SCORING_RECOMPUTE_MAX_SHARE = 25
    sent = []
    monkeypatch.setattr(
        dispatch.current_app, "send_task", lambda name, args=None, countdown=None: sent.append(countdown)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert recompute.request_recompute(dataset.pk)
    assert sent == [35]
