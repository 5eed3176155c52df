"""Reads of a rating round for the protocol comparison: per-protocol rating matrices, the
normalized ACU score, the summary length and metric scores, as documents x systems arrays
(never writes)."""

from dataclasses import dataclass, field

import numpy as np

from annotation.models import ProtocolRating, RatingRound, Summary, SummaryACUScore
from scoring.models import MetricScore, ScoringRun
from scoring.runs.selectors import latest_run, run_summaries
from scoring.stats.protocols import Ratings

PROTOCOLS = [p.value for p in ProtocolRating.Protocol]
LABELS = {**dict(ProtocolRating.Protocol.choices), "acu": "Normalized ACU", "length": "Length (words)"}


@dataclass
class ProtocolData:
    round: RatingRound
    documents: list[str]
    systems: list[str]
    means: dict[str, np.ndarray]  # protocol -> n x m mean rating (NaN: none)
    ratings: dict[str, Ratings]  # protocol -> the individual ratings of named raters
    acu: np.ndarray | None  # n x m normalized ACU score
    acu_source: str
    length: np.ndarray  # n x m words of the summary
    metrics: dict[str, np.ndarray] = field(default_factory=dict)


def rounds(dataset) -> list[RatingRound]:
    return list(RatingRound.objects.filter(dataset=dataset).order_by("-created_at", "-pk"))


def pick_round(dataset, round_id=None) -> RatingRound | None:
    rounds_ = RatingRound.objects.filter(dataset=dataset).order_by("-created_at", "-pk")
    if round_id is not None:
        return rounds_.filter(pk=round_id).first()
    return rounds_.first()


def _matrix(index, rows, shape) -> np.ndarray:
    total, count = np.zeros(shape), np.zeros(shape)
    for summary_id, value in rows:
        i, j = index[summary_id]
        total[i, j] += value
        count[i, j] += 1
    with np.errstate(invalid="ignore"):
        return total / count


def _acu(round_, index, shape) -> tuple[np.ndarray | None, str]:
    """The round's imported normalized ACU scores, else those of the dataset's latest scores run."""
    rows = list(SummaryACUScore.objects.filter(round=round_).values_list("summary_id", "normalized_acu"))
    if rows:
        return _matrix(index, rows, shape), "imported with the ratings"
    run = latest_run(round_.dataset, None, ScoringRun.Kind.SCORES)
    part = run_summaries(run) if run is not None else {}
    if part.get("ids"):
        pairs = [(s, v) for s, v in zip(part["ids"], part["normalized_acu"], strict=False) if s in index]
        if pairs:
            return _matrix(index, pairs, shape), f"scoring run {run.pk}"
    return None, ""


def protocol_data(round_: RatingRound) -> ProtocolData:
    rated = ProtocolRating.objects.filter(round=round_)
    summary_ids = set(rated.values_list("summary_id", flat=True)) | set(
        SummaryACUScore.objects.filter(round=round_).values_list("summary_id", flat=True)
    )
    summaries = list(
        Summary.objects.filter(pk__in=summary_ids)
        .order_by("document__position", "system__name")
        .values_list("pk", "document_id", "document__external_id", "system__name", "word_count")
    )
    doc_ids = list(dict.fromkeys(s[1] for s in summaries))
    documents = list(dict.fromkeys(s[2] for s in summaries))
    systems = sorted({s[3] for s in summaries})
    d_index, s_index = {d: i for i, d in enumerate(doc_ids)}, {s: j for j, s in enumerate(systems)}
    index = {pk: (d_index[doc], s_index[system]) for pk, doc, _, system, _ in summaries}
    shape = (len(doc_ids), len(systems))
    length = _matrix(index, [(pk, words) for pk, _, _, _, words in summaries], shape)
    means, ratings = {}, {}
    for protocol in PROTOCOLS:
        rows = list(rated.filter(protocol=protocol).values_list("summary_id", "rater", "score"))
        means[protocol] = _matrix(index, [(s, v) for s, _, v in rows], shape)
        named = [(index[s], r, v) for s, r, v in rows if r]
        ratings[protocol] = Ratings(
            np.array([ij[0] for ij, _, _ in named], dtype=int),
            np.array([ij[1] for ij, _, _ in named], dtype=int),
            np.array([r for _, r, _ in named], dtype=object),
            np.array([v for _, _, v in named], dtype=float),
        )
    acu, acu_source = _acu(round_, index, shape)
    metrics: dict[str, list] = {}
    metric_rows = MetricScore.objects.filter(dataset=round_.dataset, document_id__in=doc_ids).values_list(
        "metric", "document_id", "system__name", "value"
    )
    for metric, doc, system, value in metric_rows:
        if system in s_index:
            metrics.setdefault(metric, []).append((d_index[doc], s_index[system], value))
    metric_matrices = {}
    for metric, cells in metrics.items():
        m = np.full(shape, np.nan)
        for i, j, v in cells:
            m[i, j] = v
        metric_matrices[metric] = m
    return ProtocolData(round_, documents, systems, means, ratings, acu, acu_source, length, metric_matrices)
