"""Hardening (issue 15, item 9): HSTS and SSL redirect from the environment, a CSP on every
page, framing rules, task links that expire and never appear in logs."""

import logging
import os
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core import signing
from django.urls import reverse
from django.utils import timezone

from hits.models import Assignment
from hits.services import handout
from hits.services.submission import TOKEN_SALT, task_token
from hits.views.worker import inhouse_worker

from .crowd_data import published_batch

PROJECT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_check_deploy_is_clean_with_the_documented_flags():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}  # set by the test suite only
    env = {
        **env,
        "DEBUG": "0",
        "SECRET_KEY": "x" * 60 + "deploy-check-" + "y" * 10,
        "SECURE_SSL_REDIRECT": "1",
        "SECURE_HSTS_SECONDS": "31536000",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
        "SECURE_HSTS_PRELOAD": "1",
        "SESSION_COOKIE_SECURE": "1",
        "CSRF_COOKIE_SECURE": "1",
        "ALLOWED_HOSTS": "acu.example.org",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "security.W004" not in done.stdout + done.stderr and "security.W008" not in done.stdout + done.stderr


def test_every_page_has_a_self_only_policy_and_inline_scripts_carry_its_nonce(client, make_user):
    author = make_user("csp-author", "author")
    for url in (reverse("login"), "/no-such-page/"):
        policy = client.get(url)["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy and "unsafe-eval" not in policy
    client.force_login(author)
    page = client.get(reverse("authoring_queue"))
    nonce = re.search(r"'nonce-([^']+)'", page["Content-Security-Policy"]).group(1)
    scripts = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", page.content.decode())
    assert scripts and all(f'nonce="{nonce}"' in attrs for attrs in scripts if "json" not in attrs)
    assert page["X-Frame-Options"] == "DENY"


@pytest.fixture
def taken(make_user):
    batch = published_batch()
    worker = inhouse_worker(make_user("tok-worker", "worker"))
    return handout.next_assignment(worker, batch)


def test_in_house_task_pages_are_not_framable(client, taken):
    response = client.get(reverse("task", args=[task_token(taken)]))
    assert response.status_code == 200
    assert response["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_task_links_expire_after_the_deadline_plus_a_margin(client, taken, settings, monkeypatch):
    settings.TASK_TOKEN_MARGIN = 3600
    Assignment.objects.filter(pk=taken.pk).update(deadline=timezone.now() - timedelta(hours=2))
    taken.refresh_from_db()
    expired = task_token(taken)
    # Past its time the page says the link expired (410), not that it is unknown.
    assert client.get(reverse("task", args=[expired])).status_code == 410
    refused = client.post(reverse("task_submit", args=[expired]), b"{}", content_type="application/json")
    assert refused.status_code == 409 and "expired" in refused.json()["error"]
    # A link without an expiry (as earlier releases made them), signed 400 days ago.
    real_time = signing.time.time
    monkeypatch.setattr(signing.time, "time", lambda: real_time() - 400 * 86400)
    old = signing.dumps({"a": taken.pk, "w": taken.worker_id}, salt=TOKEN_SALT, compress=True)
    monkeypatch.setattr(signing.time, "time", real_time)
    assert client.get(reverse("task", args=[old])).status_code == 410


def test_task_tokens_never_reach_the_log(client, taken, capsys):
    from config.security import RedactTokensFilter

    token = task_token(taken)
    assert any(isinstance(f, RedactTokensFilter) for h in logging.getLogger().handlers for f in h.filters)
    capsys.readouterr()
    client.post(reverse("task_submit", args=[token]), b"not json", content_type="application/json")  # logged 400
    logging.getLogger("hits").warning("opened %s", f"/task/{token}/")
    logged = capsys.readouterr().err  # the console handler writes to the current sys.stderr
    assert "/task/" in logged and token not in logged and "[token]" in logged


@pytest.mark.django_db
@pytest.mark.parametrize("cookie", ["abc\x00def12345", "' OR 1=1 --xxxx", "ÿÿÿÿÿÿÿÿÿÿ", "a" * 500])
def test_a_session_cookie_that_is_no_session_key_signs_nobody_in(client, lead, cookie):
    """Found by schemathesis: a NUL in the session cookie reached PostgreSQL and gave a 500."""
    client.cookies["sessionid"] = cookie
    assert client.get(reverse("home")).status_code in (200, 302)
    assert client.post("/api/batches/", "null", content_type="application/json").status_code in (401, 403)
