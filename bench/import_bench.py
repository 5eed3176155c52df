"""Benchmark RoSE-scale import and export against PostgreSQL's own COPY, side by side in one run.

Everything runs in one process on one database, so the figures that matter are the ratios:

1. Generates a RoSE JSONL file the size of RoSE's CNN/DM test set with three crowd annotators
   per summary (2,500 documents, 22,000 summaries, about 20,000 reference ACUs, about 529,000
   judgments) from a seeded random.Random: every run imports the same file (bench/out/, which
   git ignores).
2. Makes sure the database already holds other datasets, as in real use (untimed, kept between
   runs): REALSumm imported `--realsumm-copies` times and one other RoSE-scale dataset
   (`--no-background` skips them). Then VACUUM ANALYZE and CHECKPOINT, untimed.
3. Import: `manage.py import_dataset FILE --name bench-rose-scale --format rose` (call_command),
   timed, and its parse step (`read_records`) timed alone.
4. The references for the import: the same judgments (read back with COPY TO STDOUT) COPYed
   into a `CREATE TABLE ... (LIKE hits_judgment INCLUDING ALL)` (its columns, identity and
   indexes) with hits_judgment's two foreign keys added (deferred, as Django makes them:
   checked at the commit) and holding the other datasets' judgments (filled untimed, as
   hits_judgment was before the import), timed to the end of the commit; and the same without
   the foreign keys.
5. Export: `export_dataset NAME --format rose --output FILE` and `export_judgments NAME
   --output FILE` (CSV) against `psql -c "\\copy (the dataset's judgments) TO FILE CSV"` and
   the same `COPY ... TO STDOUT` in process.
6. Round trip (`--no-roundtrip` skips it): imports the RoSE export under another name and
   checks in SQL that it holds the same documents, sentences, ACUs, summaries and labels.
7. `--stages`: the import once more with each stage timed (parse, each table's COPY, the
   commit with its deferred foreign-key checks, ANALYZE); `--profile`: once more under
   cProfile, the top functions printed.

Targets (issue 14): import ≤ 1.5× the COPY of its judgments, export ≤ 3× `\\copy`. Each time
is printed with the CPU seconds of this process and its PostgreSQL backend (read from /proc
when the server runs here): on a busy machine wall time also counts the wait for a core.

Run:
    .venv/bin/python bench/import_bench.py --database-url postgres://postgres@127.0.0.1:5432/acu_bench
    .venv/bin/python bench/import_bench.py --documents 200 --no-background --keep
    .venv/bin/python bench/import_bench.py --profile --no-roundtrip
    .venv/bin/python bench/import_bench.py --repeat 3 --stages --tree /work/main   (another checkout's code)

The database (default postgres://postgres@127.0.0.1:5432/acu_bench, or $DATABASE_URL) is
created if missing and migrated before the run; `psql` must be on the PATH.
"""

import argparse
import cProfile
import io
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from rose_scale import generate

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "out"
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/acu_bench"
DATASET_NAME = "bench-rose-scale"


def ensure_database(url: str) -> None:
    import psycopg2
    from psycopg2 import sql

    u = urlparse(url)
    name = u.path.lstrip("/")
    conn = psycopg2.connect(
        dbname="postgres",
        user=u.username or "postgres",
        password=u.password,
        host=u.hostname or "127.0.0.1",
        port=u.port or 5432,
    )
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if not cur.fetchone():
            cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            print(f"created database {name}")
    conn.close()


BACKGROUND_ROSE = "bench-background-rose-scale"
BACKGROUND_REALSUMM = "bench-background-realsumm-{}"
ROUNDTRIP_NAME = "bench-rose-scale-roundtrip"
SHARED = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
REALSUMM_ROSE = SHARED / "data" / "realsumm.rose.jsonl"
# Tables an import writes: vacuumed untimed between the runs' deletes and the timed steps.
TABLES = [
    "annotation_document",
    "annotation_reference",
    "annotation_referencesentence",
    "annotation_acu",
    "annotation_system",
    "annotation_summary",
    "hits_batch",
    "hits_worker",
    "hits_hit",
    "hits_assignment",
    "hits_judgment",
]
DATASET_JUDGMENTS = """
    SELECT j.id, j.assignment_id, j.acu_id, j.present
    FROM hits_judgment j
    JOIN hits_assignment a ON a.id = j.assignment_id
    JOIN hits_hit h ON h.id = a.hit_id
    JOIN hits_batch b ON b.id = h.batch_id
    WHERE b.dataset_id = {dataset_id}
"""


def count_rows(dataset) -> dict[str, int]:
    from annotation.models import ACU, Document, Reference, ReferenceSentence, Summary, System
    from hits.models import HIT, Assignment, Judgment

    return {
        "documents": Document.objects.filter(dataset=dataset).count(),
        "references": Reference.objects.filter(document__dataset=dataset).count(),
        "sentences": ReferenceSentence.objects.filter(reference__document__dataset=dataset).count(),
        "ACUs": ACU.objects.filter(reference__document__dataset=dataset).count(),
        "systems": System.objects.filter(dataset=dataset).count(),
        "summaries": Summary.objects.filter(document__dataset=dataset).count(),
        "HITs": HIT.objects.filter(batch__dataset=dataset).count(),
        "assignments": Assignment.objects.filter(hit__batch__dataset=dataset).count(),
        "judgments": Judgment.objects.filter(assignment__hit__batch__dataset=dataset).count(),
    }


def database_totals() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        parts = []
        for table in ["annotation_dataset", "annotation_summary", "annotation_acu", "hits_assignment", "hits_judgment"]:
            cursor.execute(f"SELECT count(*) FROM {table}")
            parts.append(f"{table.split('_', 1)[1]} {cursor.fetchone()[0]:,}")
    return ", ".join(parts)


def settle() -> None:
    """VACUUM ANALYZE the import's tables and CHECKPOINT (untimed): every timed step starts
    from the same state, not amid the cleanup of the deletes before it."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(f"VACUUM ANALYZE {table}")
        cursor.execute("CHECKPOINT")


def delete_named(name: str) -> None:
    from django.db import transaction

    from annotation.models import Dataset
    from hits.services.dataset_import import delete_dataset

    for old in Dataset.objects.filter(name=name):
        with transaction.atomic():
            delete_dataset(old)


def ensure_background(scale_path: Path, copies: int) -> None:
    """Other datasets in the database, as in real use; imported once and kept."""
    from annotation.models import Dataset
    from hits.services.dataset_import import import_dataset

    wanted = [(BACKGROUND_REALSUMM.format(i), REALSUMM_ROSE) for i in range(1, copies + 1)]
    wanted.append((BACKGROUND_ROSE, scale_path))
    for name, path in wanted:
        if Dataset.objects.filter(name=name).exists():
            continue
        if not path.is_file():
            sys.exit(f"{path} not found (set SHARED_DIR, or pass --no-background)")
        t0 = time.perf_counter()
        import_dataset(path, name=name, fmt="rose")
        print(f"  background dataset {name!r} imported in {time.perf_counter() - t0:.1f} s (untimed)")


def cpu_seconds() -> float | None:
    """CPU seconds used so far by this process and by its PostgreSQL backend, or None when the
    backend's /proc entry cannot be read (a server on another machine): on a shared machine
    CPU time says what the work costs, wall time also how long it waited for a core."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return time.process_time() + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Measured:
    """Wall and CPU seconds of a block (`cpu` is None when the backend cannot be read)."""

    def __enter__(self):
        self.cpu_start, self.start = cpu_seconds(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.start
        end = cpu_seconds()
        self.cpu = end - self.cpu_start if end is not None and self.cpu_start is not None else None

    def __str__(self):
        return f"{self.wall:.2f} s" + (f" (CPU {self.cpu:.2f} s)" if self.cpu is not None else "")


def measured(label: str, fn, cpu: bool = True) -> Measured:
    with Measured() as m:
        fn()
    if not cpu:
        m.cpu = None
    print(f"  {label}: {m}")
    return m


def judgments_csv(dataset_id: int) -> bytes:
    """The dataset's judgments as COPY text (assignment, ACU, present), the references' input."""
    from django.db import connection

    buffer = io.BytesIO()
    query = f"SELECT assignment_id, acu_id, present FROM ({DATASET_JUDGMENTS.format(dataset_id=dataset_id)}) j"
    with connection.cursor() as cursor:
        cursor.copy_expert(f"COPY ({query} ORDER BY id) TO STDOUT", buffer)
    return buffer.getvalue()


def copy_into_copy_table(data: bytes, dataset_id: int, foreign_keys: bool) -> Measured:
    """COPY the judgments into a table made like hits_judgment (its columns, identity and
    indexes; with `foreign_keys` also its two foreign keys, deferred as Django makes them, so
    they are checked at the commit) that already holds the other datasets' judgments, as
    hits_judgment did before the import; in one transaction, timed to the end of the commit."""
    from django.db import connection, transaction

    imported = DATASET_JUDGMENTS.format(dataset_id=dataset_id)
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_judgment_copy")
        cursor.execute("CREATE TABLE bench_judgment_copy (LIKE hits_judgment INCLUDING ALL)")
        cursor.execute(
            f"INSERT INTO bench_judgment_copy SELECT * FROM hits_judgment WHERE id NOT IN (SELECT id FROM ({imported}) j)"
        )
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('bench_judgment_copy', 'id'), "
            "(SELECT coalesce(max(id), 0) + 1 FROM hits_judgment), false)"
        )
        if foreign_keys:
            cursor.execute(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = 'hits_judgment'::regclass AND contype = 'f' ORDER BY conname"
            )
            for i, (definition,) in enumerate(cursor.fetchall()):
                # NOT VALID: the rows copied in are not checked again; every new row is.
                cursor.execute(f"ALTER TABLE bench_judgment_copy ADD CONSTRAINT bench_fk_{i} {definition} NOT VALID")
        cursor.execute("VACUUM ANALYZE bench_judgment_copy")
        cursor.execute("CHECKPOINT")
    with Measured() as m, transaction.atomic(), connection.cursor() as cursor:
        cursor.copy_expert("COPY bench_judgment_copy (assignment_id, acu_id, present) FROM STDIN", io.BytesIO(data))
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE bench_judgment_copy")
    return m


def psql_copy(database_url: str, dataset_id: int, target: Path) -> None:
    query = " ".join(DATASET_JUDGMENTS.format(dataset_id=dataset_id).split())
    command = ["psql", database_url, "-X", "-q", "-c", f"\\copy ({query}) TO '{target}' WITH (FORMAT csv)"]
    subprocess.run(command, check=True)


def copy_to_stdout(dataset_id: int, target: Path) -> Measured:
    from django.db import connection

    with Measured() as m, target.open("wb") as f, connection.cursor() as cursor:
        cursor.copy_expert(f"COPY ({DATASET_JUDGMENTS.format(dataset_id=dataset_id)}) TO STDOUT WITH (FORMAT csv)", f)
    return m


FINGERPRINTS = {
    "documents": """SELECT md5(string_agg(concat_ws('|', d.external_id, d.position, md5(d.source), r.word_count,
                        r.status), E'\\n' ORDER BY d.position))
                    FROM annotation_document d JOIN annotation_reference r ON r.document_id = d.id
                    WHERE d.dataset_id = %s""",
    "sentences": """SELECT md5(string_agg(concat_ws('|', d.external_id, s.position, s.text), E'\\n'
                        ORDER BY d.position, s.position))
                    FROM annotation_referencesentence s JOIN annotation_reference r ON r.id = s.reference_id
                    JOIN annotation_document d ON d.id = r.document_id WHERE d.dataset_id = %s""",
    "ACUs": """SELECT md5(string_agg(concat_ws('|', d.external_id, s.position, a.position, a.text, a.status),
                    E'\\n' ORDER BY d.position, s.position, a.position))
               FROM annotation_acu a JOIN annotation_referencesentence s ON s.id = a.sentence_id
               JOIN annotation_reference r ON r.id = a.reference_id
               JOIN annotation_document d ON d.id = r.document_id WHERE d.dataset_id = %s""",
    "summaries": """SELECT md5(string_agg(concat_ws('|', d.external_id, y.name, md5(m.text), m.word_count), E'\\n'
                        ORDER BY d.position, y.name))
                    FROM annotation_summary m JOIN annotation_document d ON d.id = m.document_id
                    JOIN annotation_system y ON y.id = m.system_id WHERE d.dataset_id = %s""",
    "judgments": """SELECT md5(string_agg(line, E'\\n' ORDER BY line)) FROM (
                        SELECT concat_ws('|', d.external_id, y.name, split_part(w.external_id, '/', 2),
                                         s.position, a.position, j.present) AS line
                        FROM hits_judgment j JOIN hits_assignment g ON g.id = j.assignment_id
                        JOIN hits_worker w ON w.id = g.worker_id JOIN hits_hit h ON h.id = g.hit_id
                        JOIN hits_batch b ON b.id = h.batch_id JOIN annotation_summary m ON m.id = h.summary_id
                        JOIN annotation_system y ON y.id = m.system_id
                        JOIN annotation_document d ON d.id = m.document_id
                        JOIN annotation_acu a ON a.id = j.acu_id
                        JOIN annotation_referencesentence s ON s.id = a.sentence_id
                        WHERE b.dataset_id = %s) x""",
}


def fingerprint(dataset_id: int) -> dict[str, str]:
    from django.db import connection

    with connection.cursor() as cursor:
        result = {}
        for key, query in FINGERPRINTS.items():
            cursor.execute(query, [dataset_id])
            result[key] = cursor.fetchone()[0]
    return result


def profile_import(path: Path, top: int) -> None:
    from django.core.management import call_command

    delete_named(DATASET_NAME)
    settle()
    profiler = cProfile.Profile()
    profiler.enable()
    call_command("import_dataset", str(path), "--name", DATASET_NAME, "--format", "rose", stdout=io.StringIO())
    profiler.disable()
    stats = pstats.Stats(profiler)
    print(f"\nprofile of the import (cProfile adds overhead to Python calls), top {top} by own time:")
    stats.sort_stats("tottime").print_stats(top)
    print(f"top {top} by cumulative time:")
    stats.sort_stats("cumulative").print_stats(top)


def staged_import(path: Path) -> None:
    """One more import with each stage timed: parse, the rows of each table (COPY, with the
    rows made as COPY reads them), the commit (the deferred foreign-key checks) and ANALYZE."""
    from django.core.management import call_command

    from hits.services import dataset_import as service

    delete_named(DATASET_NAME)
    settle()
    times: dict[str, float] = {}
    marks: dict[str, float] = {}

    def timed_call(label, fn, mark=None):
        def call(*args, **kwargs):
            t0 = time.perf_counter()
            result = fn(*args, **kwargs)
            key = label(*args) if callable(label) else label
            times[key] = times.get(key, 0.0) + time.perf_counter() - t0
            if mark:
                marks[mark] = time.perf_counter()
            return result

        return call

    originals = {n: getattr(service, n) for n in ("read_records", "insert_rows", "create_all", "_store", "analyze")}
    service.read_records = timed_call("parse (read_records)", originals["read_records"])
    service.insert_rows = timed_call(lambda model, *a: f"rows of {model.__name__}", originals["insert_rows"])
    service.create_all = timed_call("systems (bulk_create)", originals["create_all"])
    service._store = timed_call("store (all rows, in the transaction)", originals["_store"], mark="stored")

    def analyze(models):
        marks["commit"] = time.perf_counter()
        return originals["analyze"](models)

    service.analyze = timed_call("ANALYZE", analyze)
    try:  # the set-based foreign-key checks, where the code measured has them
        from annotation.importing import foreign_keys
    except ImportError:
        foreign_keys = None
    if foreign_keys is not None:
        originals_fk = foreign_keys.orphans
        foreign_keys.orphans = timed_call("judgments' foreign keys (one anti-join per key)", originals_fk)
    t0 = time.perf_counter()
    try:
        call_command("import_dataset", str(path), "--name", DATASET_NAME, "--format", "rose", stdout=io.StringIO())
    finally:
        for name, fn in originals.items():
            setattr(service, name, fn)
        if foreign_keys is not None:
            foreign_keys.orphans = originals_fk
    total = time.perf_counter() - t0
    rows = sum(v for k, v in times.items() if k.startswith("rows of"))
    print("\nstages of one more import:")
    for key, seconds in times.items():
        print(f"  {key}: {seconds:.2f} s")
    store = times["store (all rows, in the transaction)"]
    print(f"  of the store, outside the COPYs (ids, workers, unit attachment, rows): {store - rows:.2f} s")
    print(f"  commit (deferred foreign-key checks): {marks['commit'] - marks['stored']:.2f} s")
    print(f"  total: {total:.2f} s")


def ratio_line(label: str, seconds: float, reference: float, target: float, cpu=None) -> str:
    ratio = seconds / reference
    verdict = "meets" if ratio <= target else "misses"
    text = f"  {label}: {seconds:.2f} s / {reference:.2f} s = {ratio:.2f}x ({verdict} the {target:g}x target)"
    return text + (f"; CPU {cpu[0]:.2f} s / {cpu[1]:.2f} s = {cpu[0] / cpu[1]:.2f}x" if cpu else "")


def run_once(args, path: Path) -> dict[str, Measured]:
    from django.core.management import call_command

    from annotation.models import Dataset
    from hits.services.dataset_import import read_records

    delete_named(DATASET_NAME)
    delete_named(ROUNDTRIP_NAME)
    settle()
    print(f"database before the import: {database_totals()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs, shared)")
    t: dict[str, Measured] = {}
    t["parse"] = measured("parse alone (read_records)", lambda: read_records(path, "rose"))
    out = io.StringIO()
    t["import"] = measured(
        "import (manage.py import_dataset)",
        lambda: call_command("import_dataset", str(path), "--name", DATASET_NAME, "--format", "rose", stdout=out),
    )
    print("  " + out.getvalue().strip())
    dataset = Dataset.objects.get(name=DATASET_NAME)
    counts = count_rows(dataset)
    print("  rows: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))

    data = judgments_csv(dataset.pk)
    settle()
    t["copy_fk"] = copy_into_copy_table(data, dataset.pk, foreign_keys=True)
    print(
        f"  COPY of the {counts['judgments']:,} judgments into a table like hits_judgment "
        f"(its indexes and foreign keys, checked at the commit): {t['copy_fk']}"
    )
    settle()
    t["copy_like"] = copy_into_copy_table(data, dataset.pk, foreign_keys=False)
    print(f"  COPY of the same into a table like hits_judgment without its foreign keys: {t['copy_like']}")

    OUT.mkdir(parents=True, exist_ok=True)
    rose_out, csv_out = OUT / "export_rose.jsonl", OUT / "export_judgments.csv"
    t["export_rose"] = measured(
        "export_dataset --format rose",
        lambda: call_command(
            "export_dataset", DATASET_NAME, "--format", "rose", "--output", str(rose_out), stderr=io.StringIO()
        ),
    )
    t["export_csv"] = measured(
        "export_judgments (CSV)",
        lambda: call_command("export_judgments", DATASET_NAME, "--output", str(csv_out), stderr=io.StringIO()),
    )
    t["psql"] = measured(
        "psql \\copy of the judgments to a CSV file (a process of its own: wall time only)",
        lambda: psql_copy(args.database_url, dataset.pk, OUT / "psql_copy.csv"),
        cpu=False,
    )
    t["copy_out"] = copy_to_stdout(dataset.pk, OUT / "copy_to_stdout.csv")
    print(f"  COPY ... TO STDOUT of the judgments in process: {t['copy_out']}")
    print(
        f"  files: RoSE {rose_out.stat().st_size / 1e6:.1f} MB, judgments CSV {csv_out.stat().st_size / 1e6:.1f} MB, "
        f"\\copy {(OUT / 'psql_copy.csv').stat().st_size / 1e6:.1f} MB"
    )

    if args.roundtrip:
        measured(
            "round trip: import of the RoSE export",
            lambda: call_command(
                "import_dataset", str(rose_out), "--name", ROUNDTRIP_NAME, "--format", "rose", stdout=io.StringIO()
            ),
        )
        first, second = fingerprint(dataset.pk), fingerprint(Dataset.objects.get(name=ROUNDTRIP_NAME).pk)
        same = [k for k in first if first[k] == second[k]]
        differ = [k for k in first if first[k] != second[k]]
        print(
            f"  round trip: same {', '.join(same) or 'nothing'}"
            + (f"; DIFFERENT {', '.join(differ)}" if differ else "")
        )
        if differ:
            sys.exit("round trip changed the data")
        delete_named(ROUNDTRIP_NAME)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for line in ratios([t]):
        print(line)
    return t


def ratios(runs: list[dict[str, Measured]]) -> list[str]:
    """The ratios of the targets, each the median over the runs (one run: its own)."""

    def wall(key: str) -> float:
        return statistics.median(r[key].wall for r in runs)

    def cpu(key: str, reference: str):
        values = [(r[key].cpu, r[reference].cpu) for r in runs]
        if any(a is None or b is None for a, b in values):
            return None
        return statistics.median(a for a, _ in values), statistics.median(b for _, b in values)

    return [
        ratio_line(
            "import / COPY of its judgments (indexes and foreign keys)",
            wall("import"),
            wall("copy_fk"),
            1.5,
            cpu("import", "copy_fk"),
        ),
        ratio_line(
            "import / COPY of its judgments (indexes only)",
            wall("import"),
            wall("copy_like"),
            1.5,
            cpu("import", "copy_like"),
        ),
        ratio_line("export_dataset rose / psql \\copy", wall("export_rose"), wall("psql"), 3),
        ratio_line("export_judgments csv / psql \\copy", wall("export_csv"), wall("psql"), 3),
        ratio_line(
            "export_dataset rose / COPY TO STDOUT",
            wall("export_rose"),
            wall("copy_out"),
            3,
            cpu("export_rose", "copy_out"),
        ),
        ratio_line(
            "export_judgments csv / COPY TO STDOUT",
            wall("export_csv"),
            wall("copy_out"),
            3,
            cpu("export_csv", "copy_out"),
        ),
        f"  parse alone: {wall('parse'):.2f} s = {wall('parse') / wall('import'):.0%} of the import",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=2500, help="documents to generate (default 2500)")
    parser.add_argument("--realsumm-copies", type=int, default=4, help="REALSumm datasets in the background (4)")
    parser.add_argument("--no-background", dest="background", action="store_false", help="no other datasets")
    parser.add_argument("--no-roundtrip", dest="roundtrip", action="store_false", help="skip the round trip")
    parser.add_argument("--repeat", type=int, default=3, help="runs of import, references and exports (3)")
    parser.add_argument("--profile", action="store_true", help="profile one more import with cProfile")
    parser.add_argument("--stages", action="store_true", help="time the stages of one more import")
    parser.add_argument("--top", type=int, default=30, help="functions shown by --profile (30)")
    parser.add_argument("--keep", action="store_true", help="keep the imported dataset (default: delete it)")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", DEFAULT_DB))
    parser.add_argument("--tree", default=None, help="run the code of another checkout (figures side by side)")
    args = parser.parse_args()

    path = OUT / f"rose_bench_{args.documents}.jsonl"
    started = time.perf_counter()
    generate(path, args.documents)
    print(
        f"generated {path.relative_to(ROOT)} ({path.stat().st_size / 1e6:.1f} MB) "
        f"in {time.perf_counter() - started:.1f} s"
    )

    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # The app's code from --tree (e.g. an older commit), the bench and its references from here;
    # its code first on the path, and as the working directory (Celery adds that one).
    tree = Path(args.tree).resolve() if args.tree else ROOT
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    ensure_database(args.database_url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    import hits

    print(
        f"database: {connection.vendor} {connection.settings_dict['NAME']}; code of {Path(hits.__file__).parent.parent}"
    )
    if args.background:
        ensure_background(path, args.realsumm_copies)

    runs = []
    for i in range(args.repeat):
        print(f"\nrun {i + 1} of {args.repeat}")
        runs.append(run_once(args, path))

    if runs:
        print(f"\nratios (median of {len(runs)} run(s); shared 2-core machine, side by side in one process):")
        for line in ratios(runs):
            print(line)

    if args.stages:
        staged_import(path)
    if args.profile:
        profile_import(path, args.top)
    if not args.keep:
        delete_named(DATASET_NAME)
        print("deleted the imported dataset (pass --keep to keep it); background datasets kept")


if __name__ == "__main__":
    main()
