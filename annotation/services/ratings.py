"""Protocol ratings (RoSE §5): import a protocol file's ratings and ACU scores into a dataset as
one rating round, and export them back in the same format.

An import matches each example to the dataset's document of the same id and each rated system
to that document's summary, whose text must be the one rated; anything that does not match is
refused with the example and system named, and nothing is written (one transaction).
"""

from dataclasses import dataclass

from django.db import transaction

from annotation.importing.errors import DatasetImportError
from annotation.importing.limits import check_text
from annotation.importing.protocols import PROTOCOLS, ProtocolExample
from annotation.models import Dataset, ProtocolRating, RatingRound, Summary, SummaryACUScore

MAX_ROUND_NAME = 100


@dataclass
class RatingImport:
    round_id: int
    name: str
    summaries: int
    ratings: int
    acu_scores: int

    def __str__(self):
        return (
            f"Imported rating round {self.name!r}: {self.ratings} ratings of {self.summaries} summaries"
            f" and {self.acu_scores} ACU scores"
        )


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def _summaries(dataset: Dataset) -> dict[tuple[str, str], tuple[int, str]]:
    rows = Summary.objects.filter(document__dataset=dataset).values_list(
        "pk", "document__external_id", "system__name", "text"
    )
    return {(doc, system): (pk, text) for pk, doc, system, text in rows}


def _rows(examples: list[ProtocolExample], summaries, round_: RatingRound):
    ratings, acu_scores, rated = [], [], set()
    for example in examples:
        doc = example.record.external_id
        for item in example.rated:
            found = summaries.get((doc, item.system))
            if found is None:
                raise DatasetImportError(f"example {doc!r}: the dataset has no summary of system {item.system!r}")
            pk, text = found
            if not _same_text(text, example.record.summaries[item.system]):
                raise DatasetImportError(
                    f"example {doc!r}: the summary of {item.system!r} in the file differs from the dataset's"
                )
            rated.add(pk)
            for protocol, score in item.scores.items():
                if protocol in item.raters:  # the raters' own scores stand; their mean is derived
                    continue
                ratings.append(
                    ProtocolRating(
                        round=round_, summary_id=pk, protocol=protocol, score=score, ratings=item.ratings[protocol]
                    )
                )
            for protocol, per_rater in item.raters.items():
                for rater, score in per_rater.items():
                    ratings.append(
                        ProtocolRating(round=round_, summary_id=pk, protocol=protocol, rater=rater, score=score)
                    )
            if item.acu is not None:
                acu_scores.append(
                    SummaryACUScore(round=round_, summary_id=pk, acu=item.acu, normalized_acu=item.normalized_acu)
                )
    return ratings, acu_scores, rated


def import_ratings(
    dataset: Dataset, examples: list[ProtocolExample], *, name: str = "imported", replace: bool = False, created_by=None
) -> RatingImport:
    """Store the examples' ratings and ACU scores as the round ``name`` of ``dataset``; raises
    DatasetImportError, writing nothing. ``replace`` replaces a round of the same name."""
    name = (name or "").strip()
    if not name or len(name) > MAX_ROUND_NAME:
        raise DatasetImportError(f"the rating round needs a name of 1 to {MAX_ROUND_NAME} characters")
    check_text(name, "the rating round's name")
    for example in examples:
        for item in example.rated:
            for rater in (r for per in item.raters.values() for r in per):
                check_text(rater, f"a rater name of example {example.record.external_id!r}")
    with transaction.atomic():
        existing = RatingRound.objects.select_for_update().filter(dataset=dataset, name=name).first()
        if existing is not None:
            if not replace:
                raise DatasetImportError(f"dataset {dataset.name!r} has a rating round named {name!r}")
            if existing.batches.exists():  # its ratings are collected by rating batches, kept with their pay
                raise DatasetImportError(
                    f"the rating round {name!r} is filled by rating batches of dataset {dataset.name!r}; "
                    "it cannot be replaced: import under another round name"
                )
            existing.delete()
        round_ = RatingRound.objects.create(dataset=dataset, name=name, created_by=created_by)
        ratings, acu_scores, rated = _rows(examples, _summaries(dataset), round_)
        ProtocolRating.objects.bulk_create(ratings, batch_size=2000)
        SummaryACUScore.objects.bulk_create(acu_scores, batch_size=2000)
    return RatingImport(round_.pk, name, len(rated), len(ratings), len(acu_scores))


def export_ratings(round_: RatingRound) -> list[dict]:
    """The round as a protocol file (a list of examples), which ``import_ratings`` reads back:
    per summary the mean score of each protocol, how many ratings each protocol's mean holds under
    ``ratings`` ({protocol: n}: the protocols of a summary may hold different numbers), each
    rater's own score under ``raters``, and the ACU scores."""
    by_summary: dict[int, dict] = {}
    rows = round_.ratings.values_list("summary_id", "protocol", "rater", "score", "ratings").order_by("pk")
    for summary_id, protocol, rater, score, ratings in rows:
        entry = by_summary.setdefault(summary_id, {})
        if rater:
            entry.setdefault("raters", {}).setdefault(protocol, {})[rater] = score
        else:
            entry[protocol] = score
            entry.setdefault("ratings", {})[protocol] = ratings
    for summary_id, acu, normalized in round_.acu_scores.values_list("summary_id", "acu", "normalized_acu"):
        by_summary.setdefault(summary_id, {}).update(acu=acu, normalized_acu=normalized)
    for entry in by_summary.values():  # a mean of the raters' scores where only raters were stored
        for protocol, per_rater in entry.get("raters", {}).items():
            if protocol not in entry:
                entry[protocol] = sum(per_rater.values()) / len(per_rater)
                entry.setdefault("ratings", {})[protocol] = len(per_rater)
        if "ratings" in entry:
            entry["ratings"] = {p: entry["ratings"][p] for p in PROTOCOLS if p in entry["ratings"]}
    summaries = (
        Summary.objects.filter(pk__in=by_summary)
        .select_related("document__reference", "system")
        .prefetch_related("document__reference__sentences")
        .order_by("document__position", "system__name")
    )
    examples: dict[int, dict] = {}
    for summary in summaries:
        document = summary.document
        example = examples.setdefault(
            document.pk,
            {
                "example_id": document.external_id,
                "source": document.source,
                "reference": document.reference.text if hasattr(document, "reference") else "",
                "system_outputs": {},
                "annotations": {},
            },
        )
        example["system_outputs"][summary.system.name] = summary.text
        example["annotations"][summary.system.name] = by_summary[summary.pk]
    return list(examples.values())


__all__ = ["PROTOCOLS", "RatingImport", "export_ratings", "import_ratings"]
