"""Where a judge that pays per answer (the llm judge) keeps a run's answers and what they cost:
`hits.LLMAnswer` rows, one per question, and the run's totals in `JudgeRun.llm_usage`, written a
chunk at a time in one transaction each, so that an interrupted run resumes from what it has and
every call is counted once. A question an earlier run (of any dataset) got an answer for is not
asked again: that answer is copied into the run (`RunAnswers.borrow`) unless the run asks for
fresh answers. Reads for reports: `usage_json`."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation.llm import USAGE_KEYS
from hits.models import JudgeRun, LLMAnswer

COUNTS = ("calls", "retries", "replies", "replies_without_usage")


def _add_spend(usage: dict, spend, asked: int) -> dict:
    usage = dict(usage)
    usage["asked"] = usage.get("asked", 0) + asked
    for name in COUNTS:
        usage[name] = usage.get(name, 0) + getattr(spend, name)
    for key in USAGE_KEYS:
        if key in spend.tokens:
            usage[key] = (usage.get(key) or 0) + spend.tokens[key]
        else:
            usage.setdefault(key, None)  # no reply reported it: unknown, not zero
    usage["answered"] = usage.get("answered", 0) + spend.answered
    usage["reused"] = usage.get("reused", 0) + spend.reused
    usage["beat"] = timezone.now().isoformat()
    return usage


class RunAnswers:
    """The stored answers of one judge run (Work.answers)."""

    def __init__(self, run_id: int):
        self.run_id = run_id

    def begin(self, summaries: int) -> None:
        """A pass over the run's summaries starts (first or resumed): none answered yet in it."""
        with transaction.atomic():
            run = JudgeRun.objects.select_for_update().only("llm_usage").get(pk=self.run_id)
            usage = {
                **run.llm_usage,
                "summaries": summaries,
                "answered": 0,
                "reused": 0,
                # over all its passes (a run stored before they were counted: from its rows)
                "asked": run.llm_usage.get("asked")
                if "asked" in run.llm_usage
                else LLMAnswer.objects.filter(run_id=self.run_id, from_run=None).count(),
                "reused_earlier": run.llm_usage.get("reused_earlier", 0),
                "beat": timezone.now().isoformat(),
            }
            JudgeRun.objects.filter(pk=self.run_id).update(llm_usage=usage)

    def stored(self, keys: list[str]) -> dict[str, tuple[list[float], int | None]]:
        """This run's answers to these questions: {key: (probabilities, the run it was copied
        from, or None when this run asked)}."""
        rows = LLMAnswer.objects.filter(run_id=self.run_id, key__in=keys).values_list(
            "key", "probabilities", "from_run"
        )
        return {key: (p, origin) for key, p, origin in rows}

    def borrow(self, keys: list[str]) -> dict[str, list[float]]:
        """The answers earlier runs (of any dataset: the key is everything that determines the
        answer) got for these questions, copied into this run and counted (`reused_earlier`) in one
        transaction: the first answer each question got (the lowest row still stored)."""
        found: dict[str, tuple[list[float], int]] = {}
        rows = (
            LLMAnswer.objects.filter(key__in=keys)
            .exclude(run_id=self.run_id)
            .order_by("pk")
            .values_list("key", "probabilities", "run_id", "from_run")
        )
        for key, p, run_id, origin in rows:
            found.setdefault(key, (p, origin or run_id))
        if not found:
            return {}
        with transaction.atomic():
            run = JudgeRun.objects.select_for_update().only("llm_usage").get(pk=self.run_id)
            LLMAnswer.objects.bulk_create(
                [
                    LLMAnswer(run_id=self.run_id, key=key, probabilities=p, usage=None, requests=0, from_run=origin)
                    for key, (p, origin) in found.items()
                ],
                ignore_conflicts=True,
            )
            usage = {
                **run.llm_usage,
                "reused_earlier": run.llm_usage.get("reused_earlier", 0) + len(found),
                "beat": timezone.now().isoformat(),
            }
            JudgeRun.objects.filter(pk=self.run_id).update(llm_usage=usage)
        return {key: p for key, (p, _) in found.items()}

    def store(self, fresh: dict, spend) -> None:
        """A chunk's new answers ({key: (probabilities, usage, requests)}) and what it cost."""
        with transaction.atomic():
            run = JudgeRun.objects.select_for_update().only("llm_usage").get(pk=self.run_id)
            LLMAnswer.objects.bulk_create(
                [
                    LLMAnswer(run_id=self.run_id, key=key, probabilities=p, usage=usage, requests=requests)
                    for key, (p, usage, requests) in fresh.items()
                ],
                ignore_conflicts=True,
            )
            JudgeRun.objects.filter(pk=self.run_id).update(llm_usage=_add_spend(run.llm_usage, spend, len(fresh)))


def silent_for(run: JudgeRun) -> float | None:
    """Seconds since the run last stored a chunk of answers (or began a pass); None before any."""
    beat = run.llm_usage.get("beat")
    if not beat:
        return None
    return (timezone.now() - datetime.fromisoformat(beat)).total_seconds()


def answered(run: JudgeRun, judge, pairs) -> tuple[int, int]:
    """(summaries of `pairs` whose answer the run has stored for the very same question, summaries)."""
    questions = judge.questions(pairs, range(len(pairs)))
    keys = set(LLMAnswer.objects.filter(run=run).values_list("key", flat=True))
    return sum(q.key in keys for q in questions), len(questions)


def usage_json(run: JudgeRun) -> dict | None:
    """What a run's page, the API and `judge_dataset --json` show of its spending (null for a
    judge that does not pay per answer): token counts are null when the endpoint reported none (0
    when the run received no answer: every one reused);
    `asked` is null only for a run from before usage was recorded (hits 0028) taken up again,
    until its pass begins (hits 0030 counted it for the runs stored before it was counted)."""
    usage = run.llm_usage
    if not usage:
        return None
    replied = usage.get("replies", 0) > 0  # no answer received (all reused): no token spent, not unknown
    return {
        **{name: usage.get(name, 0) for name in COUNTS},
        **{key: usage.get(key) if replied else 0 for key in USAGE_KEYS},
        "summaries": usage.get("summaries"),
        "answered": usage.get("answered", 0),
        "reused": usage.get("reused", 0),
        "asked": usage.get("asked"),
        "reused_earlier": usage.get("reused_earlier", 0),
        "resumed": usage.get("resumed", 0),
    }
