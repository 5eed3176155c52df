"""The lead's way out of an authoring deadlock: assign a reviewer, or approve or send back a reference in review."""

import logging

from django.db import transaction
from django.utils import timezone

from annotation.models import ACU, Reference, ReviewComment
from annotation.services.authoring import DECIDED, AlreadyDone, AuthoringError, authors, check_seen
from annotation.text import clean_comment_text

logger = logging.getLogger(__name__)


def possible_reviewers(reference: Reference):
    """Authors who may review this reference: every active author but its writer."""
    return authors().exclude(pk=reference.writer_id)


def _in_review(reference_id: int, base_version: int | None = None, by=None) -> Reference:
    """The reference in review, locked; refused to `by` when they wrote it (a lead who also writes
    never decides on their own ACUs)."""
    reference = Reference.objects.select_for_update().get(pk=reference_id)
    if by is not None and reference.writer_id == by.pk:
        raise AuthoringError("You wrote this reference; another author or lead must review it.")
    if by is not None and reference.status in DECIDED:  # a decision again (a second tab, Back, a double click)
        raise AlreadyDone(f"This reference was {DECIDED[reference.status]} already; nothing was decided again.")
    if reference.status != Reference.Status.IN_REVIEW:
        raise AuthoringError(f"This reference is {reference.get_status_display().lower()}, not in review.")
    check_seen(reference, base_version)
    return reference


def assign_reviewer(*, reference_id: int, reviewer_id: int, by) -> Reference:
    with transaction.atomic():
        reference = _in_review(reference_id)
        reviewer = possible_reviewers(reference).filter(pk=reviewer_id).first()
        if reviewer is None:
            raise AuthoringError("Choose an author other than the writer as reviewer.")
        reference.reviewer = reviewer
        reference.version += 1
        reference.save(update_fields=["reviewer", "version"])
    logger.info("reference %s: reviewer %s assigned by lead %s", reference.pk, reviewer.pk, getattr(by, "pk", None))
    return reference


def lead_approve(*, reference_id: int, by, base_version: int | None = None) -> Reference:
    """Approve as the lead: the ACUs can go into crowd tasks (refused when the reference changed
    since the page showed `base_version`)."""
    now = timezone.now()
    with transaction.atomic():
        reference = _in_review(reference_id, base_version, by)
        reference.acus.update(status=ACU.Status.APPROVED, updated_at=now)
        reference.comments.filter(resolved_at__isnull=True).update(resolved_at=now)
        reference.status = Reference.Status.APPROVED
        reference.approved_at = now
        reference.version += 1
        reference.save(update_fields=["status", "approved_at", "version"])
    logger.info("reference %s approved by lead %s", reference.pk, getattr(by, "pk", None))
    return reference


def lead_send_back(*, reference_id: int, by, text: str, base_version: int | None = None) -> Reference:
    """Send the reference back to its writer with the lead's comment."""
    try:
        text = clean_comment_text(text or "", empty="Say what the writer should change.")
    except ValueError as exc:  # empty, too long, a control character
        raise AuthoringError(str(exc)) from None
    with transaction.atomic():
        reference = _in_review(reference_id, base_version, by)
        ReviewComment.objects.create(reference=reference, author=by, text=text)
        reference.status = Reference.Status.CHANGES
        reference.version += 1
        reference.save(update_fields=["status", "version"])
    logger.info("reference %s sent back by lead %s", reference.pk, getattr(by, "pk", None))
    return reference
