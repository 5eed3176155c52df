"""Benchmark the dataset importer at RoSE scale on PostgreSQL.

What it measures: the wall-clock time of `import_dataset(path, name="bench-rose-scale",
fmt="rose", replace=True)` on a synthetic RoSE JSONL file the size of RoSE's CNN/DM test
set with three crowd annotators per summary (2,500 documents, 22,000 system summaries,
about 20,000 reference ACUs, about 530,000 judgments), and separately the parse step alone
(`read_records(path, "rose")`), so the figures show parse vs. database writes. Rows written
are counted from the database afterwards (documents, references, sentences, ACUs, systems,
summaries, HITs, assignments, judgments).

The data is generated with a seeded random.Random, so every run imports the same file
(written to bench/out/, which git ignores). Timings depend on the machine and on whatever
else runs on it: compare runs on the same, otherwise idle, machine.

Run:
    .venv/bin/python bench/import_bench.py                 # full scale, then deletes the dataset
    .venv/bin/python bench/import_bench.py --documents 200 --keep
    .venv/bin/python bench/import_bench.py --database-url postgres://postgres@127.0.0.1:5432/other

The database (default postgres://postgres@127.0.0.1:5432/acu_bench, or $DATABASE_URL) is
created if missing and migrated before the run.
"""

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "out"
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/acu_bench"
DATASET_NAME = "bench-rose-scale"
SEED = 20240501
SYSTEMS = [f"system_{i:02d}" for i in range(9)]
ANNOTATORS = [f"w{i:03d}" for i in range(300)]
FUNCTION_WORDS = [
    "the",
    "a",
    "of",
    "to",
    "in",
    "and",
    "on",
    "for",
    "with",
    "from",
    "by",
    "at",
    "as",
    "that",
    "was",
    "is",
    "has",
    "said",
    "after",
]


def make_vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    syllables = ["ba", "ko", "ri", "tem", "lu", "san", "vo", "der", "mi", "gal", "pre", "son", "tu", "nek", "ar", "io"]
    words = {"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(size * 2)}
    return sorted(words)[:size]


def sentence(rng: random.Random, vocab: list[str], n_words: int) -> list[str]:
    return [rng.choice(FUNCTION_WORDS) if rng.random() < 0.3 else rng.choice(vocab) for _ in range(n_words)]


def make_record(rng: random.Random, vocab: list[str], doc: int, n_systems: int) -> dict:
    source = " ".join(" ".join(sentence(rng, vocab, rng.randint(12, 28))) + "." for _ in range(rng.randint(15, 25)))
    ref_sentences = [sentence(rng, vocab, rng.randint(14, 26)) for _ in range(rng.randint(2, 4))]
    # About 8 ACUs per reference, each an ordered pick of 3-7 words of one sentence.
    acus = []
    for _ in range(rng.choice([7, 8, 8, 8, 9])):
        words = rng.choice(ref_sentences)
        picked = sorted(rng.sample(range(len(words)), rng.randint(3, 7)))
        acus.append(" ".join(words[i] for i in picked))
    outputs, annotations = {}, {}
    for system in rng.sample(SYSTEMS, n_systems):
        outputs[system] = " ".join(sentence(rng, vocab, rng.randint(50, 70))) + "."
        workers = {a: rng.choices([0, 1], weights=[55, 45], k=len(acus)) for a in rng.sample(ANNOTATORS, 3)}
        majority = [int(sum(col) >= 2) for col in zip(*workers.values(), strict=False)]
        annotations[system] = {
            "acu": sum(majority) / len(acus),
            "acu_labels": majority,
            "annotator_labels": workers,
        }
    return {
        "example_id": f"bench-{doc:05d}",
        "count_id": doc,
        "source": source,
        "reference": "\n".join(" ".join(s) + "." for s in ref_sentences),
        "reference_acus": acus,
        "system_outputs": outputs,
        "annotations": annotations,
    }


def generate(path: Path, documents: int) -> None:
    """8.8 summaries per document on average: 22,000 for 2,500 documents (9 on most, 8 on the rest)."""
    rng = random.Random(SEED)
    vocab = make_vocabulary(rng)
    with_nine = round(documents * 8.8) - 8 * documents
    nine = set(rng.sample(range(documents), with_nine))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for doc in range(documents):
            f.write(json.dumps(make_record(rng, vocab, doc, 9 if doc in nine else 8)) + "\n")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=2500, help="documents to generate (default 2500)")
    parser.add_argument("--keep", action="store_true", help="keep the imported dataset (default: delete it)")
    parser.add_argument(
        "--no-compare",
        dest="compare",
        action="store_false",
        help="skip the second import that measures bulk_create against COPY",
    )
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", DEFAULT_DB))
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
    sys.path.insert(0, str(ROOT))
    ensure_database(args.database_url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction

    from annotation.models import Dataset
    from hits.services.dataset_import import delete_dataset, import_dataset, read_records

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    # An earlier --keep run leaves the dataset: delete it untimed so `replace` costs nothing.
    for old in Dataset.objects.filter(name=DATASET_NAME):
        with transaction.atomic():
            delete_dataset(old)

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    t0 = time.perf_counter()
    records = read_records(path, "rose")
    parse_s = time.perf_counter() - t0
    del records

    t0 = time.perf_counter()
    summary = import_dataset(path, name=DATASET_NAME, fmt="rose", replace=True)
    total_s = time.perf_counter() - t0
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    dataset = Dataset.objects.get(pk=summary.dataset_id)
    counts = count_rows(dataset)
    rows = sum(counts.values())
    print(summary)
    print(
        f"documents {counts['documents']:,}, summaries {counts['summaries']:,}, "
        f"ACUs {counts['ACUs']:,}, judgments {counts['judgments']:,}"
    )
    print("rows: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    print(f"parse: {parse_s:.2f} s ({args.documents / parse_s:,.0f} documents/s)")
    print(f"write: {total_s - parse_s:.2f} s (total minus the separately timed parse)")
    print(f"import: {total_s:.1f} s total (parse {parse_s:.1f} s), {rows:,} rows, {rows / total_s:,.0f} rows/s")

    if args.compare:
        # Side by side in this run: judgments through multi-row INSERTs instead of COPY.
        from annotation.importing import bulk

        with transaction.atomic():
            delete_dataset(dataset)
        bulk.USE_COPY = False
        t0 = time.perf_counter()
        summary = import_dataset(path, name=DATASET_NAME, fmt="rose", replace=True)
        insert_s = time.perf_counter() - t0
        bulk.USE_COPY = True
        dataset = Dataset.objects.get(pk=summary.dataset_id)
        print(
            f"same import with bulk_create for judgments: {insert_s:.1f} s; "
            f"COPY import takes {total_s / insert_s:.2f}x the time of the bulk_create one"
        )

    if not args.keep:
        t0 = time.perf_counter()
        with transaction.atomic():
            delete_dataset(dataset)
        print(f"deleted the dataset in {time.perf_counter() - t0:.1f} s (pass --keep to keep it)")


if __name__ == "__main__":
    main()
