"""Load benchmark of the crowd work cycle: gunicorn (Dockerfile settings), a Celery worker,
PostgreSQL and Redis, REALSumm, in-house batches of 2,500 HITs x 3 (one per concurrency level) and up to 200 workers.

It creates its own database (dropped at the end), imports REALSumm, publishes the batches,
creates the workers with sessions, starts `gunicorn config.wsgi --workers 3` on 127.0.0.1 and
a Celery worker (one BLAS thread, as docker-compose.yml runs it), and drives the workers with
a bounded asyncio client (httpx): each worker loops *next task* (POST /work/next), *task page* (GET /task/<token>/) and *submit* (POST the
answers) at each concurrency level for a fixed time, in `--slices` slices. The trivial view
(GET /accounts/login/, 10 concurrent) is measured in the same run before, between and after
the slices of every level, and each level's ratio is taken against its own trivial slices: a
host whose speed drifts over minutes moves both sides of the ratio alike. Requests completed
by a slice's deadline count for the throughput. It prints cycles/s, requests/s, p50/p95/p99
per request type, the per-request ratio to the trivial view, the machine's busy share, the
client's and the server's CPU per request (by process kind), then checks that the judgments stored
equal the submissions acknowledged, that no HIT is over-filled and no worker got a HIT twice.
Everything listens on the loopback only and stops by itself (each phase is timed, every
request has a timeout, the processes it started are stopped at the end).

Run (PostgreSQL and Redis on this machine):
  .venv/bin/python bench/load_bench.py [--seconds 60] [--slices 4] [--trivial-seconds 5]
  [--levels 10,50,200] [--other-assignments 0]
  [--tree PATH]   run the server from another checkout (e.g. an older commit) for side-by-side figures
  [--threads N]   gunicorn gthread workers with N threads each (the Dockerfile runs sync workers)
"""

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import proc_cpu  # noqa: E402

PYTHON = sys.executable
ACU_RE = re.compile(r'data-acu="(\d+)"')

SETUP = r"""
import json, sys
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.hashers import make_password
from django.db import connection
from annotation.models import Dataset
from hits.batch_fields import BatchSpec
from hits.services.batches import create_batch, publish_batch
from hits.services.people import create_user_with_role

dataset = Dataset.objects.get(name="realsumm")
# One batch of 2,500 HITs x 3 per concurrency level, so no level runs out of work (the handout
# takes the oldest batch's HITs first: the levels fill them in turn).
batches = [publish_batch(create_batch(dataset=dataset, spec=BatchSpec(assignments=3), systems=list(dataset.systems.all()))) for _ in range(BATCHES)]
batch = batches[0]
store = import_module(settings.SESSION_ENGINE).SessionStore
settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # set-up only: workers get sessions, not logins
BACKEND = next(b for b in settings.AUTHENTICATION_BACKENDS if "lockout" not in b.lower() and "axes" not in b.lower())
sessions = []
for i in range(WORKERS):
    user = create_user_with_role(username=f"load{i}", password="load-bench-password-" + str(i), role="worker")
    s = store()
    # The tree's own user backend (the first one that is not the sign-in lockout's), as a sign-in would record it.
    s[SESSION_KEY], s[BACKEND_SESSION_KEY], s[HASH_SESSION_KEY] = str(user.pk), BACKEND, user.get_session_auth_hash()
    s.create()
    sessions.append(s.session_key)
other = OTHER
if other:
    from hits.models import Batch, Worker
    n_workers = 50
    n_batches = max(1, other // (n_workers * dataset.documents.count() * dataset.systems.count()))
    ids = [b.pk for b in Batch.objects.bulk_create([Batch(dataset=dataset, name=f"other {i}", status="complete", assignments_per_hit=n_workers) for i in range(n_batches)])]
    ws = [w.pk for w in Worker.objects.bulk_create([Worker(provider="inhouse", external_id=f"other-{i}") for i in range(n_workers)])]
    extra = ", open_places" if any(f.name == "open_places" for f in connection.introspection.get_table_description(connection.cursor(), "hits_hit")) else ""
    with connection.cursor() as c:
        c.execute("INSERT INTO hits_hit (batch_id, summary_id, max_assignments, acu_count, reward, external_id" + extra + ") "
                  "SELECT b, s.id, %s, 0, 0.15, ''" + (", 0" if extra else "") + " FROM unnest(%s::bigint[]) b, annotation_summary s "
                  "WHERE s.document_id IN (SELECT id FROM annotation_document WHERE dataset_id = %s)", [n_workers, ids, dataset.pk])
        c.execute("INSERT INTO hits_assignment (hit_id, worker_id, status, created_at, submitted_at, comment, feedback, external_id, confirmed, flag) "
                  "SELECT h.id, w, 'submitted', now(), now(), '', '', '', true, '' FROM hits_hit h, unnest(%s::bigint[]) w WHERE h.batch_id = ANY(%s)", [ws, ids])
        # A database that has held them a while: vacuumed (visibility map set, as autovacuum
        # would long have done) and analysed, so no housekeeping of this bulk insert runs in a phase.
        c.execute("VACUUM ANALYZE hits_hit")
        c.execute("VACUUM ANALYZE hits_assignment")
        c.execute("ANALYZE")
print("SETUP" + json.dumps({"batches": [b.pk for b in batches], "sessions": sessions, "hits": batch.hits.count()}))
"""

CHECK = r"""
import json
from django.db.models import Count, F, Q
from hits.models import HIT, Assignment, Judgment
batches = BATCHES
over = HIT.objects.filter(batch_id__in=batches).annotate(n=Count("assignments", filter=Q(assignments__status__in=["assigned", "submitted", "approved"]))).filter(n__gt=F("max_assignments")).count()
twice = Assignment.objects.filter(hit__batch_id__in=batches).values("hit_id", "worker_id").annotate(n=Count("pk")).filter(n__gt=1).count()
print("CHECK" + json.dumps({
    "judgments": Judgment.objects.filter(assignment__hit__batch_id__in=batches).count(),
    "submitted": Assignment.objects.filter(hit__batch_id__in=batches, status="submitted").count(),
    "overfilled_hits": over, "worker_twice": twice,
}))
"""


def env_for(args) -> dict:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=args.database,
        CELERY_BROKER_URL=args.redis,
        SECRET_KEY="load-bench-only",
        DEBUG="0",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        LOG_LEVEL="WARNING",
        PYTHONHASHSEED="0",
        # As docker-compose.yml: rate-limit counters (and MTurk/Prolific caches) in Redis.
        CACHE_URL=args.redis.rsplit("/", 1)[0] + "/" + str(int(args.redis.rsplit("/", 1)[1]) + 1),
        # The limits stay on (their counting is part of every request's cost), set above what
        # the benchmark's workers, all on one address and faster than people, reach.
        RATE_LIMIT_WORK_PER_ACCOUNT="1000000",
        RATE_LIMIT_WORK_PER_ADDRESS="1000000",
    )
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    return env


def manage(args, *argv, stdin=None, timeout=1800) -> str:
    out = subprocess.run(
        [PYTHON, "manage.py", *argv],
        cwd=args.tree,
        env=env_for(args),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if out.returncode:
        sys.exit(f"manage.py {' '.join(argv)} failed:\n{out.stderr[-3000:]}")
    return out.stdout


def recreate_database(url: str, drop_only=False) -> None:
    import psycopg2

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    conn = psycopg2.connect(
        host=parsed.hostname,
        port=parsed.port or 5432,
        user=parsed.username,
        password=parsed.password,
        dbname="postgres",
    )
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [name],
        )
        cur.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if not drop_only:
            cur.execute(f'CREATE DATABASE "{name}"')
    conn.close()


def wait_for_port(port: int, seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    sys.exit(f"the server did not listen on 127.0.0.1:{port} within {seconds} s")


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def server_cpu(procs, database: str) -> dict[int, tuple[str, float]]:
    """CPU seconds so far of the server side, by process: the gunicorn and Celery processes this
    bench started (and their children) and the PostgreSQL backends connected to its database."""
    import psycopg2

    kinds = {}
    for p, kind in zip(procs, ("gunicorn", "celery"), strict=False):
        kinds.update(dict.fromkeys([p.pid, *_children(p.pid)], kind))
    parsed = urlparse(database)
    conn = psycopg2.connect(host=parsed.hostname, port=parsed.port or 5432, user=parsed.username, dbname="postgres")
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                [parsed.path.lstrip("/")],
            )
            kinds.update(dict.fromkeys([row[0] for row in cur.fetchall()], "database"))
    finally:
        conn.close()
    return {pid: (kind, proc_cpu.cpu_seconds(pid)) for pid, kind in kinds.items()}


def recomputes(database: str) -> tuple[int, float]:
    """(scoring runs stored so far, their seconds summed): the recomputes queued by submissions."""
    import psycopg2

    parsed = urlparse(database)
    conn = psycopg2.connect(
        host=parsed.hostname, port=parsed.port or 5432, user=parsed.username, dbname=parsed.path.lstrip("/")
    )
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT count(*), coalesce(sum(seconds), 0) FROM scoring_scoringrun WHERE kind = 'scores'")
            n, seconds = cur.fetchone()
    finally:
        conn.close()
    return int(n), float(seconds)


def cpu_spent(before: dict, after: dict) -> dict[str, float]:
    """CPU seconds between two snapshots, by kind of process and in all (a process that ended in
    between is not counted: the benchmark's processes live through every phase; backends, and
    autovacuum workers of the database, started in between count whole)."""
    spent = dict.fromkeys(("gunicorn", "celery", "database"), 0.0)
    for pid, (kind, t) in after.items():
        spent[kind] += t - before.get(pid, (kind, 0.0))[1]
    spent["all"] = sum(spent.values())
    return spent


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


async def trivial(base: str, concurrency: int, seconds: float) -> dict:
    import httpx

    lat: list[float] = []
    done = 0
    deadline = time.perf_counter() + seconds
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=httpx.Limits(max_connections=concurrency)) as client:

        async def loop():
            nonlocal done
            while time.perf_counter() < deadline:
                t = time.perf_counter()
                r = await client.get("/accounts/login/")
                if r.status_code == 200:
                    end = time.perf_counter()
                    lat.append(end - t)
                    done += end <= deadline

        await asyncio.gather(*(loop() for _ in range(concurrency)))
    return {"requests": done, "window": seconds, "sent": len(lat), "lat": {"trivial": lat}, "cycles": 0}


def worker_clients(base: str, sessions: list[str]) -> list:
    """One HTTP client per worker (its session and CSRF cookies), made once for all the slices
    of a level: making a client costs the client milliseconds of CPU that the server would lose."""
    import httpx

    made = []
    for session_key in sessions:
        cookies = {"sessionid": session_key, "csrftoken": "loadbenchcsrftoken0123456789abcd"}
        headers = {"X-CSRFToken": cookies["csrftoken"]}
        made.append(httpx.AsyncClient(base_url=base, timeout=60, cookies=cookies, headers=headers))
    return made


async def work(clients: list, seconds: float, totals: dict) -> dict:
    """One slice of work: each worker loops next task, task page, submit until the deadline and
    finishes the cycle it is in (so every acknowledged submission is stored and no assignment
    is left open). Requests and cycles completed by the deadline count for the throughput; the
    ones after it only for the checks and the CPU per request."""
    import httpx

    lat: dict[str, list[float]] = {"next": [], "task": [], "submit": []}
    cycles = errors = no_work = done = 0
    deadline = time.perf_counter() + seconds

    def timed(kind: str, t: float) -> None:
        nonlocal done
        end = time.perf_counter()
        lat[kind].append(end - t)
        done += end <= deadline

    async def one_worker(client):
        nonlocal cycles, errors, no_work
        while time.perf_counter() < deadline:
            try:
                t = time.perf_counter()
                r = await client.post("/work/next")
                timed("next", t)
                location = r.headers.get("location", "")
                if r.status_code != 302 or "/task/" not in location:
                    no_work += 1
                    await asyncio.sleep(1)
                    continue
                t = time.perf_counter()
                r = await client.get(location)
                timed("task", t)
                acus = ACU_RE.findall(r.text)
                t = time.perf_counter()
                r = await client.post(
                    location.rstrip("/") + "/submit",
                    json={"answers": dict.fromkeys(acus, True), "active_seconds": 20},
                )
                timed("submit", t)
                body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
                if body.get("ok") and not body.get("repeated"):
                    cycles += time.perf_counter() <= deadline
                    totals["acknowledged"] += 1
                    totals["answers"] += len(acus)
                else:
                    errors += 1
            except (httpx.HTTPError, ValueError):
                errors += 1

    await asyncio.gather(*(one_worker(c) for c in clients))
    return {
        "requests": done,
        "window": seconds,
        "sent": sum(len(v) for v in lat.values()),
        "lat": lat,
        "cycles": cycles,
        "errors": errors,
        "no_work": no_work,
    }


def combine(parts: list[dict]) -> dict:
    """The slices of one kind of a level as one measurement: counts, windows and CPU summed,
    latencies pooled."""
    out: dict = {"lat": {}, "server_cpu": dict.fromkeys(("gunicorn", "celery", "database", "all"), 0.0)}
    for key in ("requests", "window", "sent", "cycles", "errors", "no_work", "client_cpu", "busy", "every"):
        out[key] = sum(p.get(key, 0) for p in parts)
    out["recomputes"] = tuple(sum(p["recomputes"][i] for p in parts) for i in range(2))
    for p in parts:
        for kind, values in p["lat"].items():
            out["lat"].setdefault(kind, []).extend(values)
        for kind, seconds in p["server_cpu"].items():
            out["server_cpu"][kind] += seconds
    out["rps"] = out["requests"] / out["window"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", default=str(ROOT), help="the checkout whose server is measured")
    parser.add_argument("--seconds", type=float, default=60, help="per concurrency level")
    parser.add_argument("--slices", type=int, default=4, help="work slices per level, trivial slices around each")
    parser.add_argument("--trivial-seconds", type=float, default=5, help="per trivial slice")
    parser.add_argument("--levels", default="10,50,200")
    parser.add_argument(
        "--other-assignments", type=int, default=0, help="assignments of other (finished) batches to add first"
    )
    parser.add_argument("--threads", type=int, default=1, help="gunicorn threads per worker (gthread when > 1)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/acu_h14_load")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/6")
    parser.add_argument(
        "--data", default=str(Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared")) / "data" / "realsumm")
    )
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    args.tree = str(Path(args.tree).resolve())

    recreate_database(args.database)
    procs = []
    try:
        manage(args, "migrate", "-v", "0")
        manage(args, "import_dataset", args.data, "--name", "realsumm")
        setup = (
            SETUP.replace("WORKERS", str(max(levels)))
            .replace("OTHER", str(args.other_assignments))
            .replace("BATCHES", str(len(levels)))
        )
        out = manage(args, "shell", stdin=setup)
        info = json.loads(out.split("SETUP", 1)[1])
        print(
            f"tree {args.tree}: {len(info['batches'])} batches of {info['hits']} HITs x 3 (one per level),"
            f" {len(info['sessions'])} workers, "
            f"{args.other_assignments} assignments of other batches"
        )
        env = env_for(args)
        subprocess.run(
            [PYTHON, "-m", "celery", "-A", "config", "purge", "-f"],
            cwd=args.tree,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        procs.append(
            subprocess.Popen(
                [
                    PYTHON,
                    "-m",
                    "gunicorn",
                    "config.wsgi",
                    "--bind",
                    f"127.0.0.1:{args.port}",
                    "--workers",
                    "3",
                    *(["--worker-class", "gthread", "--threads", str(args.threads)] if args.threads > 1 else []),
                    "--timeout",
                    "120",
                    "--log-level",
                    "warning",
                ],
                cwd=args.tree,
                env=env,
            )
        )
        procs.append(
            subprocess.Popen(
                [
                    PYTHON,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "-c",
                    "1",
                    "--loglevel",
                    "WARNING",
                    "-n",
                    f"loadbench{args.port}@%h",
                ],
                cwd=args.tree,
                # One BLAS thread as docker-compose.yml runs the worker; its log (settings.LOGGING) quiet.
                env={**env, "OPENBLAS_NUM_THREADS": "1", "LOG_LEVEL": "WARNING"},
                stdout=subprocess.DEVNULL,
            )
        )
        wait_for_port(args.port)
        base = f"http://127.0.0.1:{args.port}"
        totals = {"acknowledged": 0, "answers": 0}

        async def measured(phase):
            start, runs = server_cpu(procs, args.database), recomputes(args.database)
            machine, client = proc_cpu.machine_seconds(), time.process_time()
            out = await phase
            out["client_cpu"] = time.process_time() - client
            out["busy"], out["every"] = (b - a for a, b in zip(machine, proc_cpu.machine_seconds(), strict=True))
            out["server_cpu"] = cpu_spent(start, server_cpu(procs, args.database))
            now = recomputes(args.database)
            out["recomputes"] = (now[0] - runs[0], now[1] - runs[1])
            return out

        async def run():
            await trivial(base, 3, 3)  # warm-up: every gunicorn worker has loaded the app
            slice_seconds = args.seconds / args.slices
            results = {}
            for level in levels:
                # Trivial slices before, between and after the work slices: each ratio is taken
                # against the trivial view measured within seconds of it, so a host whose speed
                # drifts over minutes (seen here: 496 to 280 req/s in one run) moves both alike.
                light = [await measured(trivial(base, 10, args.trivial_seconds))]
                heavy = []
                clients = worker_clients(base, info["sessions"][:level])
                for _ in range(args.slices):
                    heavy.append(await measured(work(clients, slice_seconds, totals)))
                    light.append(await measured(trivial(base, 10, args.trivial_seconds)))
                for client in clients:
                    await client.aclose()
                results[level] = (combine(light), combine(heavy), light[0], light[-1])
            return results

        results = asyncio.run(run())
        first, last = results[levels[0]][2], results[levels[-1]][3]
        print(
            f"trivial view (GET /accounts/login/, 10 concurrent): first slice {first['requests'] / first['window']:.1f}"
            f" req/s, last {last['requests'] / last['window']:.1f} req/s; {args.slices} work slices of {args.seconds / args.slices:.0f} s per level,"
            f" each between trivial slices of {args.trivial_seconds:.0f} s"
        )
        print(
            "workers  cycles/s   req/s  trivial req/s  ratio  next p50/p95/p99 ms        task p50/p95/p99 ms"
            "        submit p50/p95/p99 ms      errors no-work"
        )
        for level, (light, heavy, _, _) in results.items():
            cols = "  ".join(
                f"{pct(heavy['lat'][k], 0.5):7.1f} {pct(heavy['lat'][k], 0.95):7.1f} {pct(heavy['lat'][k], 0.99):7.1f}"
                for k in ("next", "task", "submit")
            )
            print(
                f"{level:7d}  {heavy['cycles'] / heavy['window']:8.1f}  {heavy['rps']:6.1f}  {light['rps']:13.1f}"
                f"  {heavy['rps'] / light['rps']:5.2f}  {cols}  {heavy['errors']:6d} {heavy['no_work']:7d}"
            )
        print("machine busy (all cores, /proc/stat) and this client's CPU per request, work slices | trivial slices:")
        for level, (light, heavy, _, _) in results.items():
            print(
                f"{level:7d} workers: {heavy['busy'] / heavy['every']:.0%}, {heavy['client_cpu'] / heavy['sent'] * 1000:.2f} ms"
                f" | {light['busy'] / light['every']:.0%}, {light['client_cpu'] / light['sent'] * 1000:.2f} ms"
            )
        print(
            "server CPU per request (gunicorn, Celery and the database's backends, from /proc; independent of the"
            " client), work request against the trivial view of the same level's slices:"
        )
        for level, (light, heavy, _, _) in results.items():
            per = {k: v / max(1, heavy["sent"]) * 1000 for k, v in heavy["server_cpu"].items()}
            base_cpu = light["server_cpu"]["all"] / max(1, light["sent"]) * 1000
            print(
                f"{level:7d} workers: work request {per['all']:.2f} ms = {per['all'] / base_cpu:.2f}x the trivial"
                f" view's {base_cpu:.2f} ms (gunicorn {per['gunicorn']:.2f}, Celery {per['celery']:.2f}, database"
                f" {per['database']:.2f}); {heavy['recomputes'][0]} recomputes of"
                f" {heavy['recomputes'][1] / max(1, heavy['recomputes'][0]):.2f} s on average"
            )
        check = json.loads(
            manage(args, "shell", stdin=CHECK.replace("BATCHES", json.dumps(info["batches"]))).split("CHECK", 1)[1]
        )
        ok = (
            check["judgments"] == totals["answers"]
            and check["submitted"] == totals["acknowledged"]
            and check["overfilled_hits"] == 0
            and check["worker_twice"] == 0
        )
        print(
            f"checks: {totals['acknowledged']} submissions acknowledged, {check['submitted']} stored; "
            f"{totals['answers']} answers sent, {check['judgments']} judgments stored; "
            f"{check['overfilled_hits']} HITs over-filled; {check['worker_twice']} worker/HIT pairs twice: {'OK' if ok else 'FAILED'}"
        )
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        recreate_database(args.database, drop_only=True)


if __name__ == "__main__":
    main()
