"""An in-house worker's history (earnings, tasks, block, qualification) belongs to the account,
not to its username: a username given again to a new person, or taken by a renamed account,
must not hand them another person's Worker row."""

import pytest
from django.utils import timezone

from hits.models import Worker
from hits.services.people import create_user_with_role

from .conftest import PASSWORD

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def work_page(client, user):
    client.force_login(user)
    response = client.get("/work/")
    client.logout()
    return response


def test_a_deleted_workers_username_given_to_a_new_person_opens_a_fresh_history(client):
    first = create_user_with_role(username="worker1", password=PASSWORD, role="worker")
    assert work_page(client, first).status_code == 200
    old = Worker.objects.get(user=first)
    Worker.objects.filter(pk=old.pk).update(blocked_at=timezone.now(), block_reason="copied answers")
    first.delete()  # the study is over; a superuser removes the account (the Worker row stays: SET_NULL)

    second = create_user_with_role(username="worker1", password=PASSWORD, role="worker")
    page = work_page(client, second).content.decode()
    mine = Worker.objects.get(user=second)
    assert mine.pk != old.pk and mine.external_id == "worker1" and not mine.blocked
    assert "copied answers" not in page
    old.refresh_from_db()
    assert old.user is None and old.blocked and old.external_id != "worker1"  # its history is kept, apart


def test_a_renamed_account_keeps_its_own_row_and_its_old_name_is_free(client):
    alice = create_user_with_role(username="alice", password=PASSWORD, role="worker")
    work_page(client, alice)
    row = Worker.objects.get(user=alice)
    alice.username = "alice-study1"  # a lead renames the account in the admin
    alice.save()
    assert work_page(client, alice).status_code == 200
    row.refresh_from_db()
    assert Worker.objects.get(user=alice).pk == row.pk and row.external_id == "alice-study1"

    newcomer = create_user_with_role(username="alice", password=PASSWORD, role="worker")
    work_page(client, newcomer)
    assert Worker.objects.get(user=newcomer).pk != row.pk
    assert Worker.objects.get(user=alice).pk == row.pk
