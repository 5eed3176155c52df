"""Idle panel sessions give their place back through hits.release (an adapter module: models
and the release only).

A panel session holds at most one place at a time, the task it is working on. A task started
more than PANEL_IDLE_SECONDS ago and still unanswered goes back to the pool and the session
is marked idle; the same link later resumes it with a new task."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from hits.models import Assignment
from hits.providers.panel.models import PanelSession
from hits.release import release

logger = logging.getLogger(__name__)


def given_back_at(assignment: Assignment):
    """When a held panel task goes back to the pool unanswered: PANEL_IDLE_SECONDS after it
    started (release_idle), or its deadline if that comes first. Its page tells the participant."""
    idle_at = assignment.created_at + timedelta(seconds=settings.PANEL_IDLE_SECONDS)
    return min(idle_at, assignment.deadline) if assignment.deadline else idle_at


def release_idle(now=None) -> int:
    """Expire the held tasks of idle sessions; returns how many places were given back."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.PANEL_IDLE_SECONDS)
    released = 0
    for session in PanelSession.objects.filter(status=PanelSession.Status.ACTIVE).iterator():
        with transaction.atomic():
            held = session.assignments().filter(status=Assignment.Status.ASSIGNED, created_at__lt=cutoff)
            stale = held.exists()
            if not stale and session.assignments().filter(status=Assignment.Status.ASSIGNED).exists():
                continue  # working on a task started recently
            last_task = session.assignments().order_by("-created_at").values_list("created_at", flat=True).first()
            if not stale and last_task is not None and last_task >= cutoff:
                continue
            count = release(held)
            PanelSession.objects.filter(pk=session.pk, status=PanelSession.Status.ACTIVE).update(
                status=PanelSession.Status.IDLE
            )
        if count:
            logger.info(
                "panel session %s of batch %s idle: %s place(s) given back", session.key, session.batch_id, count
            )
        released += count
    return released
