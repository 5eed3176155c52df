"""Periodic crowd chores, thin over the services."""
from celery import shared_task

from . import batches, handout, review
from .models import Batch


def run_or_enqueue(task, *args):
    """Run in-process when tasks are eager (no broker: the embedded default) and return
    (True, result); otherwise enqueue after the transaction commits and return (False, None)."""
    if task.app.conf.task_always_eager:
        return True, task.apply(args=args).get()
    task.delay_on_commit(*args)
    return False, None


@shared_task(acks_late=True)
def expire_abandoned_assignments() -> int:
    return handout.expire_abandoned()


@shared_task(acks_late=True)
def auto_approve_submissions() -> int:
    return review.auto_approve_due()


@shared_task(acks_late=True)
def publish_batch(batch_id: int) -> str:
    """Publish (or resume publishing) a batch; idempotent, so a redelivered task is safe."""
    try:
        batches.publish_batch(Batch.objects.get(pk=batch_id))
    except batches.BatchError as exc:
        return str(exc)  # recorded on the batch as last_error for the lead
    return "published"


@shared_task(acks_late=True)
def sync_provider_batches() -> int:
    """Mirror provider-side assignment states for every open MTurk batch."""
    from .mturk_sync import sync_open_batches

    return sync_open_batches()


@shared_task(acks_late=True)
def sync_prolific_batches() -> int:
    """Mirror Prolific submissions of every open Prolific batch and release abandoned sessions."""
    from .prolific_sync import sync_open_batches

    return sync_open_batches()
