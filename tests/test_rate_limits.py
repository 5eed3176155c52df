"""Rate limits (issue 15, item 6): sign-in and the API token stop answering after repeated
failures for an account from one address, even for the right password (django-axes,
config/lockout.py; the per-account delay and what an address does not lock since issue 45:
tests/test_sign_in_limits.py); task submissions and "Start next task" are bounded per minute
(`@ratelimit.per_minute` on the views); every refusal is a clear message with Retry-After.
The same in production form (Redis cache): tests/test_lockout_production.py."""

import json

import pytest
from django.urls import reverse

from hits.services import handout
from hits.services.submission import task_token
from hits.views.worker import inhouse_worker

from .conftest import PASSWORD
from .crowd_data import all_answers, published_batch

pytestmark = pytest.mark.django_db


def test_200_wrong_passwords_then_the_right_one_is_refused(client, lead, settings):
    settings.AXES_FAILURE_LIMIT = 10
    for _ in range(200):
        client.post(reverse("login"), {"username": lead.username, "password": "wrong"})
    response = client.post(reverse("login"), {"username": lead.username, "password": PASSWORD})
    assert response.status_code == 429 and "_auth_user_id" not in client.session
    assert "Too many failed sign-ins" in response.content.decode() and int(response["Retry-After"]) > 0


def test_the_api_token_endpoint_is_limited_as_well(client, lead, settings):
    settings.AXES_FAILURE_LIMIT = 10
    url = reverse("api_token")
    for _ in range(200):
        client.post(url, json.dumps({"username": lead.username, "password": "wrong"}), content_type="application/json")
    response = client.post(
        url, json.dumps({"username": lead.username, "password": PASSWORD}), content_type="application/json"
    )
    assert response.status_code == 429 and "token" not in response.json()
    assert "Too many failed sign-ins" in response.json()["detail"]


def test_a_right_password_before_the_limit_still_works(client, lead):
    for _ in range(3):
        client.post(reverse("login"), {"username": lead.username, "password": "wrong"})
    assert client.post(reverse("login"), {"username": lead.username, "password": PASSWORD}).status_code == 302


def test_next_task_and_submissions_are_bounded_per_account(client, make_user, settings, still_ratelimit_clock):
    settings.RATE_LIMIT_WORK_PER_MINUTE = (5, 1000)
    batch = published_batch()
    user = make_user("quick-worker", "worker")
    client.force_login(user)
    codes = [client.post(reverse("work_next")).status_code for _ in range(8)]
    assert codes[:5] == [302] * 5 and codes[5:] == [429] * 3
    refused = client.post(reverse("work_next"))
    assert "Too many requests for a new task" in refused.json()["error"]

    assignment = handout.next_assignment(inhouse_worker(user), batch)
    url = reverse("task_submit", args=[task_token(assignment)])
    body = json.dumps({"answers": all_answers(assignment)})
    codes = [client.post(url, body, content_type="application/json").status_code for _ in range(8)]
    assert codes[0] == 200 and codes[5:] == [429] * 3
    assert "Your work is safe" in client.post(url, body, content_type="application/json").json()["error"]


def test_the_limits_never_fail_a_request_when_their_cache_is_down(client, make_user, lead, settings, caplog):
    """Found by bench/fault_bench.py: with Redis down the limiter answered 500. Sign-in (its
    lockout counts in the database) and the work limits (skipped, logged) keep working."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens there
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 2, "SOCKET_TIMEOUT": 2},
        }
    }
    assert client.post(reverse("login"), {"username": lead.username, "password": "wrong"}).status_code == 200
    assert client.post(reverse("login"), {"username": lead.username, "password": PASSWORD}).status_code == 302
    published_batch()
    client.force_login(make_user("patient-worker", "worker"))
    assert client.post(reverse("work_next")).status_code == 302
    assert "rate-limit counters unavailable" in caplog.text


def test_a_submission_by_link_does_not_read_the_session(client, make_user, django_assert_max_num_queries):
    batch = published_batch()
    for name in ("first-worker", "link-worker"):
        user = make_user(name, "worker")
        client.force_login(user)  # signed in: the session exists, but the link alone authorizes
        assignment = handout.next_assignment(inhouse_worker(user), batch)
        url = reverse("task_submit", args=[task_token(assignment)])
        body = json.dumps({"answers": all_answers(assignment)})
        # The second submission of the round: its version rows exist, so the service's own five
        # statements plus the test transaction's savepoint and release.
        with django_assert_max_num_queries(7 if name == "link-worker" else 11) as captured:
            assert client.post(url, body, content_type="application/json").status_code == 200
        assert not any("django_session" in q["sql"] or "auth_user" in q["sql"] for q in captured.captured_queries)


def test_the_token_endpoint_folds_usernames_as_the_sign_in_page_does(client, lead):
    """NFKC: a fullwidth spelling signs in as the same lead on both (and so counts toward one lockout)."""
    wide = "".join(chr(ord(c) + 0xFEE0) for c in lead.username)
    body = json.dumps({"username": wide, "password": PASSWORD})
    assert "token" in client.post(reverse("api_token"), body, content_type="application/json").json()
    assert client.post(reverse("login"), {"username": wide, "password": PASSWORD}).status_code == 302
