"""Shared argument handling of the scoring commands: a dataset name and an optional round."""

from django.core.management.base import CommandError

from annotation.models import Dataset
from hits.models import Batch


def dataset_and_round(name: str, round_id: int | None):
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        raise CommandError(f"No dataset named {name!r}.")
    batch = None
    if round_id is not None:
        batch = Batch.objects.filter(pk=round_id, dataset=dataset).first()
        if batch is None:
            raise CommandError(f"Dataset {name!r} has no round {round_id} (a batch or an imported label set).")
        if batch.kind == Batch.Kind.MACHINE:
            raise CommandError(
                f"Round {round_id} is a machine round (a judge run): it holds no human judgments; "
                'its figures are in `judge_dataset` and under "machine" in `compute_scores --json`.'
            )
    return dataset, batch
