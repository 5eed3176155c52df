"""Accounts: a user with one role; a worker account also gets its in-house Worker row."""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from config.roles import LEAD, ROLES, WORKER
from hits.models import Worker


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
        Worker.objects.get_or_create(
            provider=Worker.Provider.INHOUSE, external_id=username, defaults={"user": user}
        )
    return user
