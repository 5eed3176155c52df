"""The sign-in backend reads a user's roles with the user (one query), and every request sees
the roles as they are now: a role taken away or given counts from the next request on."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from config.roles import LEAD, WORKER

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_a_signed_in_request_reads_user_and_roles_in_one_query(client, worker):
    client.force_login(worker)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("work")).status_code == 200
    sql = [q["sql"] for q in captured.captured_queries]
    user_reads = [s for s in sql if 'FROM "auth_user"' in s]
    assert len(user_reads) == 1 and "auth_group" in user_reads[0]
    assert not any(s.startswith('SELECT "auth_group"."name"') for s in sql)  # no second query for the roles


def test_roles_follow_changes_from_the_next_request(client, worker):
    client.force_login(worker)
    assert client.get(reverse("work")).status_code == 200
    worker.groups.remove(Group.objects.get(name=WORKER))
    assert client.get(reverse("work")).status_code == 403
    worker.groups.add(Group.objects.get(name=LEAD))
    assert client.get(reverse("people")).status_code == 200


def test_superusers_are_leads_and_inactive_users_nobody(client):
    admin = get_user_model().objects.create_superuser("root", "root@example.org", PASSWORD)
    client.force_login(admin)
    assert client.get(reverse("people")).status_code == 200
    admin.is_active = False
    admin.save()
    assert client.get(reverse("people")).status_code == 302  # signed out: to the login page


def test_sessions_of_the_earlier_backend_stay_signed_in(client, worker):
    client.force_login(worker, backend="django.contrib.auth.backends.ModelBackend")
    assert client.get(reverse("work")).status_code == 200


def test_a_session_holding_no_user_id_is_signed_out(worker):
    from config.auth_backend import RoleBackend

    assert RoleBackend().get_user("not-a-number") is None
    assert RoleBackend().get_user(worker.pk + 1000) is None
    assert RoleBackend().get_user(str(worker.pk)).pk == worker.pk


def test_the_orm_read_used_on_other_databases_gives_the_same_user_and_roles(worker, monkeypatch):
    from config import auth_backend

    fast = auth_backend.RoleBackend().get_user(worker.pk)
    monkeypatch.setattr(auth_backend.connection, "vendor", "sqlite")
    slow = auth_backend.RoleBackend().get_user(worker.pk)
    assert slow.pk == fast.pk and slow._role_cache == fast._role_cache == {WORKER}
