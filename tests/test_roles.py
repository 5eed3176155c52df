"""Roles (config/roles.py, read per request with Django's ModelBackend): every request sees the
roles as they are now (a role taken away or given counts from the next request on); superusers
are leads, inactive users nobody."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from config.roles import LEAD, WORKER

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


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


def test_a_signed_in_request_reads_the_roles_in_a_query_of_their_own(client, worker):
    client.force_login(worker)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("work")).status_code == 200
    sql = [q["sql"] for q in captured.captured_queries]
    assert sum('FROM "auth_user"' in s for s in sql) == 1
    assert sum(s.startswith('SELECT "auth_group"."name"') for s in sql) == 1
