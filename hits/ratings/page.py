"""What a rating HIT asks (reads only): the summaries of its example, in an order shuffled per
worker, what its protocol shows beside them, and the check of posted ratings."""

import random

from annotation.models import Document, ReferenceSentence, Summary
from hits.models import HIT, Batch

from . import PROTOCOLS, SCORES, instructions


class RatingsRefused(ValueError):
    """Posted ratings that cannot be stored; the message is for the worker."""


def example_summaries(batch: Batch, document_id: int):
    """The summaries a rating HIT of `batch` on this document asks about (of the batch's systems;
    none chosen: all), in system order."""
    summaries = Summary.objects.filter(document_id=document_id).order_by("system__name", "pk")
    systems = list(batch.systems.values_list("pk", flat=True))
    return summaries.filter(system_id__in=systems) if systems else summaries


def content(hit: HIT, seed: str = "") -> dict:
    """The rating task page's content: the summaries (shuffled by `seed`, the worker), the
    protocol, its instructions, and the document (Ref-free) or the reference (Ref-based); Prior
    shows neither."""
    batch = hit.batch
    protocol = PROTOCOLS[batch.protocol]
    document_id = hit.summary.document_id
    items = list(example_summaries(batch, document_id).only("pk", "text"))
    random.Random(f"{hit.pk}:{seed}").shuffle(items)
    shown = {}
    if protocol.shows == "document":
        shown["document"] = Document.objects.filter(pk=document_id).values_list("source", flat=True).first() or ""
    elif protocol.shows == "reference":
        sentences = ReferenceSentence.objects.filter(reference__document_id=document_id).order_by("position")
        shown["reference"] = " ".join(sentences.values_list("text", flat=True))
    return {
        "rating": protocol,
        "items": items,
        "instructions": instructions(batch),
        "scores": SCORES,
        "acus": [],
        **shown,
    }


def parse(raw) -> dict[int, int]:
    """{summary id: score} from the posted answers: whole numbers 1 to 5."""
    if not isinstance(raw, dict):
        raise RatingsRefused("The ratings are missing.")
    parsed = {}
    for key, value in raw.items():
        try:
            summary_id = int(key)
        except (TypeError, ValueError):
            raise RatingsRefused(f"Unknown summary {key!r} in the ratings.") from None
        if isinstance(value, bool) or str(value).strip() not in {str(s) for s in SCORES}:
            raise RatingsRefused(f"The rating of summary {summary_id} must be a whole number from 1 to 5.")
        parsed[summary_id] = int(str(value).strip())
    return parsed


def check_complete(hit: HIT, parsed: dict[int, int]) -> None:
    """Every summary the HIT asks about rated, and nothing else."""
    wanted = set(example_summaries(hit.batch, hit.summary.document_id).values_list("pk", flat=True))
    given = set(parsed)
    if given - wanted:
        raise RatingsRefused("The ratings name summaries that are not part of this task; reload the task.")
    if wanted - given:
        raise RatingsRefused(
            f"{len(wanted - given)} of {len(wanted)} summaries have no rating yet; rate all before submitting."
        )
