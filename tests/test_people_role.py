"""Issue 47, dead end: a lead changes a person's role on the People page (it needed the shell)."""

import pytest

from config.roles import LEAD
from hits.models import Worker
from hits.services.people import PeopleError, set_role

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def roles_of(user):
    return sorted(user.groups.values_list("name", flat=True))


def test_a_lead_changes_a_role_on_the_people_page(client, lead, author):
    client.force_login(lead)
    page = client.get("/people/").content.decode()
    assert f'action="/people/{author.pk}/role/"' in page and f'action="/people/{lead.pk}/role/"' not in page

    response = client.post(f"/people/{author.pk}/role/", {"role": "worker"}, follow=True)
    assert "arthur-author is now worker" in response.content.decode()
    author.refresh_from_db()
    assert roles_of(author) == ["worker"] and not author.is_staff
    assert Worker.objects.filter(provider=Worker.Provider.INHOUSE, external_id=author.username, user=author).exists()

    client.post(f"/people/{author.pk}/role/", {"role": LEAD})
    author.refresh_from_db()
    assert roles_of(author) == [LEAD] and author.is_staff
    assert client.get(f"/people/{author.pk}/role/").status_code == 405  # no GET writes


def test_refused_role_changes_say_why(client, lead, author):
    with pytest.raises(PeopleError, match="Choose a role"):
        set_role(user_id=author.pk, role="admin", by=lead)
    with pytest.raises(PeopleError, match="your own account"):
        set_role(user_id=lead.pk, role="worker", by=lead)
    with pytest.raises(PeopleError, match="No such person"):
        set_role(user_id=999999, role="worker", by=lead)
    client.force_login(lead)
    page = client.post(f"/people/{author.pk}/role/", {"role": "boss"}, follow=True).content.decode()
    assert "Choose a role" in page
    assert roles_of(author) == ["author"]


def test_only_a_lead_changes_roles(client, author, worker):
    client.force_login(author)
    response = client.post(f"/people/{worker.pk}/role/", {"role": LEAD})
    assert response.status_code in (302, 403)
    assert roles_of(worker) == ["worker"]


@pytest.mark.parametrize("action,data", [("reset", {}), ("deactivate", {}), ("role", {"role": "worker"})])
def test_a_lead_cannot_take_over_or_demote_a_superuser_on_the_people_page(client, lead, action, data):
    # The admin refuses a lead any change to a superuser's account (config/user_admin.py); the
    # People page did not: a lead reset a superuser's password (shown to them) and signed in as it.
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", "root@example.org", "root-password-123456")
    client.force_login(lead)
    page = client.post(f"/people/{root.pk}/{action}/", data, follow=True).content.decode()
    assert "Only a superuser" in page and "New password" not in page
    root.refresh_from_db()
    assert root.check_password("root-password-123456") and root.is_active and root.is_staff and root.is_superuser
    # A superuser still can.
    other = get_user_model().objects.create_superuser("admin2", "a2@example.org", "admin2-password-123456")
    client.force_login(other)
    assert "New password for root" in client.post(f"/people/{root.pk}/reset/", follow=True).content.decode()
