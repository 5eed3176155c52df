"""docker-compose.yml is accepted by compose and wires the five services together."""

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parent.parent


def compose_command() -> list[str]:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.fail("neither 'docker compose' nor 'docker-compose' is installed (scripts/system_setup.sh installs it)")


def test_compose_config_is_accepted():
    cmd = compose_command()
    env = {**os.environ, "SECRET_KEY": "compose-check"}
    checked = subprocess.run([*cmd, "config", "-q"], cwd=PROJECT, env=env, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    rendered = subprocess.run([*cmd, "config"], cwd=PROJECT, env=env, capture_output=True, text=True, check=True).stdout
    for service in ("caddy:", "postgres:", "redis:", "web:", "worker:", "beat:", "healthcheck:", "pgdata:", "gunicorn"):
        assert service in rendered
    assert "celery" in rendered


def test_only_the_proxy_is_published_and_the_app_trusts_only_its_network():
    """Issue 45 item 1: the web port was published on every interface while X-Forwarded-For was
    trusted from anyone; now Caddy alone is published and the app trusts the compose network."""
    rendered = _rendered({})
    services = rendered["services"]
    assert "ports" not in services["web"], "the web container must not publish its port"
    assert sorted({p["target"] for p in services["caddy"]["ports"]}) == [80, 443]
    assert not any("ports" in services[name] for name in ("worker", "beat", "postgres", "redis"))
    subnet = rendered["networks"]["default"]["ipam"]["config"][0]["subnet"]
    for name in ("web", "worker", "beat"):
        assert _environment(services[name])["TRUSTED_PROXIES"] == subnet
    assert "BEHIND_PROXY" not in _environment(services["web"])


def test_compose_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    checked = subprocess.run([*compose_command(), "config", "-q"], cwd=PROJECT, env=env, capture_output=True, text=True)
    assert checked.returncode != 0
    assert "SECRET_KEY" in checked.stderr


def _documented_env_blocks() -> dict[str, dict[str, str]]:
    """The `.env` examples of docs/deploy.md (its ```dotenv blocks), by their first line's label
    (`# localhost`, `# domain`); SECRET_KEY is left out (the documented command writes a real one)."""
    text = (PROJECT / "docs" / "deploy.md").read_text(encoding="utf-8")
    blocks = {}
    for block in re.findall(r"```dotenv\n(.*?)```", text, re.DOTALL):
        label, *lines = block.splitlines()
        values = dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
        values.pop("SECRET_KEY", None)
        blocks[label.lstrip("# ").strip()] = values
    assert sorted(blocks) == ["domain", "localhost"], "docs/deploy.md documents a localhost and a domain .env"
    return blocks


def _rendered(env_file: dict[str, str]) -> dict:
    """The compose file as `docker compose config` renders it with these `.env` values."""
    env = {"PATH": os.environ["PATH"], "SECRET_KEY": "k" * 20 + secrets.token_urlsafe(50), **env_file}
    rendered = subprocess.run(
        [*compose_command(), "config"], cwd=PROJECT, env=env, capture_output=True, text=True, check=True
    ).stdout
    return yaml.safe_load(rendered)


def _environment(service: dict) -> dict[str, str]:
    environment = service["environment"]
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) for item in environment)
    return {k: "" if v is None else str(v) for k, v in environment.items()}


def _web_environment(env_file: dict[str, str]) -> dict[str, str]:
    """The web service's environment as `docker compose config` renders it from these values."""
    return _environment(_rendered(env_file)["services"]["web"])


def _process_env(web: dict[str, str]) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8", **web}


# Requests made in a fresh process with the web service's environment: a client straight to the
# app (claiming HTTPS), and the proxy (an address of the compose network) forwarding over HTTPS.
_REQUESTS = """
import ipaddress, json, os, django
django.setup()
from django.conf import settings
from django.test import Client
host = settings.DOMAIN or "localhost"
proxy = str(next(ipaddress.ip_network(settings.TRUSTED_PROXIES[0]).hosts()))
def get(**meta):
    r = Client().get("/accounts/login/", HTTP_HOST=host, **meta)
    csrf = r.cookies.get("csrftoken")
    return {"status": r.status_code, "location": r.get("Location", ""), "hsts": r.get("Strict-Transport-Security", ""),
            "secure_cookie": bool(csrf and csrf["secure"])}
print(json.dumps({
    "direct": get(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_PROTO="https"),
    "proxied": get(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_PROTO="https", HTTP_X_FORWARDED_FOR="198.51.100.1"),
    "session_cookie_secure": settings.SESSION_COOKIE_SECURE,
    "health": Client().get(os.environ["HEALTH_PATH"], HTTP_HOST="127.0.0.1:8000", REMOTE_ADDR="127.0.0.1").status_code,
    "page_by_address": Client().get("/accounts/login/", HTTP_HOST="127.0.0.1:8000", REMOTE_ADDR="127.0.0.1").status_code,
}))
"""


def _health_path() -> str:
    """The path the web service's health check requests (on 127.0.0.1:8000, inside the container)."""
    check = " ".join(_rendered({})["services"]["web"]["healthcheck"]["test"])
    found = re.search(r"http://127\.0\.0\.1:8000(/[^'\"]*)", check)
    assert found, check
    return found.group(1)


def _requests(web: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _REQUESTS],
        cwd=PROJECT,
        env={**_process_env(web), "DJANGO_SETTINGS_MODULE": "config.settings", "HEALTH_PATH": _health_path()},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_first_start_opens_on_localhost_over_plain_http():
    """Issue 45 item 2: with the first start's .env, http://localhost/ answered 301 to https://
    and sent HSTS for a year with preload."""
    web = _web_environment(_documented_env_blocks()["localhost"])
    seen = _requests(web)
    for how in ("direct", "proxied"):
        assert seen[how] == {"status": 200, "location": "", "hsts": "", "secure_cookie": False}, how
    assert seen["session_cookie_secure"] is False
    assert seen["health"] == 200


def test_with_a_domain_the_production_settings_come_on():
    web = _web_environment(_documented_env_blocks()["domain"])
    seen = _requests(web)
    domain = _documented_env_blocks()["domain"]["DOMAIN"]
    assert seen["direct"]["status"] == 301 and seen["direct"]["location"] == f"https://{domain}/accounts/login/"
    assert seen["proxied"] == {
        "status": 200,
        "location": "",
        "hsts": "max-age=31536000; includeSubDomains; preload",
        "secure_cookie": True,
    }
    assert seen["session_cookie_secure"] is True
    assert seen["health"] == 200  # the container's health check, on plain HTTP inside it


def test_check_deploy_passes_with_the_documented_domain_settings():
    web = _web_environment(_documented_env_blocks()["domain"])
    assert web["DEBUG"] == "0"
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT,
        env=_process_env(web),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "security.W" not in done.stdout + done.stderr


@pytest.mark.parametrize("block", ["localhost", "domain"])
def test_caddy_serves_plain_http_on_localhost_and_https_for_the_domain(block):
    """The Caddyfile as Caddy reads it with the address the compose file gives it."""
    caddy = shutil.which("caddy")
    if caddy is None:
        pytest.fail("caddy is not installed (scripts/system_setup.sh installs it)")
    site = _environment(_rendered(_documented_env_blocks()[block])["services"]["caddy"])["SITE_ADDRESS"]
    done = subprocess.run(
        [caddy, "adapt", "--config", str(PROJECT / "Caddyfile")],
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "SITE_ADDRESS": site},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    (server,) = json.loads(done.stdout)["apps"]["http"]["servers"].values()
    proxied = json.dumps(server["routes"])
    assert '"handler": "reverse_proxy"' in proxied and '"dial": "web:8000"' in proxied
    if block == "localhost":
        assert server["listen"] == [":80"] and "host" not in proxied
    else:
        domain = _documented_env_blocks()["domain"]["DOMAIN"]
        assert server["listen"] == [":443"] and f'"host": ["{domain}"]' in proxied


# ---- the image's build context (Dockerfile: COPY . .) -------------------------------------


def _dockerignore_excludes(path: str) -> bool:
    """Whether .dockerignore keeps `path` (relative, with /) out of the build context, by Docker's
    rules: a pattern matches the path or one of its parent folders, `*` and `?` within one name,
    `**` any number of folders, `!` takes a match back, the last matching pattern decides."""

    def regex(pattern: str) -> re.Pattern:
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            else:
                out += {"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i]))
                i += 1
        return re.compile(out + r"\Z")

    parts = path.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for line in (PROJECT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = regex(line.lstrip("!").strip("/"))
        if any(pattern.match(candidate) for candidate in candidates):
            excluded = not negated
    return excluded


def test_the_build_context_leaves_out_secrets_and_local_state_and_keeps_the_code():
    """The .env of docs/deploy.md (SECRET_KEY, the Prolific token, AWS keys) was copied into the
    image by `COPY . .` (it was not in .dockerignore), and so was a checkout's media/ (fine-tuned
    judge models, 180 MB a run)."""
    for path in (
        ".env",
        ".env.production",
        "media/judge-models/run-1/fold-0/model.safetensors",
        ".venv/bin/python",
        ".git/config",
        "db.sqlite3-wal",
        "staticfiles/staticfiles.json",
        "tests/browser/axe/node_modules/axe-core/axe.min.js",
        "hits/__pycache__/tasks.cpython-311.pyc",
    ):
        assert _dockerignore_excludes(path), f"{path} would be copied into the image"
    tracked = subprocess.run(["git", "ls-files"], cwd=PROJECT, capture_output=True, text=True, check=True).stdout
    left_out = [path for path in tracked.splitlines() if _dockerignore_excludes(path)]
    assert left_out == [], "files of the repository left out of the image"


# Documented settings the compose file sets itself, the image's own, and the broker-less mode's.
NOT_FROM_ENV_FILE = {
    "DATABASE_URL": "postgres://acu:acu@postgres:5432/acu",
    "CELERY_BROKER_URL": "redis://redis:6379/0",
    "CACHE_URL": "redis://redis:6379/1",
    "TRUSTED_PROXIES": "172.29.45.0/24",
    "DEBUG": "0",
    "BEHIND_PROXY": None,
    "STATIC_ROOT": None,
    "STATIC_MANIFEST": None,
    "WHITENOISE_USE_FINDERS": None,
    "JUDGE_MODELS_DIR": None,
    "CELERY_TASK_ALWAYS_EAGER": None,
    "LONG_TASKS_IN_BACKGROUND": None,
}


def test_every_documented_setting_in_the_env_file_reaches_the_app_containers():
    """LLM_BASE_URL, LOG_LEVEL, TIME_ZONE, PROLIFIC_FEE_RATE, CELERY_VISIBILITY_TIMEOUT, ... set in
    .env as docs/configuration.md names them never reached the containers: the compose file passed
    a dozen variables on and dropped the rest without a word."""
    from .test_docs import documented

    names = set(documented())
    assert set(NOT_FROM_ENV_FILE) <= names
    env_file = {name: f"from-env-file-{name.lower()}" for name in names}
    services = _rendered(env_file)["services"]
    for service in ("web", "worker", "beat"):
        environment = _environment(services[service])
        for name in sorted(names):
            if name in NOT_FROM_ENV_FILE:
                assert environment.get(name) == NOT_FROM_ENV_FILE[name], (service, name)
            elif name != "SECRET_KEY":
                assert environment.get(name) == env_file[name], f"{name} in .env does not reach {service}"


def test_the_worker_and_beat_start_after_the_web_containers_migrate():
    """On an upgrade (`docker compose up -d --build`) the worker and beat started with the new code
    as soon as PostgreSQL and Redis were up, while the web container still migrated: queued and
    scheduled tasks ran on tables not yet migrated."""
    services = _rendered({})["services"]
    assert services["web"]["command"].startswith('sh -c "python manage.py migrate --noinput &&')
    assert "healthcheck" in services["web"]
    for name in ("worker", "beat"):
        assert services[name]["depends_on"]["web"] == {"condition": "service_healthy"}, name
        assert {"postgres", "redis"} <= set(services[name]["depends_on"]), name


def test_the_health_check_answers_when_allowed_hosts_names_only_the_site():
    """ALLOWED_HOSTS set to the site's names (a second name, as docs/configuration.md allows) left
    out 127.0.0.1, the host of the container's own health check: 400, never healthy, and Caddy,
    the worker and beat, which wait for it, never started. Only the health check is answered so."""
    block = {**_documented_env_blocks()["domain"], "ALLOWED_HOSTS": "acu.example.org,www.acu.example.org"}
    seen = _requests(_web_environment(block))
    assert seen["health"] == 200
    assert seen["proxied"]["status"] == 200
    assert seen["page_by_address"] == 400  # any other page: the host is still checked
