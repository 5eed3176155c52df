"""The sign-in lockout in production form (issue 25): the settings a deployment with CACHE_URL
gets (Redis cache, cached sessions), against the suite's Redis. Wrong passwords for a lead, from
many addresses, then the right one: refused on the sign-in page and on /api/token/, with a
message saying when to retry; a username written differently (fullwidth letters, folded to the
same name by NFKC at sign-in) counts toward the same lockout. The per-minute work limits count
in that Redis too."""

import json
import os
import uuid

import pytest
import redis
from django.urls import reverse

from hits.services import handout
from hits.services.submission import task_token
from hits.views.worker import inhouse_worker

from .conftest import PASSWORD
from .crowd_data import all_answers, published_batch
from .fresh_settings import read_in_fresh_process

pytestmark = pytest.mark.django_db

REDIS = os.environ.get("TEST_LOCKOUT_REDIS", "redis://127.0.0.1:6379/13")
WRONG = 20


def fullwidth(name: str) -> str:
    """The same name in fullwidth letters (NFKC folds them back)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)


@pytest.fixture
def production_form(settings):
    """CACHES and SESSION_ENGINE exactly as settings.py makes them with CACHE_URL set, with this
    test's own key prefix (the Redis database may be shared); its keys are deleted after."""
    made = json.loads(
        read_in_fresh_process(
            "json.dumps({'caches': settings.CACHES, 'sessions': settings.SESSION_ENGINE})", CACHE_URL=REDIS
        )
    )
    prefix = f"lockout-test-{uuid.uuid4().hex}"
    made["caches"]["default"]["KEY_PREFIX"] = prefix
    settings.CACHE_URL = REDIS
    settings.CACHES = made["caches"]
    settings.SESSION_ENGINE = made["sessions"]
    yield
    client = redis.Redis.from_url(REDIS)
    for pattern in (f"{prefix}:*", "rl:login-*"):  # the second: raw keys the limiter of before issue 25 wrote
        keys = list(client.scan_iter(pattern))
        if keys:
            client.delete(*keys)


def _sign_in(client, username, password, address):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def _token(client, username, password, address):
    body = json.dumps({"username": username, "password": password})
    return client.post(reverse("api_token"), body, content_type="application/json", REMOTE_ADDR=address)


@pytest.mark.parametrize("spelling", [str, fullwidth], ids=["as-is", "fullwidth"])
def test_wrong_passwords_then_the_right_one_is_refused_on_the_sign_in_page(production_form, client, lead, spelling):
    assert spelling(lead.username) != lead.username or spelling is str
    for i in range(WRONG):  # one address each: the account's own count must lock it
        assert _sign_in(client, spelling(lead.username), "wrong", f"10.1.0.{i + 1}").status_code in (200, 429)
    refused = _sign_in(client, lead.username, PASSWORD, "10.2.0.1")
    assert (refused.status_code, "_auth_user_id" in client.session) == (429, False)
    assert "Too many failed sign-ins" in refused.content.decode() and int(refused["Retry-After"]) > 0


@pytest.mark.parametrize("spelling", [str, fullwidth], ids=["as-is", "fullwidth"])
def test_wrong_passwords_then_the_right_one_is_refused_on_the_token_endpoint(production_form, client, lead, spelling):
    for i in range(WRONG):
        assert _token(client, spelling(lead.username), "wrong", f"10.3.0.{i + 1}").status_code in (401, 429)
    refused = _token(client, lead.username, PASSWORD, "10.4.0.1")
    assert (refused.status_code, "token" in refused.json()) == (429, False), refused.json()
    assert "Too many failed sign-ins" in refused.json()["detail"] and int(refused["Retry-After"]) > 0


def test_work_limits_count_in_redis(production_form, client, make_user, settings, still_ratelimit_clock):
    settings.RATE_LIMIT_WORK_PER_MINUTE = (5, 1000)
    batch = published_batch()
    user = make_user("quick-worker", "worker")
    client.force_login(user)
    codes = [client.post(reverse("work_next")).status_code for _ in range(7)]
    assert codes == [302] * 5 + [429] * 2
    assignment = handout.next_assignment(inhouse_worker(user), batch)
    url, body = reverse("task_submit", args=[task_token(assignment)]), json.dumps({"answers": all_answers(assignment)})
    codes = [client.post(url, body, content_type="application/json").status_code for _ in range(7)]
    assert codes == [200] * 5 + [429] * 2
    assert redis.Redis.from_url(REDIS).keys(f"{settings.CACHES['default']['KEY_PREFIX']}:*")  # counted there
