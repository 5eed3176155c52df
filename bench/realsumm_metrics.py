"""Write three automatic metrics of the REALSumm sample as import_metric_scores JSONL.

For every (document, system) summary of a pyramid folder: ``rouge1_recall`` (unigram recall
against the reference with clipped counts, lower-cased ``\\w+`` tokens, no stemming or stop
words: a plain ROUGE-1 recall), ``length`` (the summary's whitespace word count) and
``random`` (uniform on [0, 1) from a numpy Generator seeded with --seed).

    .venv/bin/python bench/realsumm_metrics.py ../shared/data/realsumm realsumm-metrics.jsonl
    .venv/bin/python manage.py import_metric_scores realsumm realsumm-metrics.jsonl
    .venv/bin/python manage.py metric_correlations realsumm --json --method kendall
"""

import argparse
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np

TOKEN = re.compile(r"\w+", re.UNICODE)
TAG = re.compile(r"</?t>")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(TAG.sub(" ", text).lower())


def rouge1_recall(summary: str, reference: str) -> float:
    ref = Counter(tokens(reference))
    if not ref:
        return 0.0
    overlap = sum(min(n, ref[w]) for w, n in Counter(tokens(summary)).items())
    return overlap / sum(ref.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder")
    parser.add_argument("output")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    root = Path(args.folder)
    ids = root.joinpath("ids.txt").read_text(encoding="utf-8").strip("\n").split("\n")
    references = root.joinpath("references.txt").read_text(encoding="utf-8").strip("\n").split("\n")
    rng = np.random.default_rng(args.seed)
    docs = [{"example_id": i, "rouge1_recall": {}, "length": {}, "random": {}} for i in ids]
    for path in sorted((root / "summaries").glob("*.summary")):
        lines = path.read_text(encoding="utf-8").strip("\n").split("\n")
        for doc, summary, reference in zip(docs, lines, references, strict=False):
            doc["rouge1_recall"][path.stem] = rouge1_recall(summary, reference)
            doc["length"][path.stem] = float(len(summary.split()))
            doc["random"][path.stem] = float(rng.random())
    Path(args.output).write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    print(f"wrote {len(docs)} documents x {len(docs[0]['length'])} systems x 3 metrics to {args.output}")


if __name__ == "__main__":
    main()
