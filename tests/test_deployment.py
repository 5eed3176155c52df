"""docker-compose.yml is accepted by compose and wires the five services together."""

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
    for service in ("postgres:", "redis:", "web:", "worker:", "beat:", "healthcheck:", "pgdata:", "gunicorn", "celery"):
        assert service in rendered


def test_compose_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    checked = subprocess.run([*compose_command(), "config", "-q"], cwd=PROJECT, env=env, capture_output=True, text=True)
    assert checked.returncode != 0
    assert "SECRET_KEY" in checked.stderr


def _documented_env_file() -> dict[str, str]:
    """The `.env` example of docs/deploy.md (its ```dotenv block)."""
    text = (PROJECT / "docs" / "deploy.md").read_text(encoding="utf-8")
    block = re.search(r"```dotenv\n(.*?)```", text, re.DOTALL)
    assert block, "docs/deploy.md has no ```dotenv example"
    return dict(line.split("=", 1) for line in block.group(1).splitlines() if "=" in line)


def _web_environment(env_file: dict[str, str]) -> dict[str, str]:
    """The web service's environment as `docker compose config` renders it from these values."""
    env = {"PATH": os.environ["PATH"], "SECRET_KEY": "k" * 20 + secrets.token_urlsafe(50), **env_file}
    rendered = subprocess.run(
        [*compose_command(), "config"], cwd=PROJECT, env=env, capture_output=True, text=True, check=True
    ).stdout
    web = yaml.safe_load(rendered)["services"]["web"]["environment"]
    if isinstance(web, list):
        web = dict(item.split("=", 1) for item in web)
    return {k: "" if v is None else str(v) for k, v in web.items()}


@pytest.mark.parametrize("env_file", ["compose defaults", "docs/deploy.md .env"])
def test_check_deploy_passes_with_the_documented_production_settings(env_file):
    values = {} if env_file == "compose defaults" else _documented_env_file()
    web = _web_environment(values)
    assert web["DEBUG"] == "0"
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8", **web}
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "security.W" not in done.stdout + done.stderr
