"""The report of a rating round as the page shows it, kept in the cache: the key is the round, its
ratings (how many, and the newest row: a rating batch rewrites its round's rows as its counted
ratings change, hits.services.ratings; an imported round never changes), what else the report
reads (the latest scores run standing for ACU, the metric scores) and the part (the figures, or
the power analysis, which costs seconds and is computed on a lead's ask)."""

from django.core.cache import cache
from django.db.models import Count, Max

from annotation.models import RatingRound
from scoring.models import MetricScore, ScoringRun

from .report import Settings, build_report
from .selectors import protocol_data

SECONDS = 24 * 3600
MAX_RATINGS = 200_000  # the page computes on load only rounds this small (RoSE's: 3,600)


def _key(round_: RatingRound, part: str) -> str:
    run = (
        ScoringRun.objects.filter(dataset=round_.dataset_id, kind=ScoringRun.Kind.SCORES, status=ScoringRun.Status.DONE)
        .values_list("pk", flat=True)
        .first()
    )
    metrics = MetricScore.objects.filter(dataset=round_.dataset_id).count()
    ratings = round_.ratings.aggregate(n=Count("pk"), last=Max("pk"))
    return f"protocols:{round_.pk}:{ratings['n']}:{ratings['last']}:{run}:{metrics}:{part}"


def too_large(round_: RatingRound) -> bool:
    return round_.ratings.count() > MAX_RATINGS


def figures(round_: RatingRound) -> dict:
    """Everything but power, computed once per key."""
    key = _key(round_, "figures")
    report = cache.get(key)
    if report is None:
        report = build_report(protocol_data(round_), Settings(), with_power=False)
        cache.set(key, report, SECONDS)
    return report


def power(round_: RatingRound, compute: bool = False) -> dict | None:
    """The power analysis per protocol if computed (``compute``: compute it now and keep it)."""
    key = _key(round_, "power")
    result = cache.get(key)
    if result is None and compute:
        result = build_report(protocol_data(round_), Settings(), with_power=True)["power"]
        cache.set(key, result, SECONDS)
    return result
