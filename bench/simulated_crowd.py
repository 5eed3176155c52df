"""The simulated crowd of bench/allocation_bench.py and bench/app_pairs_bench.py: REALSumm's expert
labels as the truth, a crowd drawn from a crowd file (its format: allocation_bench's docstring), the
learned judge's features of every pair, and the options both benches share."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("honest", "biased", "spammer", "colluder")
DRAWN = 10  # workers drawn per HIT, in order (the first free ones take its places)


def expert_labels(folder: Path, documents: slice = slice(None)):
    """(system per summary, document per summary, list of label arrays) of the chosen documents."""
    systems, docs, labels = [], [], []
    for path in sorted((folder / "labels").glob("*.label")):
        lines = path.read_text().strip("\n").split("\n")
        for d in range(len(lines))[documents]:
            systems.append(path.stem)
            docs.append(d)
            labels.append(np.array([int(x) for x in lines[d].split("\t")], dtype=bool))
    return np.array(systems), np.array(docs), labels


@dataclass
class JudgeData:
    """What app+judge's learned judge reads: cheap features per pair (scoring.machine.features), the
    pair's document and summary, and the lab's expert documents of this seed (gold)."""

    x: np.ndarray
    document: np.ndarray  # per pair
    summary: np.ndarray  # per pair: its HIT
    system: np.ndarray  # per pair: its system code
    expert: np.ndarray | None = None  # per pair: of an expert document (set per seed)


def judge_data(folder: Path, documents: slice, systems, docs, labels) -> JudgeData:
    """The learned judge's features of every pair, in the order of expert_labels (units of
    SCUs.txt against each system's summary of the document)."""
    from scoring.machine.features import Featurizer

    units = [line.rstrip("\n").split("\t") for line in (folder / "SCUs.txt").read_text(encoding="utf-8").splitlines()]
    summaries = {
        path.stem: path.read_text(encoding="utf-8").splitlines()
        for path in sorted((folder / "summaries").glob("*.summary"))
    }
    pairs = []
    for system, d, row in zip(systems.tolist(), docs.tolist(), labels, strict=True):
        mine = [u for u in units[d] if u.strip()][: len(row)]
        if len(mine) != len(row):
            raise ValueError(f"document {d}: {len(mine)} units in SCUs.txt for {len(row)} labels of {system}")
        pairs.extend((unit, summaries[system][d]) for unit in mine)
    featurizer = Featurizer.over([summary for _, summary in pairs] + [unit for unit, _ in pairs])
    sizes = np.array([len(x) for x in labels])
    summary = np.repeat(np.arange(len(labels)), sizes)
    system_codes = np.unique(systems, return_inverse=True)[1]
    return JudgeData(featurizer.matrix(pairs), np.repeat(docs, sizes), summary, system_codes[summary])


def read_spec(path: Path) -> dict:
    """The crowd file, checked: a clear message for what is wrong."""
    spec = json.loads(path.read_text())
    groups = spec.get("groups") or []
    if not groups or any(g.get("kind") not in KINDS for g in groups):
        raise ValueError(f"{path}: groups must be a list of objects whose kind is one of {', '.join(KINDS)}")
    if abs(sum(float(g["share"]) for g in groups) - 1) > 1e-6:
        raise ValueError(f"{path}: the groups' shares must add up to 1")
    for g in groups:
        if g["kind"] != "colluder" and not all(
            set(g.get(k) or {}) in ({"beta"}, {"fixed"}) for k in ("sensitivity", "specificity")
        ):
            raise ValueError(f"{path}: group {g['kind']} needs sensitivity and specificity, each beta or fixed")
    return {"workers": 100, "gold_share": 0.1, "hard_share": 0.0, "hard_shrink": 0.0, **spec}


@dataclass
class Crowd:
    truth: np.ndarray  # per pair
    hit_of: np.ndarray  # per pair: its HIT
    starts: np.ndarray  # per HIT: its first pair
    sizes: np.ndarray  # per HIT: its ACU count
    gold: np.ndarray  # per HIT: a gold HIT
    workers: np.ndarray  # HITs x DRAWN worker ids, in the order they come
    answers: np.ndarray  # DRAWN x pairs: what the j-th drawn worker of the pair's HIT said
    kind: np.ndarray  # per worker: index into KINDS
    sensitivity: np.ndarray  # per worker, as drawn (before hard pairs shrink it)
    specificity: np.ndarray
    shrink: np.ndarray  # per pair: 1, or 1 - hard_shrink on a hard pair
    shared: np.ndarray  # per pair: the colluders' answer of its ACU

    @property
    def gold_pairs(self) -> np.ndarray:
        return np.flatnonzero(self.gold[self.hit_of])

    def said(self, workers: np.ndarray, pairs: np.ndarray, u: np.ndarray) -> np.ndarray:
        """What each of `workers` says of the pair beside it, from uniform draws `u`: a colluder the
        shared answer of its ACU, the others by their sensitivity and specificity (shrunk toward 0.5
        on a hard pair)."""
        s = 0.5 + (self.sensitivity[workers] - 0.5) * self.shrink[pairs]
        p = 0.5 + (self.specificity[workers] - 0.5) * self.shrink[pairs]
        honest = np.where(self.truth[pairs], u < s, u >= p)
        return np.where(self.kind[workers] == KINDS.index("colluder"), self.shared[pairs], honest)


def simulate_crowd(spec: dict, docs, labels, rng) -> Crowd:
    truth = np.concatenate(labels)
    sizes = np.array([len(x) for x in labels])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    hit_of = np.repeat(np.arange(len(labels)), sizes)
    n = int(spec["workers"])
    counts = [round(float(g["share"]) * n) for g in spec["groups"][:-1]]
    counts.append(n - sum(counts))
    kind = np.repeat([KINDS.index(g["kind"]) for g in spec["groups"]], counts)
    sens, spec_ = np.full(n, 0.5), np.full(n, 0.5)
    at = 0
    for g, k in zip(spec["groups"], counts, strict=True):
        for values, key in ((sens, "sensitivity"), (spec_, "specificity")):
            law = g.get(key) or {"fixed": 0.5}
            values[at : at + k] = rng.beta(*law["beta"], k) if "beta" in law else float(law["fixed"])
        at += k
    hard = rng.random(truth.size) < float(spec["hard_share"])
    shrink = np.where(hard, 1 - float(spec["hard_shrink"]), 1.0)
    acu_key = docs[hit_of] * 1000 + (np.arange(truth.size) - starts[hit_of])  # an ACU: its document and place
    _, acu_codes = np.unique(acu_key, return_inverse=True)
    shared = rng.random(acu_codes.max() + 1) < 0.5  # the colluders' answer per ACU
    chosen = np.argsort(rng.random((len(labels), n)), axis=1)[:, :DRAWN]
    answers = np.empty((DRAWN, truth.size), dtype=bool)
    gold = np.zeros(len(labels), dtype=bool)
    crowd = Crowd(truth, hit_of, starts, sizes, gold, chosen, answers, kind, sens, spec_, shrink, shared[acu_codes])
    every = np.arange(truth.size)
    for j in range(DRAWN):
        answers[j] = crowd.said(chosen[hit_of, j], every, rng.random(truth.size))
    gold[rng.choice(len(labels), round(float(spec["gold_share"]) * len(labels)), replace=False)] = True
    return crowd


def documents_slice(text: str) -> slice:
    start, _, stop = text.partition(":")
    return slice(int(start) if start else None, int(stop) if stop else None)


def crowd_arguments(description: str, seeds: int, first_seed: int, documents: str) -> argparse.ArgumentParser:
    """The options this bench and app_pairs_bench.py share: the data, the crowd file, the seeds and
    the documents (A:B of the label files, e.g. 50:100)."""
    parser = argparse.ArgumentParser(description=description)
    shared = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
    parser.add_argument("--data", default=str(shared / "data" / "realsumm"), help="a pyramid folder with labels/")
    parser.add_argument("--crowd-spec", default=str(ROOT / "bench" / "crowds" / "present.json"), help="crowd JSON")
    parser.add_argument("--seeds", type=int, default=seeds)
    parser.add_argument("--first-seed", type=int, default=first_seed, help="seeds first-seed .. first-seed + seeds - 1")
    parser.add_argument("--documents", default=documents, help="documents A:B of the label files (e.g. 50:100)")
    return parser
