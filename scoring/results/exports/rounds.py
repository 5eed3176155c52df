"""Which rounds hold ACU labels: the one rule the commands (`scoring/management/commands/_dataset.py`)
and the API's exports read before exporting or scoring a round."""

from hits.models import Batch, JudgeRun


def without_acu_labels(batch: Batch | None, api: bool = False) -> str | None:
    """Why the round `batch` holds no ACU labels of people (a machine round, a rating batch), as a
    message naming where its figures are (for an API client, `api`, the API's address of them; else the
    commands); None for a label round or for all rounds (None)."""
    if batch is None:
        return None
    if batch.kind == Batch.Kind.MACHINE:
        run = JudgeRun.objects.filter(batch=batch).values_list("pk", flat=True).first()
        where = (
            f"GET /api/judge-runs/{run}/"
            if api and run is not None
            else '`judge_dataset` and under "machine" in `compute_scores --json`'
        )
        return f"Round {batch.pk} is a machine round (a judge run): it holds no human judgments; its figures are in {where}."
    if batch.protocol:
        where = (
            f"at GET /api/datasets/{batch.dataset_id}/protocols/?rating_round={batch.pk}"
            if api
            else "on the Protocols page and `export_ratings` exports them"
        )
        return f"Round {batch.pk} is a rating batch ({batch.protocol}): it holds ratings, not ACU labels; its figures are {where}."
    return None
