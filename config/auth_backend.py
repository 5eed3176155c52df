"""Sign-in backend that loads a user's roles with the user: one query per signed-in request.

Django's ModelBackend reads the user by primary key on every request; the pages then ask for
the user's role groups (config.roles.user_roles), a second query. Here the user is read with
the names of their groups, so the roles are known without another query. Permissions (the admin's
checks) are ModelBackend's, unchanged.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import Exists, OuterRef

from .roles import LEAD, ROLES


def _user_with_roles_sql(model) -> str:
    """The user's row and the names of their role groups, as one array (one subquery to plan,
    and SQL written once instead of compiled by the ORM on every request)."""
    user, quote = model._meta, connection.ops.quote_name
    columns = ", ".join(f"u.{quote(f.column)}" for f in user.concrete_fields)
    through = model.groups.through._meta
    return (
        f"SELECT {columns}, ARRAY(SELECT g.{quote('name')} FROM {quote(through.db_table)} ug"
        f" JOIN {quote(Group._meta.db_table)} g ON g.id = ug.{quote('group_id')}"
        f" WHERE ug.{quote(through.get_field('user').column)} = u.{quote(user.pk.column)}) AS role_names"
        f" FROM {quote(user.db_table)} u WHERE u.{quote(user.pk.column)} = %s"
    )


def _holds(role: str) -> Exists:
    return Exists(Group.objects.filter(user=OuterRef("pk"), name=role))


def _read(model, pk):
    """The user with `role_names` (the names of their groups): written SQL on PostgreSQL, one
    EXISTS per role through the ORM elsewhere (SQLite has no ARRAY subquery)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # the cursor, not raw(): no RawQuerySet to set up per request
            cursor.execute(_user_with_roles_sql(model), [pk])
            row = cursor.fetchone()
        if row is None:
            return None
        fields = model._meta.concrete_fields
        user = model.from_db(connection.alias, [f.attname for f in fields], row[: len(fields)])
        user.role_names = row[len(fields)]
        return user
    user = model._default_manager.annotate(**{f"_holds_{role}": _holds(role) for role in ROLES}).filter(pk=pk).first()
    if user is not None:
        user.role_names = [role for role in ROLES if getattr(user, f"_holds_{role}")]
    return user


class RoleBackend(ModelBackend):
    def get_user(self, user_id):
        model = get_user_model()
        try:
            pk = model._meta.pk.to_python(user_id)
        except ValidationError:  # a session holding an id of another shape: nobody
            return None
        user = _read(model, pk)
        if user is None or not self.user_can_authenticate(user):
            return None
        names = user.role_names
        roles = {role for role in ROLES if role in (names or ())}
        if user.is_superuser:
            roles.add(LEAD)
        user._role_cache = roles
        return user
