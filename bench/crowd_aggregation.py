"""Majority vote against Dawid-Skene on a simulated crowd, scored against expert labels.

Truth: the expert presence labels of the REALSumm sample (../shared/data/realsumm/labels, 2,500
summaries, 26,400 (summary, ACU) labels). Crowd (seeded numpy Generator): a pool of --workers
workers of whom --spammers (a share, default 0.3) are spammers; each summary is one HIT done by
--per-hit distinct workers, each labelling all its ACUs. An honest worker is right with a personal
accuracy drawn uniformly from [0.75, 0.95]; a spammer answers without reading, "present" with
probability 0.5 (--spam random) or 0.9 (--spam lazy). Printed per seed and on average: the
share of (summary, ACU) labels equal to the expert's under majority vote (a tie is not present)
and under Dawid-Skene (scoring/dawid_skene.py), and the mean absolute difference of the 25 system
scores from the experts'.

    .venv/bin/python bench/crowd_aggregation.py [--seeds 5] [--spam random|lazy]
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.stats.aggregation import majority_present  # noqa: E402 - the path is set up first
from scoring.stats.dawid_skene import dawid_skene  # noqa: E402 - the path is set up first


def expert_labels(folder: Path):
    """(system per summary, document per summary, list of label arrays) from the label files."""
    systems, documents, labels = [], [], []
    for path in sorted((folder / "labels").glob("*.label")):
        for doc, line in enumerate(path.read_text().strip("\n").split("\n")):
            systems.append(path.stem)
            documents.append(doc)
            labels.append(np.array([int(x) for x in line.split("\t")], dtype=bool))
    return np.array(systems), np.array(documents), labels


def simulate(labels, rng, workers: int, spam_share: float, per_hit: int, spam: str):
    spammer = np.zeros(workers, dtype=bool)
    spammer[rng.choice(workers, round(spam_share * workers), replace=False)] = True
    accuracy = rng.uniform(0.75, 0.95, workers)
    yes_rate = 0.5 if spam == "random" else 0.9
    item_rows, worker_rows, answers, offset = [], [], [], 0
    for truth in labels:
        k = len(truth)
        for w in rng.choice(workers, per_hit, replace=False):
            if spammer[w]:
                said = rng.random(k) < yes_rate
            else:
                said = np.where(rng.random(k) < accuracy[w], truth, ~truth)
            item_rows.append(np.arange(offset, offset + k))
            worker_rows.append(np.full(k, w))
            answers.append(said)
        offset += k
    return np.concatenate(item_rows), np.concatenate(worker_rows), np.concatenate(answers)


def system_scores(systems, labels_flat, sizes):
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    per_summary = np.add.reduceat(labels_flat.astype(float), starts) / sizes
    names = np.unique(systems)
    return np.array([per_summary[systems == n].mean() for n in names])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
    parser.add_argument("--data", default=str(shared / "data" / "realsumm"), help="a pyramid folder with labels/")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--spammers", type=float, default=0.3)
    parser.add_argument("--per-hit", type=int, default=3)
    parser.add_argument("--spam", choices=("random", "lazy"), default="random")
    args = parser.parse_args()
    systems, _, labels = expert_labels(Path(args.data))
    if not labels:
        parser.error(f"no labels/*.label under {args.data} (pass --data or set SHARED_DIR)")
    truth = np.concatenate(labels)
    sizes = np.array([len(x) for x in labels])
    expert_systems = system_scores(systems, truth, sizes)
    print(
        f"{len(labels)} summaries, {truth.size} expert ACU labels; crowd: {args.workers} workers, "
        f"{args.spammers:.0%} {args.spam} spammers, {args.per_hit} per HIT"
    )
    rows = []
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        items, workers, said = simulate(labels, rng, args.workers, args.spammers, args.per_hit, args.spam)
        votes = np.bincount(items, weights=said.astype(float), minlength=truth.size)
        total = np.bincount(items, minlength=truth.size)
        majority = majority_present(votes, total)
        ds = dawid_skene(items, workers, said)
        m_agree, d_agree = np.mean(majority == truth), np.mean(ds.labels == truth)
        m_sys = np.abs(system_scores(systems, majority, sizes) - expert_systems).mean()
        d_sys = np.abs(system_scores(systems, ds.labels, sizes) - expert_systems).mean()
        rows.append((m_agree, d_agree, m_sys, d_sys))
        print(
            f"seed {seed}: agreement with experts majority {m_agree:.4f}, Dawid-Skene {d_agree:.4f} "
            f"({ds.iterations} EM iterations); mean |system score - expert| majority {m_sys:.4f}, "
            f"Dawid-Skene {d_sys:.4f}"
        )
    mean = np.mean(rows, axis=0)
    print(
        f"mean over {args.seeds} seeds: agreement majority {mean[0]:.4f}, Dawid-Skene {mean[1]:.4f}; "
        f"system score error majority {mean[2]:.4f}, Dawid-Skene {mean[3]:.4f}"
    )


if __name__ == "__main__":
    main()
