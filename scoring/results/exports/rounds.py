"""Which rounds hold ACU labels: the one rule the commands (`scoring/management/commands/_dataset.py`)
and the API's exports read before exporting or scoring a round."""

from hits.models import Batch


def without_acu_labels(batch: Batch | None) -> str | None:
    """Why the round `batch` holds no ACU labels of people (a machine round, a rating batch), as a
    message naming where its figures are; None for a label round or for all rounds (None)."""
    if batch is None:
        return None
    if batch.kind == Batch.Kind.MACHINE:
        return (
            f"Round {batch.pk} is a machine round (a judge run): it holds no human judgments; "
            'its figures are in `judge_dataset` and under "machine" in `compute_scores --json`.'
        )
    if batch.protocol:
        return (
            f"Round {batch.pk} is a rating batch ({batch.protocol}): it holds ratings, not ACU labels; "
            "its figures are on the Protocols page and `export_ratings` exports them."
        )
    return None
