"""The report of a rating round as the page shows it, kept in the cache: the key is the round, its
ratings (how many, and the newest row: a rating batch rewrites its round's rows as its counted
ratings change, hits.services.ratings; an imported round never changes), what else the report
reads (the latest scores run standing for ACU, the metric scores: how many and the newest row) and the part (the figures, or
the power analysis, which costs seconds and is computed on a lead's ask)."""

import time
from dataclasses import asdict

from django.core.cache import cache
from django.db.models import Count, Max
from django.utils import timezone

from annotation.models import RatingRound
from scoring.models import MetricScore, ScoringRun
from scoring.runs.selectors import latest_run

from .report import Settings, build_report
from .selectors import protocol_data

SECONDS = 24 * 3600
MAX_RATINGS = 200_000  # the page computes on load only rounds this small (RoSE's: 3,600)


def _key(round_: RatingRound, part: str) -> str:
    # the scores run standing for ACU (the dataset's, as selectors.protocol_data reads it), not the
    # newest of any scope: another round's run would change the key and lose the stored power
    scores = latest_run(round_.dataset, None, ScoringRun.Kind.SCORES, parts=())
    run = scores.pk if scores is not None else None
    # How many metric scores and the newest row: a file of the same metrics replaces their rows
    # (deleted, then inserted anew) with as many.
    metrics = MetricScore.objects.filter(dataset=round_.dataset_id).aggregate(n=Count("pk"), last=Max("pk"))
    ratings = round_.ratings.aggregate(n=Count("pk"), last=Max("pk"))
    return f"protocols:{round_.pk}:{ratings['n']}:{ratings['last']}:{run}:{metrics['n']}:{metrics['last']}:{part}"


def too_large(round_: RatingRound) -> bool:
    return round_.ratings.count() > MAX_RATINGS


def figures(round_: RatingRound) -> dict:
    """Everything but power, computed once per key."""
    key = _key(round_, "figures2")  # 2: with the rated summaries of each protocol
    report = cache.get(key)
    if report is None:
        report = build_report(protocol_data(round_), Settings(), with_power=False)
        cache.set(key, report, SECONDS)
    return report


def power(round_: RatingRound, compute: bool = False, store: bool = False) -> dict | None:
    """The power analysis per protocol if computed: from the cache, else the stored run of the same
    key (a ScoringRun of kind protocol_power, kept beside the other stored figures). ``compute``:
    compute it now and keep it in the cache; ``store`` too (a lead's POST): as a stored run, which
    outlives the cache."""
    key = _key(round_, "power")
    result = cache.get(key)
    if result is None:
        result = _stored_power(round_, key)
        if result is not None:
            cache.set(key, result, SECONDS)
    if result is None and compute:
        started = time.perf_counter()
        result = build_report(protocol_data(round_), Settings(), with_power=True)["power"]
        cache.set(key, result, SECONDS)
        if store:
            ScoringRun.objects.create(
                dataset_id=round_.dataset_id,
                kind=ScoringRun.Kind.PROTOCOL_POWER,
                status=ScoringRun.Status.DONE,
                trigger="page",
                parameters={"rating_round": round_.pk, **asdict(Settings())},
                inputs={"key": key, "ratings": round_.ratings.count()},
                outputs={"power": result},
                progress=1.0,
                finished_at=timezone.now(),
                seconds=time.perf_counter() - started,
            )
    return result


def _stored_power(round_: RatingRound, key: str) -> dict | None:
    outputs = (
        ScoringRun.objects.filter(
            dataset_id=round_.dataset_id,
            kind=ScoringRun.Kind.PROTOCOL_POWER,
            status=ScoringRun.Status.DONE,
            inputs__key=key,
        )
        .order_by("-started_at", "-pk")
        .values_list("outputs", flat=True)
        .first()
    )
    return outputs["power"] if outputs else None
