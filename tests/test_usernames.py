"""Usernames folded at creation as sign-in folds them; lookalikes refused (issue 26, item 11)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.urls import reverse

from hits.models import Worker
from hits.services.people import PeopleError, add_person, create_user_with_role

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

PASSWORD = "a-long-enough-pass-phrase"


def test_people_page_refuses_a_fullwidth_copy_of_an_existing_name(client, lead):
    create_user_with_role(username="demo-worker", password=PASSWORD, role="worker")
    client.force_login(lead)
    response = client.post(reverse("people"), {"username": "ｄemo-worker", "role": "worker", "password": PASSWORD})
    assert response.status_code == 400  # the form again, with what was typed (issue 27 item 13)
    assert 'value="ｄemo-worker"' in response.content.decode()
    shown = " ".join(str(m) for m in get_messages(response.wsgi_request))
    assert "is taken" in shown and "'demo-worker'" in shown
    assert get_user_model().objects.filter(username__endswith="emo-worker").count() == 1
    assert Worker.objects.filter(external_id__endswith="emo-worker").count() == 1


def test_a_fullwidth_name_is_stored_folded_and_signs_in(client):
    user, _ = add_person(username="ｆｕｌｌｗｉｄｔｈ-ann", role="author", password=PASSWORD)
    assert user.username == "fullwidth-ann"
    response = client.post(reverse("login"), {"username": "ｆｕｌｌｗｉｄｔｈ-ann", "password": PASSWORD})
    assert response.status_code == 302 and "_auth_user_id" in client.session
    client.logout()
    response = client.post(reverse("login"), {"username": "fullwidth-ann", "password": PASSWORD})
    assert response.status_code == 302 and "_auth_user_id" in client.session


def test_create_user_with_role_folds_and_refuses_lookalikes():
    worker = create_user_with_role(username="ｗｏｒｋｅｒ７", password=PASSWORD, role="worker")
    assert worker.username == "worker7"
    assert Worker.objects.filter(external_id="worker7", user=worker).exists()
    again = create_user_with_role(username="worker7", password=PASSWORD, role="worker")  # reset, same account
    assert again.pk == worker.pk
    with pytest.raises(ValueError, match="reads like the existing account 'worker7'"):
        create_user_with_role(username="Worker7", password=PASSWORD, role="worker")


def test_a_lookalike_of_a_legacy_unfolded_name_is_refused():
    get_user_model().objects.create(username="ｌｅｇａｃｙ")  # a row written before usernames were folded
    with pytest.raises(PeopleError, match="reads like the existing account 'ｌｅｇａｃｙ'"):
        add_person(username="Legacy", role="author", password=PASSWORD)


def test_mixed_script_names_are_refused():
    with pytest.raises(PeopleError, match="CYRILLIC and LATIN"):
        add_person(username="dеmo-worker", role="worker", password=PASSWORD)  # Cyrillic е
    user, _ = add_person(username="josé-ñandú", role="worker", password=PASSWORD)  # one script, accents
    assert user.username == "josé-ñandú"


def test_the_admin_refuses_a_lookalike_account(client, make_user):
    admin = get_user_model().objects.create_superuser(username="root-admin", password=PASSWORD)
    create_user_with_role(username="demo-worker", password=PASSWORD, role="worker")
    client.force_login(admin)
    url = reverse("admin:auth_user_add")
    form = {"username": "ｄemo-Worker", "password1": PASSWORD, "password2": PASSWORD, "usable_password": "true"}
    response = client.post(url, form)
    assert response.status_code == 200 and "reads like the existing account" in response.content.decode()
    response = client.post(url, {**form, "username": "dеmo"})  # Cyrillic е
    assert response.status_code == 200 and "CYRILLIC and LATIN" in response.content.decode()
    response = client.post(url, {**form, "username": "ｆresh-name"})
    assert response.status_code == 302
    assert get_user_model().objects.filter(username="fresh-name").exists()


@pytest.mark.parametrize(
    "email, says",
    [
        ("notanemail", "is not an email address"),
        ("ann@", "is not an email address"),
        ("ann@" + ".".join(["x" * 50] * 5) + ".org", "at most 254 characters"),  # 262, each label valid
    ],
)
def test_people_page_refuses_an_email_that_is_not_one(client, lead, email, says):
    """Walk 62: the People page stored any text as the email (the box's type=email is the browser's
    check only), and one over the account's 254 characters failed on PostgreSQL with a server error."""
    client.force_login(lead)
    response = client.post(reverse("people"), {"username": "ann", "role": "author", "email": email})
    assert response.status_code == 400  # the form again, with what was typed
    shown = " ".join(str(m) for m in get_messages(response.wsgi_request))
    assert says in shown
    assert not get_user_model().objects.filter(username="ann").exists()


def test_an_email_is_stored_trimmed_and_an_empty_one_is_none():
    ann, _ = add_person(username="ann", role="author", email="  ann@example.org ")
    bea, _ = add_person(username="bea", role="author", email="")
    assert (ann.email, bea.email) == ("ann@example.org", "")
