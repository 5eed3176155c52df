"""Decisions made at a provider, mirrored through the same review functions as the lead's.

MTurk approves on its side (the requester's call made elsewhere, or auto-approval after the
HIT type's delay) and rejects; Prolific approves and rejects submissions. Each such decision
goes through `review.approve` / `review.reject` with `at_provider=True`: the provider is not
called again, and the reward and fee reach the ledger exactly once (their keys are the
assignment's), however often a sync sees the same decision.
"""

import logging

from hits.models import Assignment
from hits.money import MAX_FEEDBACK
from hits.services import review

logger = logging.getLogger(__name__)


def provider_decided(assignment_id: int, decision: str, *, feedback: str = "", source: str = "") -> bool:
    """Mirror `decision` ("approved" or "rejected") taken at the provider; True when it changed
    our assignment (False when it was already decided the same way, or cannot be)."""
    current = Assignment.objects.filter(pk=assignment_id).values_list("status", flat=True).first()
    if current is None:
        return False
    target = Assignment.Status.APPROVED if decision == "approved" else Assignment.Status.REJECTED
    if current == target:
        return False
    if current != Assignment.Status.SUBMITTED:
        logger.warning(
            "provider %s %s assignment %s, which is %s here: left as is", source, decision, assignment_id, current
        )
        return False
    try:
        if decision == "approved":
            review.approve(assignment_id=assignment_id, at_provider=True)
        else:
            text = (feedback or f"Rejected at {source or 'the provider'}.")[:MAX_FEEDBACK]
            review.reject(assignment_id=assignment_id, feedback=text, at_provider=True)
    except review.ReviewError as exc:
        logger.error("could not mirror %s of assignment %s from %s: %s", decision, assignment_id, source, exc)
        return False
    logger.info("mirrored %s of assignment %s from %s", decision, assignment_id, source)
    return True
