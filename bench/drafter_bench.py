"""The rules drafter against a pyramid folder's human units, without Django or a database.

Drafts every reference (its `<t> ... </t>` sentences) with `annotation.drafting.rules`, then prints
what `draft_report` prints for matching and correlation, on the lexical judge:

- one-to-one matching of each reference's drafts to its human units (symmetric lexical similarity
  >= 0.5, Hungarian algorithm): precision, recall, F1, units per reference;
- summary-level Pearson of the all-drafts scores (mean lexical presence of the drafts in each
  system summary) with the all-human scores (mean of the human presence labels);
- references drafted per CPU second (process time, pinned to one core: a busy machine slows the
  wall clock, not this).

    .venv/bin/python bench/drafter_bench.py ../shared/data/realsumm
    .venv/bin/python bench/drafter_bench.py ../shared/data/realsumm --documents 50:100
    .venv/bin/python bench/drafter_bench.py ../shared/data/realsumm --against STUs.txt
    .venv/bin/python bench/drafter_bench.py ../shared/data/realsumm --errors 20

`--against FILE` scores a unit file in the pyramid format (one line per reference, units
tab-separated, e.g. Lite3Pyramid's STUs.txt) instead of the drafter; `--errors N` prints the N
sentences whose human units the drafts miss most, with both unit lists.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.drafting.rules import draft_reference, verb_form
from annotation.text import attach_units_to_sentences, split_tagged_sentences
from scoring.drafts import quality
from scoring.machine.judges.lexical import LexicalJudge
from scoring.stats.correlation import summary_level


def read_folder(folder: Path):
    refs = [split_tagged_sentences(line) for line in (folder / "references.txt").read_text().splitlines()]
    units = [[u for u in line.split("\t") if u.strip()] for line in (folder / "SCUs.txt").read_text().splitlines()]
    systems = sorted(p.stem for p in (folder / "summaries").glob("*.summary"))
    summaries = [(folder / "summaries" / f"{s}.summary").read_text().splitlines() for s in systems]
    labels = [
        [
            [int(x) for x in line.split("\t") if x.strip()]
            for line in (folder / "labels" / f"{s}.label").read_text().splitlines()
        ]
        for s in systems
    ]
    return refs, units, systems, summaries, labels


def read_units(path: Path) -> list[list[str]]:
    return [[u.strip() for u in line.split("\t") if u.strip()] for line in path.read_text().splitlines()]


def evaluate(drafts_by_doc, units, summaries, labels, docs, judge):
    matched = n_drafts = n_human = 0
    X, Y = [], []
    for d in docs:
        ds, hs = drafts_by_doc[d], units[d]
        n_drafts, n_human = n_drafts + len(ds), n_human + len(hs)
        if ds and hs:
            fw = judge.judge([(a, b) for a in ds for b in hs]).reshape(len(ds), len(hs))
            bw = judge.judge([(b, a) for a in ds for b in hs]).reshape(len(ds), len(hs))
            matched += len(quality.match_one_to_one(quality.symmetric_similarity(fw, bw), 0.5))
        X.append([np.mean(lab[d]) if lab[d] else np.nan for lab in labels])
        Y.append([judge.judge([(u, summ[d]) for u in ds]).mean() if ds else 0.0 for summ in summaries])
    out = quality.precision_recall_f1(matched, n_drafts, n_human)
    out["per_reference"] = n_drafts / len(docs)
    out["words_per_unit"] = float(np.mean([len(u.split()) for d in docs for u in drafts_by_doc[d]]))
    out["summary_pearson"] = summary_level(np.array(X), np.array(Y), "pearson")
    return out


def sentence_errors(refs, units, drafts_by_sentence, docs, judge, n):
    rows = []
    for d in docs:
        attach = attach_units_to_sentences(units[d], refs[d])
        for k, sentence in enumerate(refs[d]):
            hs = [u for u, s in zip(units[d], attach, strict=False) if s == k]
            ds = drafts_by_sentence[d][k]
            m = 0
            if hs and ds:
                fw = judge.judge([(a, b) for a in ds for b in hs]).reshape(len(ds), len(hs))
                bw = judge.judge([(b, a) for a in ds for b in hs]).reshape(len(ds), len(hs))
                m = len(quality.match_one_to_one(quality.symmetric_similarity(fw, bw), 0.5))
            rows.append((len(hs) - m + len(ds) - m, d, sentence, hs, ds))
    rows.sort(key=lambda r: -r[0])
    for err, d, sentence, hs, ds in rows[:n]:
        print(f"\n[doc {d}] errors {err}: {sentence}")
        print("  human: " + " | ".join(hs))
        print("  draft: " + " | ".join(ds))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--documents", default=None, help="a range START:END of document positions")
    parser.add_argument("--against", type=Path, default=None, help="score this unit file instead of the drafter")
    parser.add_argument("--errors", type=int, default=0, help="print the N sentences with most errors")
    args = parser.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    refs, units, systems, summaries, labels = read_folder(args.folder)
    docs = range(len(refs))
    if args.documents:
        a, b = (int(x) for x in args.documents.split(":"))
        docs = range(a, min(b, len(refs)))
    judge = LexicalJudge()
    if args.against:
        drafts_by_doc = read_units(args.against)
        rate = None
        by_sentence = None
    else:
        verb_form("drove")  # lemminflect loads its tables once per process (~2-4 s)
        start = time.process_time()
        by_sentence = {d: draft_reference(refs[d]) for d in docs}
        rate = len(docs) / (time.process_time() - start)
        drafts_by_doc = {d: [u for ds in by_sentence[d] for u in ds] for d in docs}
    out = evaluate(drafts_by_doc, units, summaries, labels, docs, judge)
    human = evaluate(units, units, summaries, labels, docs, judge)
    print(
        f"documents {docs.start}-{docs.stop - 1}: precision {out['precision']:.3f} recall {out['recall']:.3f} "
        f"F1 {out['f1']:.3f} | units/ref {out['per_reference']:.2f} ({out['words_per_unit']:.1f} words) | "
        f"summary Pearson {out['summary_pearson']:.4f} (human units {human['summary_pearson']:.4f})"
        + (f" | {rate:.0f} refs/s" if rate else "")
    )
    if args.errors and by_sentence is not None:
        sentence_errors(refs, units, by_sentence, docs, judge, args.errors)


if __name__ == "__main__":
    main()
