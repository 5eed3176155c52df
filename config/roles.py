"""The three roles (Django groups) and the decorator every page uses to admit them."""

import contextlib
import logging
from functools import wraps

from django.contrib.auth.models import Group, Permission
from django.contrib.auth.views import redirect_to_login
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete
from django.utils.functional import SimpleLazyObject

logger = logging.getLogger(__name__)

LEAD = "lead"
AUTHOR = "author"
WORKER = "worker"
ROLES = (LEAD, AUTHOR, WORKER)

# Leads manage every model of these apps in the admin.
LEAD_APPS = ("annotation", "hits", "scoring")


def ensure_role_groups(**kwargs):
    """post_migrate: create the role groups and give leads the permissions of our apps."""
    groups = {name: Group.objects.get_or_create(name=name)[0] for name in ROLES}
    # Leads manage our data and the people of the project (accounts and their roles).
    people = Permission.objects.filter(
        content_type__app_label="auth", codename__in=["view_user", "add_user", "change_user", "view_group"]
    )
    groups[LEAD].permissions.set(Permission.objects.filter(content_type__app_label__in=LEAD_APPS) | people)


# A user's role groups are kept in Django's cache (Redis when CACHE_URL is set, shared by every
# process) so a signed-in request reads the user only, not their groups too. Every change of a
# user's groups through the ORM (people page, admin, services) forgets the copy at once and again
# after its transaction commits (`forget_roles`); ROLE_CACHE_SECONDS bounds what a change made
# outside the ORM, or a per-process cache of several processes, could leave behind.
ROLE_CACHE_SECONDS = 60


def _role_key(user_id) -> str:
    return f"roles:{user_id}"


def _stored_roles(user_id) -> set[str]:
    key = _role_key(user_id)
    try:
        names = cache.get(key)
    except Exception as exc:  # noqa: BLE001 - redis.ConnectionError and friends: read the database
        logger.warning("role cache unavailable (%s): roles read from the database", exc.__class__.__name__)
        names = None
    if names is None:
        names = sorted(Group.objects.filter(user=user_id, name__in=ROLES).values_list("name", flat=True))
        with contextlib.suppress(Exception):  # unreachable cache: logged on the read above
            cache.set(key, names, ROLE_CACHE_SECONDS)
    return set(names)


def user_roles(user) -> set[str]:
    if not user.is_authenticated:
        return set()
    cached = getattr(user, "_role_cache", None)
    if cached is None:
        cached = _stored_roles(user.pk)
        if user.is_superuser:
            cached.add(LEAD)
        user._role_cache = cached
    return cached


def _forget(user_ids) -> None:
    keys = [_role_key(pk) for pk in user_ids]
    if not keys:
        return
    try:
        cache.delete_many(keys)
    except Exception as exc:  # noqa: BLE001 - the copies expire after ROLE_CACHE_SECONDS
        logger.warning(
            "role cache unavailable (%s): %d cached role sets not forgotten", exc.__class__.__name__, len(keys)
        )


def forget_roles(user_ids) -> None:
    """Drop the cached roles of these users now and once the current transaction commits (a
    request reading the old groups in between cannot leave them cached)."""
    user_ids = list(user_ids)
    _forget(user_ids)
    transaction.on_commit(lambda: _forget(user_ids))


def _groups_changed(sender, instance, action, reverse, pk_set, **kwargs):
    """m2m_changed of User.groups, from either side (user.groups.add, group.user_set.remove, ...)."""
    if not reverse:  # user.groups...: this user
        if action in ("post_add", "post_remove", "post_clear"):
            forget_roles([instance.pk])
    elif action == "pre_clear":  # group.user_set.clear(): its users, before they go
        forget_roles(instance.user_set.values_list("pk", flat=True))
    elif action in ("post_add", "post_remove"):  # group.user_set.add/remove(users)
        forget_roles(pk_set or ())


def _group_saved_or_deleted(sender, instance, **kwargs):
    """A role group renamed or deleted: its members' roles change."""
    if instance.pk is not None:
        forget_roles(instance.user_set.values_list("pk", flat=True))


def _user_deleted(sender, instance, **kwargs):
    """A deleted user's id may be given again (SQLite): no roles may carry over."""
    forget_roles([instance.pk])


def connect_role_signals() -> None:
    """Called once at start-up (annotation's AppConfig.ready)."""
    from django.contrib.auth import get_user_model

    user = get_user_model()
    m2m_changed.connect(_groups_changed, sender=user.groups.through, dispatch_uid="acu-roles-groups-changed")
    post_save.connect(_group_saved_or_deleted, sender=Group, dispatch_uid="acu-roles-group-saved")
    pre_delete.connect(_group_saved_or_deleted, sender=Group, dispatch_uid="acu-roles-group-deleted")
    post_delete.connect(_user_deleted, sender=user, dispatch_uid="acu-roles-user-deleted")


def has_role(user, *roles: str) -> bool:
    return bool(user_roles(user) & set(roles))


def role_required(*roles: str):
    """Admit only users holding one of `roles`: anonymous users go to the login page,
    others get 403."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not has_role(request.user, *roles):
                raise PermissionDenied(f"This page is for: {', '.join(roles)}.")
            return view(request, *args, **kwargs)

        wrapper.allowed_roles = roles  # type: ignore[attr-defined]  # read by the access tests
        return wrapper

    return decorator


def context_processor(request):
    """is_lead, is_author, is_worker for the templates, read only by a page that shows them (the
    task page, opened by its link, reads neither the account nor its roles)."""

    def holds(role: str) -> SimpleLazyObject:
        return SimpleLazyObject(lambda: role in user_roles(request.user))

    return {"is_lead": holds(LEAD), "is_author": holds(AUTHOR), "is_worker": holds(WORKER)}
