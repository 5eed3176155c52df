"""Annotation tasks, thin over the services: pre-drafting a dataset's ACUs."""

from celery import shared_task


@shared_task(acks_late=True)
def predraft_dataset(job_id: int) -> str:
    """Draft every empty sentence of a dataset (see `drafting.service.predraft_dataset`);
    a rerun skips the sentences already drafted, so a redelivered task is safe."""
    from .drafting.service import predraft_dataset as run

    return run(job_id).status


def start_predraft(job_id: int) -> None:
    """Run in-process when tasks are eager (no broker), else enqueue after the commit."""
    if predraft_dataset.app.conf.task_always_eager:
        predraft_dataset.apply(args=(job_id,))
    else:
        predraft_dataset.delay_on_commit(job_id)
