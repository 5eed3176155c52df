"""Sign-in limits that cannot be turned against users (issue 45 item 7; config/lockout.py).

Before, ten wrong passwords from anywhere locked any account, a lead's too, for 15 minutes, and
50 failures from one address locked everyone behind it (a lab's NAT). Now the lock is per account
AND address; from many addresses an account's password checks are delayed (seconds, growing,
at most LOGIN_DELAY_MAX_SECONDS), never locked, and not at all from a browser the account signed
in from before; a signed-in session is never touched."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from config.lockout import KNOWN_COOKIE

from .conftest import PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def sign_in(client, username, password, address):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.fixture(autouse=True)
def _long_window(settings):
    """A day's window: the attacks below wait out each delay by moving the past back a minute."""
    settings.AXES_COOLOFF_TIME = timedelta(days=1)


def a_minute_passes():
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(seconds=61))


def failures_from_elsewhere(username, count, first=1, via="login"):
    """`count` wrong passwords for `username`, each from another address, each after the
    account's delay (a minute apart); every one is counted."""
    attacker, before = Client(), sum(AccessAttempt.objects.values_list("failures_since_start", flat=True))
    for i in range(first, first + count):
        a_minute_passes()
        address = f"198.51.{i // 250}.{i % 250 + 1}"
        if via == "login":
            assert sign_in(attacker, username, "wrong", address).status_code in (200, 429)
        else:
            body = {"username": username, "password": "wrong"}
            attacker.post(reverse("api_token"), body, content_type="application/json", REMOTE_ADDR=address)
    assert sum(AccessAttempt.objects.values_list("failures_since_start", flat=True)) == before + count


def test_ten_wrong_passwords_from_other_addresses_do_not_lock_a_lead_out_of_their_own(client, lead, settings):
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    assert sign_in(client, lead.username, PASSWORD, "10.5.0.1").status_code == 302  # the lead's browser
    assert KNOWN_COOKIE in client.cookies
    client.post(reverse("logout"))
    attacker = Client()
    for i in range(10):  # at once, as fast as they come
        sign_in(attacker, lead.username, "wrong", f"198.51.100.{i + 1}")
    signed_in = sign_in(client, lead.username, PASSWORD, "10.5.0.1")
    assert (signed_in.status_code, "_auth_user_id" in client.session) == (302, True)


def test_from_many_addresses_a_new_browser_is_delayed_not_locked(lead, monkeypatch):
    failures_from_elsewhere(lead.username, 15)  # 5 past the account's 10: the next check waits 2^5 s
    fresh = Client()
    with monkeypatch.context() as clock:
        the_clock_stops_at_the_last_failure(clock)
        refused = sign_in(fresh, lead.username, PASSWORD, "10.5.0.2")
    assert refused.status_code == 429 and "_auth_user_id" not in fresh.session
    assert int(refused["Retry-After"]) == 32
    assert "Too many failed sign-ins for this account. Try again in" in refused.content.decode()
    assert "seconds" in refused.content.decode()
    counted = sum(AccessAttempt.objects.values_list("failures_since_start", flat=True))
    assert counted == 15  # a refused attempt is no failure: waiting is enough
    # 33 seconds later (the failures still inside the window): the password is checked.
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(seconds=33))
    assert sign_in(fresh, lead.username, PASSWORD, "10.5.0.2").status_code == 302


def the_clock_stops_at_the_last_failure(monkeypatch):
    """The delay's clock (config.lockout) reads the moment of the account's last failure: what is
    left of a delay no longer depends on how fast this machine sends the next attempt (a busy one
    took over a second, and 60 s read 59)."""
    from types import SimpleNamespace

    from config import lockout

    last = AccessAttempt.objects.order_by("-attempt_time").values_list("attempt_time", flat=True).first()
    monkeypatch.setattr(lockout, "timezone", SimpleNamespace(now=lambda: last))


def test_the_delay_grows_with_the_failures_and_is_capped(lead, settings, monkeypatch):
    settings.LOGIN_DELAY_MAX_SECONDS = 60
    failures_from_elsewhere(lead.username, 11)  # 1 past the limit: 2 s
    with monkeypatch.context() as clock:
        the_clock_stops_at_the_last_failure(clock)
        assert int(sign_in(Client(), lead.username, PASSWORD, "10.5.0.3")["Retry-After"]) == 2
    failures_from_elsewhere(lead.username, 29, first=100)
    the_clock_stops_at_the_last_failure(monkeypatch)
    assert int(sign_in(Client(), lead.username, PASSWORD, "10.5.0.3")["Retry-After"]) == 60


def test_one_address_is_locked_for_one_account_only(client, lead, make_user, settings):
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    other = make_user("olga-lead", "lead")
    assert sign_in(client, lead.username, PASSWORD, "10.6.0.2").status_code == 302  # the lead's browser
    client.post(reverse("logout"))
    for _ in range(10):
        sign_in(Client(), lead.username, "wrong", "10.6.0.1")
    locked = sign_in(Client(), lead.username, PASSWORD, "10.6.0.1")
    assert locked.status_code == 429 and int(locked["Retry-After"]) == 900
    assert "15 minutes" in locked.content.decode()
    assert sign_in(Client(), other.username, PASSWORD, "10.6.0.1").status_code == 302  # another account, there
    assert sign_in(client, lead.username, PASSWORD, "10.6.0.2").status_code == 302  # the lead, elsewhere


def test_fifty_failures_from_a_shared_nat_do_not_lock_everyone_behind_it(make_user):
    nat = "10.7.0.1"
    workers = [make_user(f"lab-worker-{i}", "worker") for i in range(3)]
    typist = Client()
    for i in range(50):  # typos and guesses over many accounts, all from the lab's one address
        sign_in(typist, f"lab-guess-{i % 25}", "wrong", nat)
    for worker in workers:
        browser = Client()
        assert sign_in(browser, worker.username, PASSWORD, nat).status_code == 302
        assert "_auth_user_id" in browser.session


def test_a_signed_in_lead_stays_signed_in_while_their_account_is_attacked(client, lead):
    assert sign_in(client, lead.username, PASSWORD, "10.5.0.4").status_code == 302
    for _ in range(10):  # the lead's own address locked for the account
        sign_in(Client(), lead.username, "wrong", "10.5.0.4")
    assert sign_in(Client(), lead.username, PASSWORD, "10.5.0.4").status_code == 429
    failures_from_elsewhere(lead.username, 30)  # and the account delayed everywhere
    assert client.get(reverse("home"), REMOTE_ADDR="10.5.0.4").status_code == 200
    assert client.get(reverse("people"), REMOTE_ADDR="10.5.0.4").status_code == 200


def test_the_token_endpoint_delays_an_account_attacked_from_many_addresses(lead, monkeypatch):
    failures_from_elsewhere(lead.username, 15, via="token")
    the_clock_stops_at_the_last_failure(monkeypatch)
    refused = Client().post(
        reverse("api_token"),
        {"username": lead.username, "password": PASSWORD},
        content_type="application/json",
        REMOTE_ADDR="10.5.0.5",
    )
    assert refused.status_code == 429 and int(refused["Retry-After"]) == 32
    assert "seconds" in refused.json()["detail"]
