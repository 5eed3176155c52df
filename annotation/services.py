"""Writes on annotation data that views, commands and tasks share."""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from .models import ACU
from .roles import LEAD, ROLES, WORKER


class ACULocked(Exception):
    """The ACU has judgments: its text is frozen so that they keep their meaning."""


def edit_acu(*, acu_id: int, text: str) -> ACU:
    """Change an ACU's text, refused once any worker has judged it.

    Judgments point at the ACU row; allowing an edit would silently change what they mean.
    To correct a judged ACU, add a new ACU instead (the old one keeps its judgments).
    """
    text = text.strip()
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


def create_user_with_role(*, username: str, password: str, role: str, email: str = ""):
    """Create (or reset) a user holding one role; leads are staff so they can use the admin."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
    User = get_user_model()
    with transaction.atomic():
        user, _ = User.objects.get_or_create(username=username, defaults={"email": email})
        user.set_password(password)
        user.is_staff = role == LEAD
        user.save()
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    if role == WORKER:
        from hits.models import Worker

        Worker.objects.get_or_create(
            provider=Worker.Provider.INHOUSE, external_id=username, defaults={"user": user}
        )
    return user
