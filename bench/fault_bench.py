"""Fault bench: the production form under load and faults, and the figures that matter.

Creates a database of its own (PostgreSQL, loopback), imports REALSumm with an in-house batch
of 3 assignments per HIT, starts its own Redis on a free loopback port, gunicorn (3 workers),
a Celery worker and Celery beat, and drives 30 workers over HTTP (sign in, *Start next task*,
submit; a submission whose answer was lost is sent again, as the task page does) for a bounded
time while it kills a gunicorn worker, kills the Celery worker (restarted), stops Redis for
--redis-down seconds and drops every database connection. Then it waits for the latest scoring
run to see the last judgment and compares it with a fresh recompute. It prints: submissions
acknowledged vs stored, duplicates, 5xx answers, over-filled HITs, and the seconds from the end
of the load until the latest run equals a fresh recompute.

Run: .venv/bin/python bench/fault_bench.py [--seconds 150] [--redis-down 60] [--workers 30]
Everything listens on 127.0.0.1 only; every process it starts is stopped at the end.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from hits.batch_fields import BatchSpec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG = os.environ.get("FAULT_BENCH_PG", "postgres://postgres@127.0.0.1:5432")
PASSWORD = "a-long-bench-password"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"nothing listens on port {port} after {seconds} s")


class Stack:
    """The processes of the production form, each startable and killable."""

    def __init__(self, env: dict, web_port: int, redis_port: int, logdir: Path):
        self.env, self.web_port, self.redis_port, self.logdir = env, web_port, redis_port, logdir
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str) -> None:
        py = sys.executable
        commands = {
            "redis": [
                "redis-server",
                "--port",
                str(self.redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            "web": [
                str(Path(py).parent / "gunicorn"),
                "config.wsgi",
                "--bind",
                f"127.0.0.1:{self.web_port}",
                "--workers",
                "3",
                "--timeout",
                "120",
            ],
            "worker": [py, "-m", "celery", "-A", "config", "worker", "--loglevel", "WARNING", "--concurrency", "1"],
            "beat": [
                py,
                "-m",
                "celery",
                "-A",
                "config",
                "beat",
                "--loglevel",
                "WARNING",
                "--schedule",
                str(self.logdir / "beat-schedule"),
            ],
        }
        log = open(self.logdir / f"{name}.log", "a")  # noqa: SIM115 - open for the life of the process
        self.procs[name] = subprocess.Popen(
            commands[name], cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def kill(self, name: str, sig=signal.SIGKILL) -> None:
        proc = self.procs.get(name)
        if proc and proc.poll() is None:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=30)

    def kill_one_gunicorn_worker(self) -> int | None:
        master = self.procs["web"].pid
        children = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
        if children:
            os.kill(int(children[0]), signal.SIGKILL)  # the master starts a new one
            return int(children[0])
        return None

    def stop_all(self) -> None:
        for name in list(self.procs):
            try:
                self.kill(name, signal.SIGTERM)
            except Exception:  # noqa: BLE001
                self.kill(name)


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.acknowledged: set[int] = set()
        self.server_errors = 0
        self.connection_errors = 0
        self.refused = 0
        self.statuses: dict[int, int] = {}

    def status(self, code: int) -> None:
        with self.lock:
            self.statuses[code] = self.statuses.get(code, 0) + 1
            if code >= 500:
                self.server_errors += 1


def orm_retry(read):
    """The bench's own reads, across the connection drops it causes."""
    from django.db import InterfaceError, OperationalError, connection

    for _ in range(100):
        try:
            return read()
        except (OperationalError, InterfaceError):
            connection.close()
            time.sleep(0.5)
    raise SystemExit("the database stayed unreachable")


def drive(base: str, username: str, stop: threading.Event, tally: Tally) -> None:
    import requests

    from hits.models import Assignment
    from hits.services.submission import read_token

    session = requests.Session()

    def call(method, url, **kwargs):
        for _ in range(200):  # bounded: a dead server or Redis makes us wait, never loop for ever
            if stop.is_set() and method == "GET":
                return None
            try:
                response = session.request(method, base + url, timeout=30, allow_redirects=False, **kwargs)
            except requests.RequestException:
                with tally.lock:
                    tally.connection_errors += 1
                time.sleep(0.5)
                continue  # the answer was lost (a killed worker): send the same request again
            tally.status(response.status_code)
            if response.status_code >= 500 or response.status_code == 429:
                time.sleep(0.5)
                continue
            return response
        return None

    page = call("GET", "/accounts/login/")
    if page is None:
        return
    token = session.cookies.get("csrftoken")
    call("POST", "/accounts/login/", data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token})
    while not stop.is_set():
        response = call("POST", "/work/next", headers={"X-CSRFToken": session.cookies.get("csrftoken", "")})
        if response is None or "/task/" not in response.headers.get("Location", ""):
            return  # no work left
        task_token = re.search(r"/task/([^/]+)/", response.headers["Location"]).group(1)
        assignment_id, _ = read_token(task_token)
        acus = orm_retry(
            lambda assignment_id=assignment_id: list(
                Assignment.objects.get(pk=assignment_id).hit.summary.document.reference.acus.values_list(
                    "pk", flat=True
                )
            )
        )
        answers = {str(i): (i + assignment_id) % 3 != 0 for i in acus}
        body = json.dumps({"answers": answers, "active_seconds": 20})
        result = call("POST", f"/task/{task_token}/submit", data=body, headers={"Content-Type": "application/json"})
        if result is not None and result.status_code == 200 and result.json().get("ok"):
            with tally.lock:
                tally.acknowledged.add(assignment_id)
        elif result is not None:
            with tally.lock:
                tally.refused += 1
        time.sleep(0.3)


def drop_connections(dsn_db: str) -> int:
    import psycopg2

    conn = psycopg2.connect(PG + "/postgres")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
        [dsn_db],
    )
    n = cur.fetchone()[0]
    conn.close()
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=150, help="load duration")
    parser.add_argument("--redis-down", type=int, default=60)
    parser.add_argument("--workers", type=int, default=30)
    parser.add_argument("--converge-timeout", type=int, default=600)
    args = parser.parse_args()

    dbname = f"acu_fault_bench_{os.getpid()}"
    import psycopg2

    admin = psycopg2.connect(PG + "/postgres")
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{dbname}"')
    admin.close()
    redis_port, web_port = free_port(), free_port()
    logdir = Path(f"/tmp/fault-bench-{os.getpid()}")
    logdir.mkdir()
    env = {
        **os.environ,
        "DATABASE_URL": f"{PG}/{dbname}",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
        "CACHE_URL": f"redis://127.0.0.1:{redis_port}/1",
        "SECRET_KEY": "fault-bench-secret-key",
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SCORING_RECOMPUTE_DELAY": "2",
        "SCORING_RECOMPUTE_GRACE": "15",
        "RATE_LIMIT_WORK_PER_ACCOUNT": "100000",
        "RATE_LIMIT_WORK_PER_ADDRESS": "100000",
        "WHITENOISE_USE_FINDERS": "1",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "SECRET_KEY")})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    stack = Stack(env, web_port, redis_port, logdir)
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        import django

        django.setup()
        from django.db.models import Count, F, Q

        from annotation.models import Dataset
        from hits.models import HIT, Assignment, Judgment
        from hits.services.batches import create_batch, publish_batch
        from hits.services.dataset_import import import_dataset
        from hits.services.people import create_user_with_role
        from scoring.models import ScoringRun
        from scoring.runs.services import compute_scores

        shared = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
        import_dataset(shared / "data" / "realsumm", name="realsumm", fmt="pyramid")
        dataset = Dataset.objects.get(name="realsumm")
        batch = publish_batch(create_batch(dataset=dataset, spec=BatchSpec(assignments=3)))
        users = [
            create_user_with_role(username=f"bench-w{i:02d}", password=PASSWORD, role="worker").username
            for i in range(args.workers)
        ]
        print(f"database {dbname}; {batch.hits.count()} HITs x 3 places; {len(users)} workers; logs in {logdir}")

        for name in ("redis", "web", "worker", "beat"):
            stack.start(name)
            if name == "redis":
                wait_port(redis_port)
        wait_port(web_port)

        tally, stop = Tally(), threading.Event()
        threads = [
            threading.Thread(target=drive, args=(f"http://127.0.0.1:{web_port}", u, stop, tally), daemon=True)
            for u in users
        ]
        for t in threads:
            t.start()
        start = time.monotonic()
        s = args.seconds
        schedule = [
            (0.15 * s, "kill a gunicorn worker", stack.kill_one_gunicorn_worker),
            (0.25 * s, "drop every database connection", lambda: drop_connections(dbname)),
            (0.35 * s, "kill the Celery worker", lambda: stack.kill("worker")),
            (0.35 * s + 5, "restart the Celery worker", lambda: stack.start("worker")),
            (0.45 * s, f"stop Redis for {args.redis_down} s", lambda: stack.kill("redis")),
            (0.45 * s + args.redis_down, "restart Redis", lambda: stack.start("redis")),
            (0.8 * s + args.redis_down, "drop every database connection", lambda: drop_connections(dbname)),
            (0.85 * s + args.redis_down, "kill a gunicorn worker", stack.kill_one_gunicorn_worker),
        ]
        total = s + args.redis_down
        for at, what, action in schedule:
            time.sleep(max(0.0, at - (time.monotonic() - start)))
            print(f"t={time.monotonic() - start:6.1f}s  {what}: {action()}")
        time.sleep(max(0.0, total - (time.monotonic() - start)))
        stop.set()
        for t in threads:
            t.join(timeout=120)
        load_end = time.monotonic()
        from django.db import connection

        connection.close()  # dropped by the fault schedule

        last_id = (
            Judgment.objects.filter(assignment__hit__batch=batch).order_by("-pk").values_list("pk", flat=True).first()
        )
        converged = None
        while time.monotonic() - load_end < args.converge_timeout:
            run = (
                ScoringRun.objects.filter(dataset=dataset, trigger="submissions", status="done").order_by("-pk").first()
            )
            if run and run.inputs.get("last_judgment_id") == last_id:
                fresh = compute_scores(dataset, seed=0)
                if (
                    run.outputs["systems"] == fresh.outputs["systems"]
                    and run.outputs["counts"] == fresh.outputs["counts"]
                ):
                    converged = time.monotonic() - load_end
                    break
            time.sleep(1)

        stored = set(
            Assignment.objects.filter(hit__batch=batch, status__in=Assignment.COUNTED).values_list("pk", flat=True)
        )
        lost = tally.acknowledged - stored
        acus = {h.pk: h.acu_count for h in HIT.objects.filter(batch=batch)}
        per_assignment = (
            Judgment.objects.filter(assignment__hit__batch=batch)
            .values("assignment_id", "assignment__hit_id")
            .annotate(n=Count("pk"), acus=Count("acu_id", distinct=True))
        )
        duplicates = sum(
            1 for row in per_assignment if row["n"] != row["acus"] or row["n"] != acus[row["assignment__hit_id"]]
        )
        overfilled = (
            HIT.objects.filter(batch=batch)
            .annotate(active=Count("assignments", filter=Q(assignments__status__in=Assignment.ACTIVE)))
            .filter(active__gt=F("max_assignments"))
            .count()
        )
        print("\nfault bench figures")
        print(
            f"  submissions acknowledged: {len(tally.acknowledged)}, stored: {len(stored)}, "
            f"acknowledged but lost: {len(lost)}"
        )
        print(f"  assignments with duplicate or missing judgments: {duplicates}")
        print(
            f"  5xx answers: {tally.server_errors} (answers by status: {dict(sorted(tally.statuses.items()))}; "
            f"connection errors retried: {tally.connection_errors})"
        )
        print(f"  over-filled HITs: {overfilled}")
        print(
            f"  seconds from the end of the load until the latest run equals a fresh recompute: {converged:.1f}"
            if converged is not None
            else f"  the latest run did not catch up within {args.converge_timeout} s"
        )
    finally:
        stack.stop_all()
        from django.db import connections

        connections.close_all()
        admin = psycopg2.connect(PG + "/postgres")
        admin.autocommit = True
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        admin.close()


if __name__ == "__main__":
    main()
