"""Shared argument handling of the scoring commands: a dataset name and an optional round (a
label round, or a rating round of the protocol commands)."""

from django.core.management.base import CommandError

from annotation.models import Dataset
from hits.models import Batch
from scoring.protocols.selectors import pick_round
from scoring.results.exports.rounds import without_acu_labels


def named_dataset(name: str) -> Dataset:
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        raise CommandError(f"No dataset named {name!r}.")
    return dataset


def dataset_and_rating_round(name: str, round_id: int | None):
    """The dataset and its rating round `round_id` (default: the latest)."""
    dataset = named_dataset(name)
    round_ = pick_round(dataset, round_id)
    if round_ is None:
        raise CommandError(f"Dataset {dataset.name!r} has no such rating round (import ratings first).")
    return dataset, round_


def dataset_and_round(name: str, round_id: int | None):
    dataset = named_dataset(name)
    batch = None
    if round_id is not None:
        batch = Batch.objects.filter(pk=round_id, dataset=dataset).first()
        if batch is None:
            raise CommandError(f"Dataset {name!r} has no round {round_id} (a batch or an imported label set).")
        refused = without_acu_labels(batch)
        if refused:
            raise CommandError(refused)
    return dataset, batch
