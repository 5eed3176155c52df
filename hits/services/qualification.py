"""The qualification test: built from gold items, taken on our pages, graded at once.

Each test draws its gold items with a seed of its own (random unless given, stored on the test),
so two tests of one dataset do not share an answer sheet; `rotate_gold` draws a fresh sample
(a new seed) for a test, so a leaked sheet expires (passes already earned stay). Only tests
offered to a worker's provider (`offered_tests`) can be taken.

Only knowledge passes: a sheet is scored by balanced accuracy (the mean of the share right
among the facts that are present and among those that are not), so answering one way
everywhere scores 50% however sparse the gold; the draw is stratified so a test holds both
classes (at least MIN_PER_CLASS facts of each when the gold has them), and a test whose gold
has one class only is refused. An incomplete sheet is refused with the answers kept, never
graded, so it costs no attempt.

A worker fails only on evidence (hits.qualification_bound): a sheet passes when its score
reaches the pass score, fails when the upper confidence bound of the score is below it, and is
otherwise not decided yet: stored, no attempt used, no wait, a fresh sheet at once; the next
sheet is judged on its counts together with those undecided sheets. A decision so looks at most
MAX_UNDECIDED + 1 times, so each look's bound is at the level corrected for that many (98.75% for
four: hits.qualification_bound.corrected_level), and a worker the last of them still leaves
undecided passes (benefit of the doubt: never failed on a point score; the work's gold watch
keeps watching them with a bound).
"""

import contextlib
import random
import secrets
from dataclasses import dataclass
from datetime import timedelta
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Summary
from hits import sheets
from hits.gold import answer_key, known_answers
from hits.models import Batch, GoldItem, QualificationAttempt, QualificationTest, Worker
from hits.qualification_bound import balanced_accuracy, verdict
from hits.sheets import MIN_PER_CLASS as MIN_PER_CLASS  # re-exported: the class minimum of a sheet
from hits.sheets import stratified


class QualificationError(Exception):
    """A refused test action, with a message for the person."""


class IncompleteSheet(QualificationError):
    """A sheet with unanswered facts: refused, not graded (no attempt is used); the page shows
    the answers given again."""


class AlreadyGraded(QualificationError):
    """A sheet sent again after it was graded (a double click on Submit, a resent form): nothing
    is graded again; `attempt` is the attempt it was graded as, whose result the person is shown."""

    def __init__(self, attempt):
        super().__init__("This sheet was graded already.")
        self.attempt = attempt


# A test's pool holds this many times the items of one sheet (as many as the gold has, if fewer).
POOL_FACTOR = 3
# Sheets not passed (failed or not decided yet, since the last rotation) a test takes before it
# alerts the lead and draws a fresh pool on its own.
FAILURE_BUDGET = 15
# Undecided sheets in a row before the next sheet decides: it passes the worker unless it shows
# them below the mark (so a decision looks at most MAX_UNDECIDED + 1 times).
MAX_UNDECIDED = 3

UNDECIDED = (
    "Not decided yet: your answers so far do not show whether you reach the pass mark. "
    "Answer one more sheet; this does not use an attempt."
)

ONE_CLASS = (
    "Every gold fact of {dataset} is “{label}”: a test of them could be passed by answering one way "
    "everywhere. Label summaries whose facts are {other} as gold first."
)


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
    pool: int | None = None,
    failure_budget: int = FAILURE_BUDGET,
) -> QualificationTest:
    """A test whose attempts show `items` gold summaries with known answers (expert labels,
    imported or made in an expert round) each, drawn per attempt from a pool of `pool` of them
    (POOL_FACTOR times `items` by default; as many as the gold has, if fewer) itself drawn with
    `seed` (a fresh random seed when None; stored on the test). `shared`: offered to the batches
    of other datasets too. `failure_budget`: failed attempts before the lead is alerted and the
    pool redrawn (0: never)."""
    if not 0 < pass_score <= 1:
        raise QualificationError("The pass score is a share between 0 and 1.")
    if items < 1 or max_attempts < 1:
        raise QualificationError("A test needs at least one item and one attempt.")
    pool = POOL_FACTOR * items if pool is None else pool
    if pool < items or failure_budget < 0:
        raise QualificationError("The pool holds at least one sheet of items, and the budget is not negative.")
    answers = known_answers(dataset, summary_ids)
    if not answers:
        raise QualificationError(NO_GOLD)
    _check_both_classes(dataset, answers)
    seed = secrets.randbits(62) if seed is None else seed
    test = QualificationTest.objects.create(
        dataset=dataset,
        name=name,
        pass_score=pass_score,
        max_attempts=max_attempts,
        retry_after_hours=retry_after_hours,
        seed=seed,
        shared=shared,
        sheet_items=items,
        failure_budget=failure_budget,
    )
    _draw_items(test, answers, pool, seed)
    return test


def _check_both_classes(dataset, answers: dict) -> None:
    present, absent = _counts(answers.values())
    if not present or not absent:
        label, other = ("Not present", "present") if not present else ("Present", "not present")
        raise QualificationError(ONE_CLASS.format(dataset=dataset.name, label=label, other=other))


def _counts(answer_sheets) -> tuple[int, int]:
    """(present, not present) facts of answer sheets ({acu: bool} each)."""
    values = [v for sheet in answer_sheets for v in sheet.values()]
    return sum(values), len(values) - sum(values)


def class_balance(dataset) -> dict:
    """The class balance of the dataset's gold facts, for the lead's test form."""
    present, absent = _counts(known_answers(dataset).values())
    total = present + absent
    return {"present": present, "absent": absent, "share": present / total if total else None}


def test_balance(test: QualificationTest) -> tuple[int, int]:
    """(present, not present) facts of the test's pool."""
    return _counts(test.items.values_list("answers", flat=True))


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
    chosen = stratified(chosen, answers, rng)
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


BLOCKED = "Your account is blocked from new tasks and tests."


def undecided_run(attempts) -> list[QualificationAttempt]:
    """The undecided attempts at the end of `attempts` (in order): the evidence the next sheet adds to."""
    run: list[QualificationAttempt] = []
    for attempt in reversed(attempts):
        if attempt.decided:
            break
        run.insert(0, attempt)
    return run


def attempt_status(worker: Worker | None, test: QualificationTest, *, max_attempts: int | None = None) -> dict:
    """Whether the worker passed, may try (again), or must wait / has no attempts left / is
    blocked (`max_attempts` overrides the test's, e.g. one for a panel participant). Only decided
    attempts are used (`used`) and start the wait; `pending`: undecided sheets awaiting the next."""
    attempts = list(test.attempts.filter(worker=worker)) if worker is not None else []
    decided = [a for a in attempts if a.decided]
    base = {"passed": False, "can_try": False, "attempts": attempts, "used": len(decided), "pending": 0}
    if any(a.passed for a in attempts):
        return {**base, "passed": True, "message": "You passed this test."}
    if worker is not None and worker.blocked:  # no more work of any kind, a test included
        return {**base, "message": BLOCKED}
    if len(decided) >= (max_attempts or test.max_attempts):
        return {**base, "message": "You have used all attempts of this test."}
    pending = len(undecided_run(attempts))
    if decided and not pending:
        ready = decided[-1].submitted_at + timedelta(hours=test.retry_after_hours)
        if ready > timezone.now():
            return {**base, "message": f"You can try again after {timezone.localtime(ready):%Y-%m-%d %H:%M %Z}."}
    return {**base, "can_try": True, "pending": pending, "message": UNDECIDED if pending else ""}


@dataclass(frozen=True)
class Grade:
    """A sheet graded against the test's items: the facts right per class and the score,
    balanced accuracy (the mean of the share right among present facts and among not-present
    ones; the share right when the sheet holds one class only)."""

    present_right: int
    present: int
    absent_right: int
    absent: int

    @property
    def correct(self) -> int:
        return self.present_right + self.absent_right

    @property
    def total(self) -> int:
        return self.present + self.absent

    @property
    def score(self) -> float:
        return balanced_accuracy(self.present_right, self.present, self.absent_right, self.absent)


def percent_text(share, *, pass_mark: bool = False) -> str:
    """A score or pass mark (a share, 0-1) as people read it: "80%", "79.5%". A score is rounded
    down and a pass mark up, to a tenth of a percent, so a failed score never reads as the mark
    (rounded to whole percents, 79.5% failing a mark of 80% read "80%, 80% needed")."""
    rounding = ROUND_CEILING if pass_mark else ROUND_FLOOR
    value = (Decimal(repr(float(share))) * 100).quantize(Decimal("0.1"), rounding)
    return f"{value.normalize():f}%"


def grade(items, answers: dict[str, bool]) -> Grade:
    """The sheet (its gold items) against the answers; an unanswered fact counts as wrong."""
    tally = {True: [0, 0], False: [0, 0]}
    for item in items:
        for acu_id, truth in item.answers.items():
            tally[truth][1] += 1
            tally[truth][0] += int(answers.get(answer_key(item.pk, acu_id)) is truth)
    return Grade(tally[True][0], tally[True][1], tally[False][0], tally[False][1])


def unanswered(items, answers: dict[str, bool]) -> tuple[int, int]:
    """(facts without an answer, facts) of the sheet (its gold items)."""
    keys = [answer_key(item.pk, acu_id) for item in items for acu_id in item.answers]
    return sum(key not in answers for key in keys), len(keys)


def unanswered_facts(missing: int, total: int) -> str:
    """How many facts a task or a qualification sheet still lacks an answer to, in words."""
    return f"{missing} of {total} facts {'has' if missing == 1 else 'have'} no answer yet"


def check_complete(items, answers: dict[str, bool]) -> dict[str, bool]:
    """The answers to the sheet's facts (its gold items), nothing else a form carried (another
    field's name, a NUL the database refuses to store); IncompleteSheet unless every fact has one."""
    missing, total = unanswered(items, answers)
    if missing:
        raise IncompleteSheet(
            f"{unanswered_facts(missing, total)}: answer every fact, then submit. "
            "Nothing was graded and no attempt was used; your answers are kept below."
        )
    keys = {answer_key(item.pk, acu_id) for item in items for acu_id in item.answers}
    return {key: value for key, value in answers.items() if key in keys}


def sheet_number(worker: Worker | None, test: QualificationTest) -> int:
    """The number of the sheet `worker_sheet` shows the worker now (their attempts so far; 0 for
    a participant without a Worker row yet): the form carries it, so a second post of the same
    page is known (`submit_attempt`'s `sheet`)."""
    return test.attempts.filter(worker=worker).count() if worker is not None else 0


def posted_sheet(value: str) -> int | None:
    """The sheet number a form sent (`sheet_number`), or None when it sent none (an old page)."""
    return int(value) if value.isdigit() else None


def worker_sheet(test: QualificationTest, worker: Worker, network: str = "") -> list[GoldItem]:
    """The gold items of the worker's next attempt (hits.sheets; `network`: drawn for that network)."""
    return sheets.sheet(test, worker.provider, worker.external_id, network)


def submit_attempt(
    *,
    test: QualificationTest,
    worker: Worker,
    answers: dict[str, bool],
    max_attempts: int | None = None,
    external_id: str = "",
    network: str = "",
    sheet: int | None = None,
) -> QualificationAttempt:
    """Grade and store one attempt, against the sheet the worker was shown (`worker_sheet`; with
    `network`, hits.sheets.network, the sheet of that network: a screening of made-up ids).
    `external_id` names the provider submission it was made in (a Prolific screening
    submission): each is used for one decided attempt only (undecided sheets before it may share
    it). An incomplete sheet raises IncompleteSheet and stores nothing. The decision is taken on
    this sheet's counts with those of the undecided sheets just before it (`decide`). A sheet not
    passed (failed or undecided) spends the test's budget (`_spend_budget`).

    `sheet`: the number of the sheet the page showed (`sheet_number` when it was drawn); a sheet
    graded already (a second post of one page, even one sent at the same moment: the worker's row
    lock orders them) raises AlreadyGraded with its attempt instead of being graded against the next
    sheet."""
    with transaction.atomic():
        Worker.objects.select_for_update().get(pk=worker.pk)  # one attempt at a time per worker
        status = attempt_status(worker, test, max_attempts=max_attempts)
        if sheet is not None and 0 <= sheet < len(status["attempts"]):
            raise AlreadyGraded(status["attempts"][sheet])
        if not status["can_try"]:
            raise QualificationError(status["message"])
        if external_id and test.attempts.filter(external_id=external_id, decided=True).exists():
            raise QualificationError("This submission was used for an attempt already.")
        items = worker_sheet(test, worker, network)
        answers = check_complete(items, answers)
        graded = grade(items, answers)
        score, passed = decide(test, graded, undecided_run(status["attempts"]))
        attempt = QualificationAttempt.objects.create(
            test=test,
            worker=worker,
            answers=answers,
            items=[item.pk for item in items],
            network=network,
            correct=graded.correct,
            total=graded.total,
            score=score,
            passed=passed is True,
            decided=passed is not None,
            present_right=graded.present_right,
            present=graded.present,
            absent_right=graded.absent_right,
            absent=graded.absent,
            external_id=external_id,
        )
        if not attempt.passed:
            _spend_budget(test)
        return attempt


def decide(test: QualificationTest, graded: Grade, earlier) -> tuple[float, bool | None]:
    """(score, passed: True, False or None for not decided yet) of a sheet with the undecided
    sheets `earlier` just before it: their per-class counts are added up, and the verdict is this
    look (the number of the sheet in the run) of at most MAX_UNDECIDED + 1."""
    present_right = graded.present_right + sum(a.present_right for a in earlier)
    present = graded.present + sum(a.present for a in earlier)
    absent_right = graded.absent_right + sum(a.absent_right for a in earlier)
    absent = graded.absent + sum(a.absent for a in earlier)
    look = len(earlier) + 1
    passed = verdict(present_right, present, absent_right, absent, test.pass_score, look=look, looks=MAX_UNDECIDED + 1)
    return balanced_accuracy(present_right, present, absent_right, absent), passed


def failures_since_rotation(test: QualificationTest) -> int:
    """Sheets not passed (failed or not decided yet: each showed gold) at the test's present
    pool (since it was built or last rotated)."""
    return test.attempts.filter(passed=False, submitted_at__gt=test.rotated_at or test.created_at).count()


def _spend_budget(test: QualificationTest) -> None:
    """When the sheets not passed at the present pool reach the test's budget, someone may be
    reading the answers off the results: the pool is redrawn (`rotate_gold`, which starts
    the count again) and the lead alerted (`budget_spent_at`, shown on their pages until they
    dismiss it)."""
    test = QualificationTest.objects.select_for_update().get(pk=test.pk)
    if not test.failure_budget or failures_since_rotation(test) < test.failure_budget:
        return
    with contextlib.suppress(QualificationError):  # no gold left to draw: the alert still goes out
        rotate_gold(test)
    QualificationTest.objects.filter(pk=test.pk).update(
        budget_spent_at=timezone.now(), auto_rotations=F("auto_rotations") + 1
    )


def dismiss_alert(test: QualificationTest) -> None:
    """The lead has read the test's budget alert."""
    QualificationTest.objects.filter(pk=test.pk).update(budget_spent_at=None)
