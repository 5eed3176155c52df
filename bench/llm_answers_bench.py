"""The llm judge's borrowing step on a large answer table: a new run of `--summaries` summaries
(default 1,250) looks up, a chunk of summaries at a time, the answers earlier runs got for the very
same questions and copies them into its own rows (`scoring.machine.answers.RunAnswers`: `stored`,
then `borrow` of what it lacks), timed on a table of `--runs` earlier runs (default 1,600 runs of
1,250 answers: 2,000,000 `hits.LLMAnswer` rows) and on a small one (`--small-runs`, default 8:
10,000 rows), alternately, side by side in one run; with the EXPLAIN ANALYZE of one chunk's
borrowing query on the large table (the index on `key` must be used).

Builds two PostgreSQL databases (`acu_bench_llm_answers` and `acu_bench_llm_answers_small`) and
drops them. In each, every question set (`--summaries` keys, sha256 hex like the judge's) was
asked by one run and copied by `--copies - 1` later runs (default 4 runs hold each answer, the
later ones with `from_run` set, as a reused dataset's runs do); the rows are bulk-inserted by
INSERT ... SELECT with their indexes in place, then ANALYZEd.

Timed (median and worst of `--repeat` passes, after one warm-up each, alternating the tables):
- `borrow all`: the new run's questions were all asked before (a second run of a dataset): every
  chunk's `stored` finds none, `borrow` finds and copies them (committed, as a run does),
- `borrow none`: new questions (a new dataset): `stored` and `borrow` find nothing.
The copies are deleted after each pass (not timed).

Run: .venv/bin/python bench/llm_answers_bench.py [--runs 1600] [--small-runs 8] [--summaries 1250]
     [--chunk 25] [--copies 4] [--repeat 5] [--database-url URL]
"""

import argparse
import hashlib
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/acu_bench_llm_answers"
PROBABILITIES = "[0.91, 0.12, 0.77, 0.05, 0.64, 0.33, 0.88, 0.02, 0.5, 0.71]"  # 10 ACUs a summary


def build(runs: int, summaries: int, copies: int, log=print) -> int:
    """`runs` earlier llm runs of `summaries` answers each (question set i // copies) and one new
    run; returns the new run's id."""
    from django.db import connection

    from annotation.models import Dataset
    from hits.models import Batch, JudgeRun

    t0 = time.perf_counter()
    dataset = Dataset.objects.create(name="bench-llm-answers")
    batches = Batch.objects.bulk_create(
        Batch(
            dataset=dataset,
            name=f"machine: llm v{i + 1}",
            kind=Batch.Kind.MACHINE,
            status=Batch.Status.COMPLETE,
            assignments_per_hit=0,
        )
        for i in range(runs + 1)
    )
    judge_runs = JudgeRun.objects.bulk_create(
        JudgeRun(batch=b, judge="llm", model="bench-model", version=i + 1, status="done", llm_usage={"asked": 0})
        for i, b in enumerate(batches)
    )
    ids = [r.pk for r in judge_runs]
    with connection.cursor() as c:
        for start in range(0, runs, 50):  # 50 runs (62,500 rows) a statement
            c.execute(
                "INSERT INTO hits_llmanswer (run_id, key, probabilities, usage, requests, from_run, created_at)"
                " SELECT r.id, encode(sha256(convert_to('q' || (r.i / %s) || '-' || g, 'UTF8')), 'hex'), %s::jsonb,"
                " CASE WHEN r.i %% %s = 0 THEN '{\"total_tokens\": 400}'::jsonb END,"
                " CASE WHEN r.i %% %s = 0 THEN 1 ELSE 0 END,"
                " CASE WHEN r.i %% %s = 0 THEN NULL ELSE r.first END, now()"
                " FROM unnest(%s::int[], %s::int[], %s::int[]) AS r(id, i, first)"
                " CROSS JOIN generate_series(0, %s) g",
                [
                    copies,
                    PROBABILITIES,
                    copies,
                    copies,
                    copies,
                    ids[start : min(start + 50, runs)],
                    list(range(start, min(start + 50, runs))),
                    [ids[(i // copies) * copies] for i in range(start, min(start + 50, runs))],
                    summaries - 1,
                ],
            )
        c.execute("ANALYZE hits_llmanswer")
        c.execute("ANALYZE hits_judgerun")
        c.execute("SELECT count(*), count(DISTINCT key) FROM hits_llmanswer")
        rows, keys = c.fetchone()
    log(f"  {rows:,} answers ({keys:,} questions) in {runs:,} runs, built in {time.perf_counter() - t0:.0f} s")
    return ids[-1]


def question_keys(name: str, summaries: int) -> list[str]:
    """The keys of a question set as `build` writes them (sha256 hex, as long as the judge's)."""
    return [hashlib.sha256(f"{name}-{j}".encode()).hexdigest() for j in range(summaries)]


def borrowing(run_id: int, keys: list[str], chunk: int) -> int:
    """What a new run's chunks do before asking the endpoint; the answers it got."""
    from scoring.machine.answers import RunAnswers

    answers, got = RunAnswers(run_id), 0
    for start in range(0, len(keys), chunk):
        part = keys[start : start + chunk]
        own = answers.stored(part)
        got += len(own) + len(answers.borrow([k for k in part if k not in own]))
    return got


def use(url: str) -> None:
    """Point Django's default connection at this database (reconnected on next use)."""
    from urllib.parse import urlparse

    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = urlparse(url).path.lstrip("/")


def explain(run_id: int, keys: list[str]) -> str:
    from hits.models import LLMAnswer

    query = (
        LLMAnswer.objects.filter(key__in=keys)
        .exclude(run_id=run_id)
        .order_by("pk")
        .values_list("key", "probabilities", "run_id", "from_run")
    )
    plan = query.explain(analyze=True, buffers=True)
    return re.sub(r"'\{[0-9a-f,]+\}'", f"'{{... {len(keys)} keys ...}}'", plan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1600)
    parser.add_argument("--small-runs", type=int, default=8)
    parser.add_argument("--summaries", type=int, default=1250)
    parser.add_argument("--chunk", type=int, default=25, help="summaries a chunk (256 pairs of about 10 ACUs)")
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--database-url", default=DEFAULT_DB)
    args = parser.parse_args()

    large_url, small_url = args.database_url, args.database_url + "_small"
    os.environ["DATABASE_URL"] = large_url
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import dashboard_data

    for url in (large_url, small_url):
        dashboard_data.recreate_database(url)
    import django

    django.setup()
    from django.core.management import call_command

    from hits.models import LLMAnswer

    try:
        new_run = {}
        for name, url, runs in (("small", small_url, args.small_runs), ("large", large_url, args.runs)):
            use(url)
            call_command("migrate", verbosity=0)
            print(f"{name} table:")
            new_run[name] = build(runs, args.summaries, args.copies)
        # The new run asks the last question set asked in the small table (present in both).
        asked = question_keys(f"q{(args.small_runs - 1) // args.copies}", args.summaries)
        cases = {"borrow all": asked, "borrow none": question_keys("new", args.summaries)}
        times: dict[tuple[str, str], list[float]] = {}
        for rep in range(args.repeat + 1):  # the first pass warms up
            for case, keys in cases.items():
                for name, url in (("small", small_url), ("large", large_url)):
                    use(url)
                    t0 = time.perf_counter()
                    got = borrowing(new_run[name], keys, args.chunk)
                    elapsed = time.perf_counter() - t0
                    LLMAnswer.objects.filter(run_id=new_run[name]).delete()
                    expected = len(keys) if case == "borrow all" else 0
                    if got != expected:
                        raise SystemExit(f"{case} on the {name} table found {got} answers, not {expected}")
                    if rep:
                        times.setdefault((case, name), []).append(elapsed * 1000)
        chunks = -(-args.summaries // args.chunk)
        print(
            f"\nthe borrowing step of a new run of {args.summaries:,} summaries ({chunks} chunks of "
            f"{args.chunk}); ms, median / worst of {args.repeat}"
        )
        print(f"{'case':<12} {'small table':>16} {'large table':>16} {'ratio':>7} {'per chunk, large':>17}")
        for case in cases:
            small, large = times[(case, "small")], times[(case, "large")]
            print(
                f"{case:<12} {statistics.median(small):>7.0f} / {max(small):<6.0f} "
                f"{statistics.median(large):>7.0f} / {max(large):<6.0f} "
                f"{statistics.median(large) / statistics.median(small):>7.2f} "
                f"{statistics.median(large) / chunks:>17.1f}"
            )
        use(large_url)
        plan = explain(new_run["large"], asked[: args.chunk])
        print(f"\nEXPLAIN ANALYZE of one chunk's borrowing query ({args.chunk} keys), large table:\n{plan}")
        if "llmanswer_key" not in plan:
            raise SystemExit("the borrowing query does not use the index on key")
    finally:
        for url in (large_url, small_url):
            use(url)
            dashboard_data.drop_database(url)


if __name__ == "__main__":
    main()
