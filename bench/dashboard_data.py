"""The database of the dashboard and recompute benches: 10 datasets, one of them RoSE-scale.

`build` fills a PostgreSQL database with
- 9 datasets of REALSumm's size (REALSumm's 100 documents and 25 systems repeated with new ids,
  2,500 summaries each, 3 annotators per summary drawn from 30, each flipping REALSumm's label
  with probability 0.12: about 75,000 judgments each), each scored once, as a lead would have;
- then the RoSE-scale dataset (2,500 documents, 22,000 summaries, about 20,000 ACUs, 3 of 300
  annotators per summary: about 530,000 judgments; the generator of
  `bench/rose_scale.py`, shared with `bench/import_bench.py`). Its round is marked a crowd
  round worked in-house (active seconds and rewards
  set) so the progress and workers panels count its 66,000 assignments.

The statistics are left stale, with autovacuum off on the app's tables so that they stay so:
`stale_from="empty"` (default) analyzes the empty tables and imports all 10 datasets with the
importer's ANALYZE skipped (a first bulk load into a new database); `"others"` imports the 9
as usual and only the RoSE-scale one without ANALYZE (statistics that predate a large round).
`analyze()` then refreshes them, for the "after ANALYZE" figures.
"""

import json
import random
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from rose_scale import SEED, generate

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "out"
ROSE_SCALE = "bench-rose-scale"
OTHERS = 9
APP_TABLE_PREFIXES = ("annotation_", "hits_", "scoring_")


def generate_rose_scale(path: Path, documents: int = 2500) -> Path:
    """The RoSE-scale file of `bench/rose_scale.py` (the import bench's), made once."""
    if not path.is_file():
        generate(path, documents)
    return path


def generate_realsumm_copy(path: Path, source: Path, index: int) -> Path:
    """REALSumm with new example ids and 3 annotators per summary (REALSumm's label flipped
    with probability 0.12 by each)."""
    rng = random.Random(SEED + index)
    pool = [f"a{i:02d}" for i in range(30)]
    path.parent.mkdir(parents=True, exist_ok=True)
    with source.open(encoding="utf-8") as f, path.open("w", encoding="utf-8") as out:
        for line in f:
            record = json.loads(line)
            record["example_id"] = f"copy{index}-{record['example_id']}"
            for annotation in record.get("annotations", {}).values():
                truth = annotation.pop("acu_labels")
                workers = {a: [v if rng.random() > 0.12 else 1 - v for v in truth] for a in rng.sample(pool, 3)}
                annotation["annotator_labels"] = workers
                annotation["acu_labels"] = [int(sum(col) >= 2) for col in zip(*workers.values(), strict=False)]
            out.write(json.dumps(record) + "\n")
    return path


# --- the database ---


def _admin_connection(url: str):
    import psycopg2

    u = urlparse(url)
    conn = psycopg2.connect(
        dbname="postgres", user=u.username or "postgres", password=u.password, host=u.hostname, port=u.port or 5432
    )
    conn.autocommit = True
    return conn, u.path.lstrip("/")


def recreate_database(url: str) -> None:
    conn, name = _admin_connection(url)
    with conn.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cur.execute(f'CREATE DATABASE "{name}"')
    conn.close()


def drop_database(url: str) -> None:
    from django.db import connections

    connections.close_all()
    conn, name = _admin_connection(url)
    with conn.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    conn.close()


def _app_tables() -> list[str]:
    from django.db import connection

    return [t for t in connection.introspection.table_names() if t.startswith(APP_TABLE_PREFIXES)]


def set_autovacuum(enabled: bool) -> None:
    """Autovacuum off keeps the stale statistics stale while the "before" figures are taken."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in _app_tables():
            if enabled:
                cursor.execute(f'ALTER TABLE "{table}" RESET (autovacuum_enabled)')
            else:
                cursor.execute(f'ALTER TABLE "{table}" SET (autovacuum_enabled = off)')


def analyze_count() -> int:
    """ANALYZE runs so far on the app's tables (manual and automatic)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(analyze_count + autoanalyze_count), 0) FROM pg_stat_user_tables"
            " WHERE relname LIKE ANY (%s)",
            [[p + "%" for p in APP_TABLE_PREFIXES]],
        )
        return int(cursor.fetchone()[0])


def analyze() -> float:
    """ANALYZE the whole database; returns the seconds it took."""
    import time

    from django.db import connection

    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return time.perf_counter() - t0


@contextmanager
def without_analyze():
    """Statements starting with ANALYZE are skipped (the import's own refresh)."""
    from django.db import connection

    def skip(execute, sql, params, many, context):
        if sql.lstrip().upper().startswith("ANALYZE"):
            return None
        return execute(sql, params, many, context)

    with connection.execute_wrapper(skip):
        yield


@dataclass
class Bench:
    dataset: object  # the RoSE-scale dataset
    batch: object  # its 22,000-summary round
    others: list


def _as_crowd_round(batch) -> None:
    """The imported round as if worked in-house: kind crowd, a reward per HIT, active seconds
    per assignment (seeded), so progress, spend and the workers table have something to count."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("UPDATE hits_batch SET kind = 'crowd', provider = 'inhouse' WHERE id = %s", [batch.pk])
        cursor.execute("UPDATE hits_hit SET reward = 0.30 WHERE batch_id = %s", [batch.pk])
        cursor.execute("SELECT setseed(0.5)")
        cursor.execute(
            "UPDATE hits_assignment SET active_seconds = 30 + 270 * random(), created_at = submitted_at"
            " WHERE hit_id IN (SELECT id FROM hits_hit WHERE batch_id = %s)",
            [batch.pk],
        )


STALE_FROM = ("empty", "others")


def build(realsumm_jsonl: Path, others: int = OTHERS, stale_from: str = "empty", log=print) -> Bench:
    """Fill the (migrated, empty) database and leave its statistics stale: those of the empty
    tables (`stale_from="empty"`: every dataset bulk-loaded without ANALYZE, as a first import
    into a new database) or those of the 9 other datasets (`"others"`: only the RoSE-scale one
    loaded without ANALYZE)."""
    import time

    from annotation.models import Dataset
    from hits.services.dataset_import import import_dataset
    from scoring.runs.services import compute_scores

    if stale_from not in STALE_FROM:
        raise ValueError(f"stale_from must be one of {STALE_FROM}")
    set_autovacuum(False)
    if stale_from == "empty":
        analyze()
    skip = without_analyze if stale_from == "empty" else _nothing
    before = analyze_count()
    names = []
    t0 = time.perf_counter()
    for i in range(others):
        path = generate_realsumm_copy(OUT / f"realsumm_copy_{i}.jsonl", realsumm_jsonl, i)
        with skip():
            summary = import_dataset(path, name=f"realsumm-copy-{i}", fmt="rose")
        compute_scores(Dataset.objects.get(pk=summary.dataset_id), n_resamples=1000, trigger="bench")
        names.append(summary.name)
    log(f"imported and scored {others} REALSumm-size datasets in {time.perf_counter() - t0:.0f} s")
    if stale_from == "others":
        before = analyze_count()
    t0 = time.perf_counter()
    with without_analyze():
        summary = import_dataset(generate_rose_scale(OUT / "dashboard_rose_2500.jsonl"), name=ROSE_SCALE, fmt="rose")
    if analyze_count() != before:
        raise SystemExit("an import ran ANALYZE past the bench's filter: the 'before ANALYZE' state is lost")
    dataset = Dataset.objects.get(pk=summary.dataset_id)
    batch = dataset.batches.get()
    _as_crowd_round(batch)
    batch.refresh_from_db()
    log(f"imported the RoSE-scale dataset without ANALYZE in {time.perf_counter() - t0:.0f} s: {summary}")
    return Bench(dataset, batch, names)


@contextmanager
def _nothing():
    yield


def add_history(run, copies: int) -> None:
    """`copies` older copies of a scores run (one every 10 minutes before it), as a round's
    recomputes after each burst of submissions leave them; the agreement trend reads 200."""
    from django.db import connection

    from scoring.models import ScoringRun

    columns = [f.column for f in ScoringRun._meta.concrete_fields if f.column not in ("id", "started_at")]
    names = ", ".join(columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO scoring_scoringrun ({names}, started_at)"
            f" SELECT {names}, started_at - g * interval '10 minutes'"
            " FROM scoring_scoringrun, generate_series(1, %s) g WHERE id = %s",
            [copies, run.pk],
        )


def database_counts() -> dict[str, int]:
    from django.db import connection

    counts = {}
    with connection.cursor() as cursor:
        for table in ("annotation_dataset", "hits_hit", "hits_assignment", "hits_judgment", "scoring_scoringrun"):
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table.split("_", 1)[1]] = cursor.fetchone()[0]
    return counts
