"""Periodic crowd chores, thin over the services."""
from celery import shared_task

from . import handout, review


@shared_task(acks_late=True)
def expire_abandoned_assignments() -> int:
    return handout.expire_abandoned()


@shared_task(acks_late=True)
def auto_approve_submissions() -> int:
    return review.auto_approve_due()
