"""The three roles (Django groups) and the decorator every page uses to admit them."""

from functools import wraps

from django.contrib.auth.models import Group, Permission
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.utils.functional import SimpleLazyObject

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


def user_roles(user) -> set[str]:
    if not user.is_authenticated:
        return set()
    cached = getattr(user, "_role_cache", None)
    if cached is None:
        cached = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        if user.is_superuser:
            cached.add(LEAD)
        user._role_cache = cached
    return cached


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
