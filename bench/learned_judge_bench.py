"""Benchmark the learned judge's pure core on REALSumm: time of the features and of the
document-wise cross-validated fit (5 folds + the fit on all labels) against the number of pairs,
with the out-of-fold AUC and accuracy at each size.

Reads the pyramid folder directly (no database): documents, units, summaries, expert labels.
Sizes are the first N documents (25 systems each); `--repeat K` also times K copies of the
whole set (new document ids, the same texts: each text is analysed once, every pair's features
are computed) to see the scaling beyond REALSumm's 26,400 pairs. Wall and CPU seconds (the
machine is shared: CPU time is the figure to compare). One process, one BLAS thread (OPENBLAS_NUM_THREADS=1 is set before numpy loads).

    .venv/bin/python bench/learned_judge_bench.py ../shared/data/realsumm
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "realsumm"


def load(folder: Path):
    """(pairs, documents, labels, reference texts) in file order."""
    import re

    units = [line.rstrip("\n").split("\t") for line in (folder / "SCUs.txt").read_text(encoding="utf-8").splitlines()]
    references = [
        " ".join(re.findall(r"<t>(.*?)</t>", line))
        for line in (folder / "references.txt").read_text(encoding="utf-8").splitlines()
    ]
    pairs, documents, labels = [], [], []
    for path in sorted((folder / "summaries").glob("*.summary")):
        summaries = path.read_text(encoding="utf-8").splitlines()
        label_lines = (folder / "labels" / (path.stem + ".label")).read_text(encoding="utf-8").splitlines()
        for d, (doc_units, summary, label_line) in enumerate(zip(units, summaries, label_lines, strict=False)):
            values = label_line.split("\t")
            for unit, value in zip(doc_units, values, strict=False):
                if unit.strip() and value.strip() in ("0", "1"):
                    pairs.append((unit, summary))
                    documents.append(d)
                    labels.append(value.strip() == "1")
    return pairs, documents, labels, references


def measure(pairs, documents, labels, texts) -> dict:
    import numpy as np

    from scoring.machine.features import Featurizer
    from scoring.stats import calibration, learned

    started, cpu = time.perf_counter(), time.process_time()
    featurizer = Featurizer.over(texts)
    X = featurizer.matrix(pairs)
    features, features_cpu = time.perf_counter() - started, time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    y = np.asarray(labels, dtype=bool)
    cv = learned.cross_validated(X, y, np.asarray(documents))
    fit, fit_cpu = time.perf_counter() - started, time.process_time() - cpu
    figures = calibration.classification(y, cv["oof"])
    return {
        "pairs": len(pairs),
        "documents": len(set(documents)),
        "features_seconds": round(features, 2),
        "features_cpu_seconds": round(features_cpu, 2),
        "fit_seconds": round(fit, 2),
        "fit_cpu_seconds": round(fit_cpu, 2),
        "pairs_per_cpu_second": round(len(pairs) / (features_cpu + fit_cpu), 1),
        "oof_auc": round(figures["auc"], 4),
        "oof_accuracy": round(figures["accuracy"], 4),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--sizes", default="25,50,100", help="numbers of documents")
    parser.add_argument("--repeat", type=int, default=2, help="also time this many copies of the whole set")
    args = parser.parse_args()
    import sklearn.linear_model  # noqa: F401 - imported before the first timing

    pairs, documents, labels, references = load(Path(args.data))
    summaries = sorted({s for _, s in pairs})
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        keep = [i for i, d in enumerate(documents) if d < size]
        chosen = [pairs[i] for i in keep]
        texts = sorted({s for _, s in chosen}) + references[:size]
        rows.append(measure(chosen, [documents[i] for i in keep], [labels[i] for i in keep], texts))
        print(json.dumps(rows[-1]), flush=True)
    if args.repeat > 1:
        n_docs = max(documents) + 1
        big_docs = [d + k * n_docs for k in range(args.repeat) for d in documents]
        rows.append(
            measure(pairs * args.repeat, big_docs, labels * args.repeat, (summaries + references) * args.repeat)
        )
        print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
