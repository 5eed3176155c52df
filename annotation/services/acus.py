"""Writes on annotation data that views, commands and tasks share."""

from django.db import transaction

from annotation.models import ACU
from annotation.text import clean_acu_text


class ACULocked(Exception):
    """The ACU has judgments: its text is frozen so that they keep their meaning."""


def edit_acu(*, acu_id: int, text: str) -> ACU:
    """Change an ACU's text, refused once any worker has judged it.

    Judgments point at the ACU row; allowing an edit would silently change what they mean.
    To correct a judged ACU, add a new ACU instead (the old one keeps its judgments).
    """
    text = clean_acu_text(text)  # ValueError with a message: control characters, over the length bound
    if not text:
        raise ValueError("An ACU cannot be empty.")
    with transaction.atomic():
        acu = ACU.objects.select_for_update().get(pk=acu_id)
        if acu.judgments.exists():
            raise ACULocked(
                f"ACU {acu.pk} has {acu.judgments.count()} judgments; its text is frozen. Add a new ACU instead."
            )
        acu.text = text
        acu.save(update_fields=["text", "updated_at"])
    return acu
