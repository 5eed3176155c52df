"""Sign-in backend that loads a user's roles with the user: one query per signed-in request.

Django's ModelBackend reads the user by primary key on every request; the pages then ask for
the user's role groups (config.roles.user_roles), a second query. Here the user is read with
one EXISTS per role, so the roles are known without another query. Permissions (the admin's
checks) are ModelBackend's, unchanged.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef

from .roles import LEAD, ROLES


def _holds(role: str) -> Exists:
    return Exists(Group.objects.filter(user=OuterRef("pk"), name=role))


class RoleBackend(ModelBackend):
    def get_user(self, user_id):
        model = get_user_model()
        user = (
            model._default_manager.annotate(**{f"_holds_{role}": _holds(role) for role in ROLES})
            .filter(pk=user_id)
            .first()
        )
        if user is None or not self.user_can_authenticate(user):
            return None
        roles = {role for role in ROLES if getattr(user, f"_holds_{role}")}
        if user.is_superuser:
            roles.add(LEAD)
        user._role_cache = roles
        return user
