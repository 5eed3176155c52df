"""Benchmark the machine judges on REALSumm: pairs judged per second and the memory peak.

Reads the pyramid folder directly (ids, SCUs.txt, summaries/*.summary; no database): 100
documents x 25 systems = 2,500 summaries, 26,400 (ACU, summary) pairs. Each judge runs in its
own child process, so its peak resident memory (ru_maxrss, model included) is its own; the model
load is timed apart from the judging. Judges that cannot run here are listed with the reason
(nli needs --model-dir, llm needs LLM_BASE_URL and LLM_MODEL; a hosted or local endpoint is
called once per summary, so --limit keeps that short).

    .venv/bin/python bench/judge_bench.py ../shared/data/realsumm
    .venv/bin/python bench/judge_bench.py ../shared/data/realsumm --judges nli --model-dir /models/roberta-large-tac08 --device cuda
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "realsumm"


def realsumm_pairs(folder: Path) -> list[tuple[str, str]]:
    """(ACU, summary) for every ACU of every document and every system, in file order."""
    units = [line.rstrip("\n").split("\t") for line in (folder / "SCUs.txt").read_text(encoding="utf-8").splitlines()]
    pairs = []
    for path in sorted((folder / "summaries").glob("*.summary")):
        summaries = path.read_text(encoding="utf-8").splitlines()
        for doc_units, summary in zip(units, summaries, strict=False):
            pairs.extend((unit, summary) for unit in doc_units if unit.strip())
    return pairs


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(args) -> dict:
    """In the child: load the judge, judge the pairs, report."""
    from scoring.machine.judges import get_judge

    pairs = realsumm_pairs(Path(args.data))
    if args.limit:
        pairs = pairs[: args.limit]
    options = {}
    if args.one in ("embedding", "nli"):
        options["device"] = args.device
    if args.one == "nli":
        options["model_dir"] = args.model_dir
    judge = get_judge(args.one, **options)
    ok, why = judge.available()
    if not ok:
        return {"judge": args.one, "available": False, "reason": why}
    before = peak_mib()
    started = time.perf_counter()
    judge.judge(pairs[:8])  # loads the model
    load = time.perf_counter() - started
    if args.one == "embedding":
        judge._cache.clear()  # time the real work, not cached warm-up texts
    started = time.perf_counter()
    values = judge.judge(pairs)
    seconds = time.perf_counter() - started
    return {
        "judge": args.one,
        "available": True,
        "model": judge.model,
        "pairs": len(pairs),
        "load_seconds": round(load, 2),
        "seconds": round(seconds, 2),
        "pairs_per_second": round(len(pairs) / seconds, 1),
        "peak_rss_mib": round(peak_mib(), 1),
        "rss_before_mib": round(before, 1),
        "mean_score": round(float(values.mean()), 4),
        "threads": os.environ.get("OMP_NUM_THREADS", "default"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="the REALSumm pyramid folder")
    parser.add_argument("--judges", default="lexical,embedding,nli,llm")
    parser.add_argument("--model-dir", default="", help="nli: a local model directory")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--limit", type=int, default=0, help="judge only the first N pairs (0: all)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args)))
        return
    pairs = realsumm_pairs(Path(args.data))
    print(f"REALSumm at {args.data}: {len(pairs)} pairs; {os.cpu_count()} CPUs")
    results = []
    for name in [j.strip() for j in args.judges.split(",") if j.strip()]:
        command = [
            sys.executable,
            __file__,
            args.data,
            "--one",
            name,
            "--device",
            args.device,
            "--limit",
            str(args.limit),
        ]
        if args.model_dir:
            command += ["--model-dir", args.model_dir]
        child = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
        if child.returncode != 0:
            result = {"judge": name, "available": False, "reason": child.stderr.strip().splitlines()[-1:]}
        else:
            result = json.loads(child.stdout.strip().splitlines()[-1])
        results.append(result)
        if result.get("available"):
            print(
                f"{name:<10} {result['pairs']:>6} pairs in {result['seconds']:>8.2f} s = {result['pairs_per_second']:>9.1f} pairs/s"
                f"  (model load {result['load_seconds']:.2f} s, peak RSS {result['peak_rss_mib']:.0f} MiB)  {result['model']}"
            )
        else:
            print(f"{name:<10} not run: {result['reason']}")
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
