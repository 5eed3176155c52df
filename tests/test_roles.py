"""Roles (config/roles.py: the user read per request by Django's ModelBackend, their role groups
kept in the cache and forgotten on every change): every request sees the roles as they are now
(a role taken away or given counts from the next request on, in every process); superusers are
leads, inactive users nobody."""

import os
import uuid

import pytest
import redis
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django_redis.cache import RedisCache

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


def _group_queries(captured) -> int:
    return sum(q["sql"].startswith('SELECT "auth_group"."name"') for q in captured.captured_queries)


def test_roles_are_read_once_then_from_the_cache(client, worker):
    client.force_login(worker)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("work")).status_code == 200
    assert sum('FROM "auth_user"' in q["sql"] for q in captured.captured_queries) == 1
    assert _group_queries(captured) == 1
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("work")).status_code == 200
    assert _group_queries(captured) == 0  # the cached copy


def test_every_way_of_changing_groups_counts_from_the_next_request(client, worker):
    """Changed from the user's side or the group's, added, removed, cleared, set, the group
    deleted: the cached roles are forgotten each time."""
    group = Group.objects.get(name=WORKER)
    client.force_login(worker)

    def status():
        return client.get(reverse("work")).status_code

    assert status() == 200
    group.user_set.remove(worker)
    assert status() == 403
    group.user_set.add(worker)
    assert status() == 200
    worker.groups.clear()
    assert status() == 403
    worker.groups.set([group])
    assert status() == 200
    group.user_set.clear()
    assert status() == 403
    worker.groups.add(group)
    assert status() == 200
    group.delete()
    assert status() == 403


def test_a_role_change_in_the_admin_counts_from_the_next_request(client, worker):
    lead = get_user_model().objects.create_superuser("root", "root@example.org", PASSWORD)
    other = Client()
    other.force_login(worker)
    assert other.get(reverse("work")).status_code == 200
    client.force_login(lead)
    page = client.get(reverse("admin:auth_user_change", args=[worker.pk]))
    form = page.context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "groups"}
    data.update(groups=[Group.objects.get(name=LEAD).pk], password=form.initial["password"])
    data.update({"date_joined_0": "2026-01-01", "date_joined_1": "00:00:00", "last_login_0": "", "last_login_1": ""})
    reply = client.post(reverse("admin:auth_user_change", args=[worker.pk]), data)
    assert reply.status_code == 302, reply.context["adminform"].form.errors if reply.context else reply
    assert other.get(reverse("work")).status_code == 403
    assert other.get(reverse("people")).status_code == 200


REDIS = os.environ.get("TEST_SESSION_REDIS", "redis://127.0.0.1:6379/12")


@pytest.fixture
def redis_cache(settings):
    """The cache as deployed (CACHE_URL: django-redis), this test's own key prefix."""
    prefix = f"t{uuid.uuid4().hex}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS,
            "KEY_PREFIX": prefix,
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 2, "SOCKET_TIMEOUT": 2},
        }
    }
    yield RedisCache(REDIS, {"KEY_PREFIX": prefix})  # another process's client of the same Redis
    client = redis.Redis.from_url(REDIS)
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)


def test_with_redis_a_change_is_seen_by_every_process(redis_cache, client, worker):
    client.force_login(worker)
    assert client.get(reverse("work")).status_code == 200
    assert redis_cache.get(f"roles:{worker.pk}") == [WORKER]  # shared: every process reads this copy
    worker.groups.remove(Group.objects.get(name=WORKER))
    assert redis_cache.get(f"roles:{worker.pk}") is None
    assert client.get(reverse("work")).status_code == 403


def test_with_redis_down_the_roles_come_from_the_database(settings, client, worker, caplog):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens there
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    }
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"
    client.force_login(worker)
    assert client.get(reverse("work")).status_code == 200
    worker.groups.remove(Group.objects.get(name=WORKER))
    assert client.get(reverse("work")).status_code == 403
    assert "role cache unavailable" in caplog.text
