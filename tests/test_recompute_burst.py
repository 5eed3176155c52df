"""A burst of submissions coalesces into a bounded number of recomputes per scope (the dataset's
scores and the round's), and the last recompute of each scope equals a fresh full one.

Independent of machine speed: the task messages a write sends (`config.dispatch`, a broker
configured) are recorded instead of queued, and run here, with the task code a Celery worker
runs, at chosen points of the burst; a queued flag cannot expire mid-test. So the counts are
exact: one recompute per scope for a whole burst while none has started, and exactly one more
for submissions stored while a recompute runs (its flag is cleared before it reads)."""

import pytest
from celery import current_app

from hits.models import Judgment
from hits.services import handout
from hits.services.submission import submit_assignment
from hits.views.worker import inhouse_worker
from scoring import tasks
from scoring.models import RecomputeRequest, ScoringRun
from scoring.runs import recompute
from scoring.runs.services import compute_scores

from .crowd_data import all_answers, demo_dataset, published_batch

pytestmark = pytest.mark.django_db(transaction=True)


class Messages:
    """The recompute messages sent to the broker, by scope (dataset id, round id or None)."""

    def __init__(self, send):
        self.send, self.pending, self.sent = send, [], []

    def record(self, name, *args, **kwargs):
        if name != recompute.RECOMPUTE_TASK:
            return self.send(name, *args, **kwargs)
        scope = tuple(kwargs["args"])
        assert scope not in self.pending, f"a second recompute of {scope} queued while one waits"
        self.pending.append(scope)
        self.sent.append(scope)
        return None

    def run_pending(self) -> None:
        """What the worker does with the queued messages: each task once."""
        queued, self.pending = self.pending, []
        for scope in queued:
            current_app.tasks[recompute.RECOMPUTE_TASK].apply(args=scope).get()


def test_a_burst_of_submissions_coalesces_into_one_recompute_per_scope_at_a_time(settings, make_user, monkeypatch):
    from config import dispatch

    settings.SCORING_RECOMPUTE_GRACE = 24 * 3600  # no flag expires during the test, however slow the machine
    messages = Messages(dispatch.current_app.send_task)
    monkeypatch.setattr(dispatch.current_app, "send_task", messages.record)
    dataset = demo_dataset()
    batch = published_batch(dataset, assignments=3)
    workers = [inhouse_worker(make_user(f"burst-{i}", "worker")) for i in range(3)]
    scopes = [(dataset.pk, None), (dataset.pk, batch.pk)]
    messages.run_pending()  # the recomputes the import asked for
    messages.sent.clear()
    before = ScoringRun.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    submitted = 0

    def submit() -> None:
        nonlocal submitted
        worker = workers[submitted % len(workers)]
        a = handout.next_assignment(worker, batch)
        submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=all_answers(a, present=submitted % 3 == 0))
        submitted += 1

    # 1. A burst while no recompute has started: one message per scope, whatever its length.
    for _ in range(50):
        submit()
    assert sorted(messages.sent, key=str) == sorted(scopes, key=str)

    # 2. The worker runs them; a submission stored while each runs (after it claimed its flag,
    #    before it reads) queues exactly one more recompute of the claimed scope, no more.
    real = tasks.services.current_scores
    monkeypatch.setattr(tasks.services, "current_scores", lambda *a, **k: (submit(), real(*a, **k))[1])
    messages.run_pending()
    monkeypatch.setattr(tasks.services, "current_scores", real)
    assert sorted(messages.pending, key=str) == sorted(scopes, key=str)

    # 3. The rest of the places: nothing more is queued while those two wait.
    places = 3 * batch.hits.count()
    while submitted < places:
        submit()
    assert len(messages.sent) == 4

    # 4. The last recomputes see every submission and equal a fresh full computation.
    messages.run_pending()
    assert not RecomputeRequest.objects.filter(dataset=dataset, queued=True).exists()
    last_id = Judgment.objects.filter(assignment__hit__batch=batch).order_by("-pk").values_list("pk", flat=True)[0]
    for _, round_id in scopes:
        runs = ScoringRun.objects.filter(dataset=dataset, batch_id=round_id, trigger="judgments", pk__gt=before)
        assert runs.count() == runs.filter(status="done").count() == 2  # all the places' submissions, two runs
        final = runs.order_by("-started_at", "-pk").first()
        assert final.inputs["last_judgment_id"] == last_id
        fresh = compute_scores(dataset, final.batch, seed=0)
        for part in ("systems", "alpha", "counts"):
            assert final.outputs[part] == fresh.outputs[part], part
    print(f"{submitted} submissions -> {len(messages.sent)} recomputes ({len(messages.sent) // 2} per scope)")
