"""The deployable image's steps, without a Docker engine (issue 15, items 7 and 8):
`collectstatic` with the manifest storage, and the compose file's web, worker and beat
commands started as processes against PostgreSQL and Redis on a freshly created database,
where leads hold every permission of our apps after the first `migrate`."""

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psycopg2
import pytest
import yaml
from django.conf import settings

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parent.parent
VENV_BIN = str(Path(sys.executable).parent)


def env(**extra) -> dict:
    return {
        **os.environ,
        "PATH": f"{VENV_BIN}:{os.environ['PATH']}",
        "SECRET_KEY": "build-check",
        "DEBUG": "0",
        **extra,
    }


def test_collectstatic_with_the_manifest_passes(tmp_path):
    done = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        env=env(STATIC_MANIFEST="1", STATIC_ROOT=str(tmp_path / "static")),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "static" / "staticfiles.json").exists()
    assert list((tmp_path / "static" / "vendor" / "chartjs").glob("chart.umd.min.*.js"))


@pytest.fixture
def fresh_database():
    """An empty PostgreSQL database of its own (not the test database), dropped afterwards."""
    db = settings.DATABASES["default"]
    name = f"{db['NAME']}_fresh_{os.getpid()}"
    admin = {
        "host": db["HOST"] or "127.0.0.1",
        "port": db["PORT"] or 5432,
        "user": db["USER"],
        "password": db["PASSWORD"] or None,
        "dbname": "postgres",
    }

    def run(sql):
        conn = psycopg2.connect(**admin)
        conn.autocommit = True
        try:
            conn.cursor().execute(sql)
        finally:
            conn.close()

    run(f'DROP DATABASE IF EXISTS "{name}"')
    run(f'CREATE DATABASE "{name}"')
    user = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    yield f"postgres://{user}@{admin['host']}:{admin['port']}/{name}"
    run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _compose_commands(port: int) -> dict[str, list[str]]:
    services = yaml.safe_load((PROJECT / "docker-compose.yml").read_text())["services"]
    commands = {}
    for name in ("web", "worker", "beat"):
        command = services[name]["command"]
        if isinstance(command, str):
            command = shlex.split(command)
        commands[name] = [part.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for part in command]
    return commands


def _wait_for(check, seconds: float, what: str, proc) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{what}: the process ended with {proc.returncode}")
        if check():
            return
        time.sleep(0.5)
    pytest.fail(f"{what} did not happen within {seconds} s")


def test_compose_commands_start_and_roles_are_right_on_the_first_migrate(fresh_database, tmp_path):
    port = _free_port()
    process_env = env(
        DATABASE_URL=fresh_database,
        CELERY_BROKER_URL=settings.CELERY_BROKER_URL,
        ALLOWED_HOSTS="127.0.0.1",
        WHITENOISE_USE_FINDERS="1",
    )
    commands = _compose_commands(port)
    logs = {name: open(tmp_path / f"{name}.log", "w+") for name in commands}  # noqa: SIM115 - closed below
    procs = {}
    try:
        procs["web"] = subprocess.Popen(
            commands["web"],
            cwd=PROJECT,
            env=process_env,
            stdout=logs["web"],
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def login_page_answers():
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5).status == 200
            except OSError:
                return False

        _wait_for(login_page_answers, 300, "the web command serving the login page", procs["web"])
        commands["beat"] = [
            c.replace("/tmp/celerybeat-schedule", str(tmp_path / "beat-schedule")) for c in commands["beat"]
        ]
        for name in ("worker", "beat"):
            procs[name] = subprocess.Popen(
                commands[name],
                cwd=PROJECT,
                env=process_env,
                stdout=logs[name],
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        def said(name, text):
            return lambda: text in (tmp_path / f"{name}.log").read_text()

        _wait_for(said("worker", "ready."), 180, "the worker command connecting to Redis", procs["worker"])
        _wait_for(said("beat", "beat: Starting"), 180, "the beat command starting", procs["beat"])
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, 15)
        for proc in procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
        for log in logs.values():
            log.close()

    # The first (and only) migrate gave leads the admin permissions of hits and scoring too.
    check = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "--no-imports",
            "-c",
            "from django.contrib.auth.models import Group, Permission as P; g = Group.objects.get(name='lead'); "
            "print(sorted({p.content_type.app_label for p in g.permissions.all()}), "
            "P.objects.filter(content_type__app_label__in=['annotation','hits','scoring']).exclude(group=g).count())",
        ],
        cwd=PROJECT,
        env=process_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0, check.stderr[-2000:]
    assert check.stdout.strip().splitlines()[-1] == "['annotation', 'auth', 'hits', 'scoring'] 0"


def _deploy_section(title: str) -> list[str]:
    """The command lines of the ```bash blocks under this heading of docs/deploy.md."""
    text = (PROJECT / "docs" / "deploy.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [line for block in section.split("```bash\n")[1:] for line in block.split("```")[0].splitlines() if line]


def _here(line: str, service: str, url: str) -> str:
    """A documented `docker compose exec -T <service> ...` line as the same command on this machine:
    PostgreSQL's tools against the database at `url` instead of the compose file's `acu`."""
    prefix = f"docker compose exec -T {service} "
    assert line.startswith(prefix), line
    command = line.removeprefix(prefix)
    if service == "web":
        return command.replace("python manage.py", f"{shlex.quote(sys.executable)} manage.py")
    db = settings.DATABASES["default"]
    name = url.rsplit("/", 1)[1]
    server = f"-h {db['HOST'] or '127.0.0.1'} -p {db['PORT'] or 5432} -U {db['USER']}"
    command = command.replace("-U acu", server).replace("-d acu", f"-d {name}")
    return re.sub(r" acu$", f" {name}", command)


def test_the_documented_backup_and_restore_run_and_restore_the_data(fresh_database, tmp_path):
    """docs/deploy.md had no backup or restore at all; its commands, run as written on this
    machine's PostgreSQL (the compose file's user and database swapped for the test's)."""
    backup = _deploy_section("Backups and restore")
    dump, export = backup[0], backup[1]
    restore = backup[2:]
    assert restore[0] == "docker compose stop caddy web worker beat" and restore[-1] == "docker compose up -d"
    process_env = env(DATABASE_URL=fresh_database, CELERY_BROKER_URL="", LONG_TASKS_IN_BACKGROUND="0")

    def run(command: str) -> str:
        done = subprocess.run(
            ["bash", "-c", command], cwd=PROJECT, env=process_env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
        return done.stdout

    run(f"{shlex.quote(sys.executable)} manage.py migrate --noinput -v0")
    run(
        f"{shlex.quote(sys.executable)} manage.py import_dataset annotation/demo/realsumm-demo.rose.jsonl "
        "--name realsumm-demo --format rose"
    )
    run(f"cd {tmp_path} && " + _here(dump, "postgres", fresh_database))
    (dumped,) = tmp_path.glob("acu-*.dump")
    exported = run(_here(export, "web", fresh_database).replace("> realsumm-demo.jsonl", ""))
    assert len([json.loads(line) for line in exported.splitlines()]) == 10

    # Changed after the backup: the restore brings the dump's state back.
    run(
        f"{shlex.quote(sys.executable)} manage.py shell -c \"from annotation.models import Dataset; Dataset.objects.update(name='renamed')\""
    )
    restore_file = re.search(r"< (\S+\.dump)", "\n".join(restore)).group(1)
    dumped.rename(tmp_path / restore_file)
    for line in restore[1:-1]:
        if line.startswith("docker compose exec -T postgres "):
            run(f"cd {tmp_path} && " + _here(line, "postgres", fresh_database))
        else:
            assert line == "docker compose exec -T redis redis-cli -n 1 FLUSHDB", line  # the compose file's cache
    assert run(_here(export, "web", fresh_database).replace("> realsumm-demo.jsonl", "")) == exported
    run(f"{shlex.quote(sys.executable)} manage.py migrate --check")
