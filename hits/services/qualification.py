"""The qualification test: built from gold items, taken on our pages, graded at once.

Each test draws its gold items with a seed of its own (random unless given, stored on the test),
so two tests of one dataset do not share an answer sheet; `rotate_gold` draws a fresh sample
(a new seed) for a test, so a leaked sheet expires (passes already earned stay). Only tests
offered to a worker's provider (`offered_tests`) can be taken.
"""

import random
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from annotation.models import Summary
from hits.gold import known_answers
from hits.models import Batch, GoldItem, QualificationAttempt, QualificationTest, Worker


class QualificationError(Exception):
    """A refused test action, with a message for the person."""


NO_GOLD = (
    "This dataset has no summaries with known answers yet. Label some as gold in the browser: on the dataset "
    "page, “Label summaries as gold” opens an expert round for the authors and leads (or import expert labels)."
)


@transaction.atomic
def build_test(
    *,
    dataset,
    name: str,
    items: int = 5,
    pass_score: float = 0.8,
    max_attempts: int = 2,
    retry_after_hours: int = 24,
    summary_ids=None,
    seed: int | None = None,
    shared: bool = False,
) -> QualificationTest:
    """A test of `items` gold summaries with known answers (expert labels, imported or made in
    an expert round), drawn with `seed` (a fresh random seed when None; stored on the test).
    `shared`: offered to the batches of other datasets too."""
    if not 0 < pass_score <= 1:
        raise QualificationError("The pass score is a share between 0 and 1.")
    if items < 1 or max_attempts < 1:
        raise QualificationError("A test needs at least one item and one attempt.")
    answers = known_answers(dataset, summary_ids)
    if not answers:
        raise QualificationError(NO_GOLD)
    seed = secrets.randbits(62) if seed is None else seed
    test = QualificationTest.objects.create(
        dataset=dataset,
        name=name,
        pass_score=pass_score,
        max_attempts=max_attempts,
        retry_after_hours=retry_after_hours,
        seed=seed,
        shared=shared,
    )
    _draw_items(test, answers, items, seed)
    return test


def _draw_items(test: QualificationTest, answers: dict, items: int, seed: int) -> None:
    # One summary per document where possible: a test of one reference's ACUs says little.
    rng = random.Random(seed)
    by_document: dict[int, list[int]] = {}
    for sid, doc in Summary.objects.filter(pk__in=answers).values_list("pk", "document_id").order_by("pk"):
        by_document.setdefault(doc, []).append(sid)
    firsts = [rng.choice(sids) for sids in by_document.values()]
    rest = sorted(set(answers) - set(firsts))
    chosen = rng.sample(firsts, min(items, len(firsts)))
    chosen += rng.sample(rest, min(items - len(chosen), len(rest)))
    GoldItem.objects.bulk_create(
        [
            GoldItem(test=test, summary_id=sid, position=i, answers={str(a): v for a, v in answers[sid].items()})
            for i, sid in enumerate(chosen)
        ]
    )


@transaction.atomic
def rotate_gold(test: QualificationTest, *, seed: int | None = None) -> QualificationTest:
    """Replace the test's gold items with a fresh sample of as many (a new seed), so an answer
    sheet that leaked stops working. Attempts already made keep their result; an MTurk test
    graded by MTurk (its AnswerKey) keeps the old key until a new qualification type is made."""
    test = QualificationTest.objects.select_for_update().get(pk=test.pk)
    answers = known_answers(test.dataset, None)
    size = test.items.count() or 1
    if not answers:
        raise QualificationError("This dataset has no summaries with known answers left to draw from.")
    seed = secrets.randbits(62) if seed is None else seed
    test.items.all().delete()
    _draw_items(test, answers, size, seed)
    test.seed, test.rotated_at = seed, timezone.now()
    test.save(update_fields=["seed", "rotated_at"])
    return test


def set_shared(test: QualificationTest, shared: bool) -> QualificationTest:
    """Offer the test to the batches of other datasets too (or stop offering it to new ones;
    batches that require it keep it)."""
    QualificationTest.objects.filter(pk=test.pk).update(shared=shared)
    test.refresh_from_db()
    return test


def offered_tests(provider: str):
    """Tests a worker of `provider` may take: those of the provider's published batches."""
    return QualificationTest.objects.filter(
        batches__status=Batch.Status.PUBLISHED, batches__provider=provider
    ).distinct()


def is_qualified(worker: Worker, batch) -> bool:
    test_id = batch.qualification_test_id
    return test_id is None or QualificationAttempt.objects.filter(test_id=test_id, worker=worker, passed=True).exists()


def attempt_status(worker: Worker | None, test: QualificationTest, *, max_attempts: int | None = None) -> dict:
    """Whether the worker passed, may try (again), or must wait / has no attempts left
    (`max_attempts` overrides the test's, e.g. one for a panel participant)."""
    attempts = list(test.attempts.filter(worker=worker)) if worker is not None else []
    if any(a.passed for a in attempts):
        return {"passed": True, "can_try": False, "message": "You passed this test.", "attempts": attempts}
    if len(attempts) >= (max_attempts or test.max_attempts):
        return {
            "passed": False,
            "can_try": False,
            "message": "You have used all attempts of this test.",
            "attempts": attempts,
        }
    if attempts:
        ready = attempts[-1].submitted_at + timedelta(hours=test.retry_after_hours)
        if ready > timezone.now():
            return {
                "passed": False,
                "can_try": False,
                "attempts": attempts,
                "message": f"You can try again after {timezone.localtime(ready):%Y-%m-%d %H:%M}.",
            }
    return {"passed": False, "can_try": True, "message": "", "attempts": attempts}


def answer_key(item_id: int, acu_id) -> str:
    """Answers are keyed by item and ACU: two items may show the same reference's ACUs."""
    return f"{item_id}:{acu_id}"


def grade(test: QualificationTest, answers: dict[str, bool]) -> tuple[int, int]:
    """Correct and total ACU answers against the gold items; unanswered counts as wrong."""
    correct = total = 0
    for item in test.items.all():
        for acu_id, truth in item.answers.items():
            total += 1
            correct += int(answers.get(answer_key(item.pk, acu_id)) is truth)
    return correct, total


def submit_attempt(
    *,
    test: QualificationTest,
    worker: Worker,
    answers: dict[str, bool],
    max_attempts: int | None = None,
    external_id: str = "",
) -> QualificationAttempt:
    """Grade and store one attempt. `external_id` names the provider submission it was made
    in (a Prolific screening submission): each is used for one attempt only."""
    with transaction.atomic():
        Worker.objects.select_for_update().get(pk=worker.pk)  # one attempt at a time per worker
        status = attempt_status(worker, test, max_attempts=max_attempts)
        if not status["can_try"]:
            raise QualificationError(status["message"])
        if external_id and test.attempts.filter(external_id=external_id).exists():
            raise QualificationError("This submission was used for an attempt already.")
        correct, total = grade(test, answers)
        score = correct / total if total else 0.0
        return QualificationAttempt.objects.create(
            test=test,
            worker=worker,
            answers=answers,
            correct=correct,
            total=total,
            score=score,
            passed=score >= test.pass_score,
            external_id=external_id,
        )
