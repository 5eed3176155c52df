"""A simulated crowd for demos and tests: in-house workers who take the qualification test
and complete a batch through the same services as real workers, each answer right with
probability `accuracy` against the known (imported) labels."""

import random
import time
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from hits.gold import known_answers
from hits.models import Batch, Worker
from hits.services import handout, qualification
from hits.services.people import create_user_with_role
from hits.services.submission import submit_assignment


@dataclass
class SimulationReport:
    workers: int
    submitted: int
    seconds: float
    qualified: int


def _answer(truth: bool | None, accuracy: float, rng: random.Random) -> bool:
    if truth is None:  # no known label: a coin flip
        return rng.random() < 0.5
    return truth if rng.random() < accuracy else not truth


def simulate_crowd(
    batch: Batch, *, workers: int, accuracy: float, seed: int = 0, prefix: str = "sim", spammers: int = 0
) -> SimulationReport:
    """`workers` answer right with probability `accuracy`; `spammers` more answer at random
    (accuracy 0.5) and fast, as the careless workers a lead should find and exclude."""
    if not 0 <= accuracy <= 1:
        raise ValueError("accuracy is a probability between 0 and 1")
    if batch.status != Batch.Status.PUBLISHED:
        raise ValueError(f"batch {batch.pk} is {batch.get_status_display().lower()}; publish it first")
    if batch.protocol:
        raise ValueError(f"batch {batch.pk} is a rating batch: the simulated crowd answers ACU batches only")
    started = time.perf_counter()
    rng = random.Random(seed)
    truth = known_answers(batch.dataset)
    crowd, skill = [], {}
    for i in range(1, workers + spammers + 1):
        name = f"{prefix}-{batch.pk}-{i}" if i <= workers else f"{prefix}-{batch.pk}-spam{i - workers}"
        user = create_user_with_role(username=name, password=f"!{rng.getrandbits(64)}", role="worker")
        worker = Worker.objects.get(user=user)
        skill[worker.pk] = accuracy if i <= workers else 0.5
        crowd.append(worker)

    qualified = 0
    test = batch.qualification_test
    for worker in crowd:
        if test is None or qualification.is_qualified(worker, batch):
            qualified += 1
            continue
        while qualification.attempt_status(worker, test)["can_try"]:
            answers = {
                # Spammers take the test carefully, then slack off: what flags must catch.
                qualification.answer_key(item.pk, acu): _answer(
                    value, accuracy if skill[worker.pk] > 0.5 else 0.95, rng
                )
                for item in test.items.all()
                for acu, value in item.answers.items()
            }
            if qualification.submit_attempt(test=test, worker=worker, answers=answers).passed:
                qualified += 1
                break

    submitted = 0
    active = list(crowd)
    while active:
        for worker in list(active):
            try:
                assignment = handout.next_assignment(worker, batch)
            except handout.NoWork:
                active.remove(worker)
                continue
            summary_truth = truth.get(assignment.hit.summary_id, {})
            acu_ids = assignment.hit.task_acus().values_list("pk", flat=True)
            answers = {str(a): _answer(summary_truth.get(a), skill[worker.pk], rng) for a in acu_ids}
            careful = skill[worker.pk] > 0.5
            seconds = rng.uniform(20, 90) if careful else rng.uniform(3, 8)
            now = timezone.now()
            submit_assignment(
                assignment_id=assignment.pk,
                worker_id=worker.pk,
                answers=answers,
                active_seconds=seconds,
                now=now,
                # a simulated worker takes no time: as if handed the task `seconds` ago, so the
                # time stored (at most the time since the handout) is the simulated one
                handed_out_at=now - timedelta(seconds=seconds),
            )
            submitted += 1
    return SimulationReport(len(crowd), submitted, time.perf_counter() - started, qualified)
