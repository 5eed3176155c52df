"""Crowd work: batches (or imported label rounds), pay buckets, HITs, workers, assignments,
judgments, the qualification test and the money ledger. A crowd provider's own models live in
its package (hits/providers/<name>/models.py) and belong to this app too (hits.apps).

A judgment always belongs to an assignment of a worker on a HIT of a batch, whether it came
from the crowd or from an imported label file, so scoring treats both alike.

The models are split by what they hold: workers and the qualification test (`workers`), batches,
their buckets and HITs (`batches`), the work (`work`), money and provider calls (`money`), machine
judges (`judges`). Import them from here.
"""

from hits.models.batches import HIT, OPEN_SHARE, Batch, BatchRequest, PayBucket, RoundVersion
from hits.models.judges import JudgeRun, LLMAnswer, MachineJudgment
from hits.models.money import LedgerEntry, ProviderCall, Tally
from hits.models.work import Assignment, Judgment, WorkerEstimate
from hits.models.workers import ExpertDecision, GoldItem, QualificationAttempt, QualificationTest, Worker

__all__ = [
    "HIT",
    "OPEN_SHARE",
    "Assignment",
    "Batch",
    "BatchRequest",
    "ExpertDecision",
    "GoldItem",
    "JudgeRun",
    "Judgment",
    "LLMAnswer",
    "LedgerEntry",
    "MachineJudgment",
    "PayBucket",
    "ProviderCall",
    "QualificationAttempt",
    "QualificationTest",
    "RoundVersion",
    "Tally",
    "Worker",
    "WorkerEstimate",
]
