"""Annotation tasks, thin over the services: pre-drafting a dataset's ACUs."""

from celery import shared_task

from config.dispatch import dispatch


@shared_task(acks_late=True)
def predraft_dataset(job_id: int) -> str:
    """Draft every empty sentence of a dataset (see `drafting.service.predraft_dataset`);
    a rerun skips the sentences already drafted, so a redelivered task is safe."""
    from .drafting.service import predraft_dataset as run

    return run(job_id).status


def start_predraft(job_id: int) -> None:
    """Run in process or queue after the commit, as `config.dispatch` decides."""
    dispatch(predraft_dataset, job_id)
