"""docker-compose.yml is accepted by compose and wires the five services together."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

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
