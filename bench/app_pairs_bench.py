"""The app's `pairs` allocation measured through the app (issue 43), against a fixed 3-assignment batch.

bench/allocation_bench.py's `pairs+judge` is a simulation of the policy. This bench runs the app
itself on REALSumm documents `--documents A:B` (default 50:100), per seed:

1. The app's importer (hits.services.dataset_import) imports a pyramid folder of those documents
   (the shared folder's files cut to their lines). The lab's expert documents are
   allocation_bench.expert_documents of the seed (`--expert-documents F` of the documents, the very
   ones the simulation draws): the imported expert labels of the other documents are deleted, so
   the app knows only what a lab with a gold round of that share knows. (The truth the figures are
   measured against is read before: the expert labels of every document.)
2. The app's learned judge (scoring.machine.runs: a judge run, as `judge_dataset --judge learned`)
   trains on those expert labels (every labelled document: the expert ones) and judges every pair;
   its stored calibrated probability (out of fold on the expert documents, the fit on them for the
   others) is the `pairs` batch's prior (`allocation_judge_run`).
   Triage, as the simulation's `pairs+judge`: the confidence is the run's own suggestion
   (figures.triage_suggestion, what a lab reads off the systems page or the API), chosen on the
   expert documents only, on their out-of-fold probabilities, by the rule the simulation uses
   (scoring.stats.triage_crossfit.suggest); it is the `pairs` batch's `triage_confidence`, so the pairs of non-gold HITs
   the judge is that sure of leave them (hits.triage) and the round's labels are the judge's there.
   A run marked not for ranking is taken with the batch's override (`triage_allow_not_for_ranking`).
   No confidence passes on the expert documents: no triage that seed. `--pair-triage 0`: no triage.
3. Two in-house batches on every summary (hits.services.batches.create_batch, publish_batch), the
   expert documents' summaries their gold HITs (the gold share is theirs: the app draws its gold
   among the summaries with known answers, which are exactly those): `fixed-3` (3 assignments) and
   `pairs` (a pairs batch's defaults: 1 first place and the threshold of allocation_bench.PAIRS,
   checked; allocation_max allocation_bench.APP.max_places, the opt-in stop after
   allocation_bench.STOP_AFTER gold judgments, the judge run as prior and its triage).
4. A simulated crowd works each batch through the services the views call: in rounds, every worker in
   a random order asks hits.services.handout for the next task, answers the ACUs it shows and submits
   (hits.services.submission: the `pairs` follow-up decision is taken there), and the work is approved
   (hits.services.review). The workers are allocation_bench.simulate_crowd's of the crowd file and the
   seed (kinds, sensitivity and specificity, hard pairs, colluders: Crowd.said); worker i's answer to a
   pair comes from one uniform draw per (worker, pair) and seed, so a worker says the same of a pair
   in both batches. The refit of the worker estimates (scoring.runs.worker_estimates.refit_estimates,
   with its collusion flags and stop) runs after every round, as the coalesced task after submissions
   would; the score recomputes a submission asks for are not run (their signals are disconnected).

Figures per policy, the keys of allocation_bench's JSON: `judgments` the crowd ACU judgments (the ACUs
the handed-out tasks showed and the workers answered; gold HITs left out in both policies, as the
expert documents are the lab's); `agreement` of the round's labels (the app's: scoring.runs.services
.scored_judgments, the posterior label for `pairs`, the majority for fixed-3) with the expert labels
on the non-gold pairs; `tau` Kendall's tau-b of the system scores (mean ACU share per summary, gold
pairs at their expert labels, as allocation_bench) against the experts'; `stopped` / `flagged` the
workers of each kind the app stopped / flagged; `triage` (pairs) the chosen confidence `c` (None: no
triage) and the share `decided` of the non-gold pairs the judge decided; `gold_guard` the figures of the
batch's gold guard when it fired (hits/allocation/guard.py; None: it never did). `against_fixed_3`: allocation_bench.paired (saved share
of judgments, differences of agreement and tau; mean and 95% t-interval over seeds).

Database: a throwaway SQLite file (default; `--database` takes another URL, e.g. a throwaway
PostgreSQL database `postgres://postgres@127.0.0.1:5432/acu_apppairs_bench`, created and dropped).

    .venv/bin/python bench/app_pairs_bench.py --crowd-spec bench/crowds/present.json --seeds 3 --first-seed 100 --json
    .venv/bin/python bench/app_pairs_bench.py --crowd-spec bench/crowds/present.json --pair-triage 0 --seeds 1
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from allocation_bench import (  # noqa: E402 - the path is set up first
    APP,
    ASSIGNMENTS,
    PAIRS,
    STOP_AFTER,
    expert_documents,
    system_scores,
)
from allocation_report import means, paired  # noqa: E402
from simulated_crowd import (  # noqa: E402
    KINDS,
    Crowd,
    crowd_arguments,
    documents_slice,
    expert_labels,
    read_spec,
    simulate_crowd,
)

POLICIES = ("fixed-3", "pairs")
PYRAMID_FILES = ("ids.txt", "documents.txt", "references.txt", "SCUs.txt")


def pyramid_slice(data: Path, documents: slice, out: Path, systems: int | None = None) -> Path:
    """A pyramid folder of the chosen documents of `data`: every per-document file cut to their lines
    (`systems`: only the first that many systems' summaries and labels, for a small test)."""
    from annotation.importing.textfile import read_lines

    for sub in ("summaries", "labels"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    names = list(PYRAMID_FILES)
    for sub, suffix in (("summaries", "summary"), ("labels", "label")):
        names += [f"{sub}/{p.name}" for p in sorted((data / sub).glob(f"*.{suffix}"))[:systems]]
    for name in names:
        lines = read_lines(data / name, name)[documents]
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@dataclass
class Lab:
    """One seed's dataset in the app, its pairs in allocation_bench's order (systems by name, then
    documents, then each reference's ACUs in order), the truth and the lab's expert documents."""

    dataset: object
    keys: list  # (summary id, ACU id) per pair
    index: dict  # (summary id, ACU id) -> pair
    systems: np.ndarray  # per summary
    docs: np.ndarray  # per summary: the document's number in the shared folder
    labels: list  # per summary: its expert labels
    starts: np.ndarray
    sizes: np.ndarray
    experts: np.ndarray  # the expert documents
    judge_run: object = None

    @property
    def truth(self) -> np.ndarray:
        return np.concatenate(self.labels)


def lab_dataset(folder: Path, name: str, order: tuple, expert_share: float, seed: int) -> Lab:
    """Import the folder as `name`; its pairs in allocation_bench's order (`order`: its systems and
    documents per summary, expert_labels'), the truth; keep the expert labels of the seed's expert
    documents only."""
    from annotation.importing.textfile import read_lines
    from annotation.models import ACU, Dataset, Summary
    from hits.gold import known_answers
    from hits.models import Assignment, Batch
    from hits.services.dataset_import import import_dataset

    import_dataset(str(folder), name=name, fmt="pyramid")
    dataset = Dataset.objects.get(name=name)
    truth = known_answers(dataset)
    acus: dict[int, list[int]] = {}  # per document: its ACUs in the order of SCUs.txt (the import's)
    texts: dict[int, list[str]] = {}
    rows = ACU.objects.filter(reference__document__dataset=dataset).order_by("reference__document__position", "pk")
    for pk, document, text in rows.values_list("pk", "reference__document__position", "text"):
        acus.setdefault(document, []).append(pk)
        texts.setdefault(document, []).append(" ".join(text.split()))
    units = [line.split("\t") for line in read_lines(folder / "SCUs.txt", "SCUs.txt")]
    if any([" ".join(u.split()) for u in line if u.strip()] != texts.get(d, []) for d, line in enumerate(units)):
        raise RuntimeError("the app's ACUs are not in the order of SCUs.txt")
    found = {
        (system, position): pk
        for system, position, pk in Summary.objects.filter(system__dataset=dataset).values_list(
            "system__name", "document__position", "pk"
        )
    }
    systems, docs = order
    first = int(docs.min())
    summaries = [(found[(s, d - first)], d - first) for s, d in zip(systems.tolist(), docs.tolist(), strict=True)]
    keys = [(pk, a) for pk, position in summaries for a in acus[position]]
    labels = [np.array([truth[pk][a] for a in acus[position]], dtype=bool) for pk, position in summaries]
    sizes = np.array([len(x) for x in labels])
    experts = expert_documents(docs, expert_share, np.random.default_rng([seed, 1]))
    Assignment.objects.filter(hit__batch__dataset=dataset, hit__batch__kind__in=Batch.EXPERT_KINDS).exclude(
        hit__summary__document__position__in=(experts - first).tolist()
    ).delete()
    index = {k: i for i, k in enumerate(keys)}
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return Lab(dataset, keys, index, systems, docs, labels, starts, sizes, experts)


def learned_judge(lab: Lab):
    """The app's learned judge trained on the lab's expert labels (a judge run of the dataset)."""
    from scoring.machine.runs import run_judge_run, start_judge_run

    run = run_judge_run(start_judge_run(lab.dataset, "learned").pk)
    if run.status != run.Status.DONE:
        raise RuntimeError(f"judge run {run.pk} failed: {run.error}")
    return run


def triage_confidence(lab: Lab) -> float | None:
    """pairs+judge's triage confidence for the app's judge run: the run's own suggestion, as a lab
    reads it off the systems page or the API (figures.triage_suggestion: chosen on the expert
    documents' out-of-fold probabilities only by scoring.stats.triage_crossfit.suggest, the
    simulation's criterion); None: none passes."""
    suggestion = lab.judge_run.figures.get("triage_suggestion")
    return suggestion["c"] if suggestion else None


def batches(lab: Lab, triage: bool = True, when: str = "always") -> dict:
    """The two published in-house batches on every summary, the expert documents' summaries gold;
    the `pairs` batch with its defaults (checked: 1 first place, pairs+judge's threshold) and, with
    `triage`, the judge's triage at `triage_confidence`, `when` as the batch's `triage_when`."""
    from hits.allocation.policy import FIXED
    from hits.allocation.policy import PAIRS as PAIRS_KIND
    from hits.batch_fields import BatchSpec
    from hits.services.batches import create_batch, publish_batch

    gold = float(np.isin(lab.docs, lab.experts).mean())
    fixed = BatchSpec(name="fixed-3", assignments=ASSIGNMENTS, gold_share=gold, allocation=FIXED)
    c = triage_confidence(lab) if triage else None
    pairs = BatchSpec(
        name="pairs",
        assignments=ASSIGNMENTS,
        gold_share=gold,
        allocation=PAIRS_KIND,
        allocation_max=APP.max_places,
        allocation_judge_run=lab.judge_run.pk,
        triage_confidence=c,
        # the lab's override: a run trained on a few gold documents may be marked not for ranking
        # (its system tau's CI reaches 0), and c is chosen on those documents out of fold
        triage_allow_not_for_ranking=c is not None,
        stop_after=STOP_AFTER,
        triage_when=when if c is not None else "always",  # no confidence passed: no triage to hold back
    )
    if (pairs.policy.min_places, pairs.policy.threshold) != (1, PAIRS.threshold):
        raise RuntimeError("a pairs batch's defaults are not the setting pairs+judge measured")
    return {
        name: publish_batch(create_batch(dataset=lab.dataset, spec=spec))
        for name, spec in zip(POLICIES, (fixed, pairs), strict=True)
    }


def make_workers(n: int, prefix: str) -> list:
    from django.test.utils import override_settings

    from hits.models import Worker
    from hits.services.people import create_user_with_role

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        return [
            Worker.objects.get(
                user=create_user_with_role(username=f"{prefix}{i}", password="bench-password-123456", role="worker")
            )
            for i in range(n)
        ]


def work(batch, workers: list, crowd: Crowd, lab: Lab, u: np.ndarray, rng) -> int:
    """The crowd works the batch through the app until no worker gets a task: in each round every
    worker, in a random order, takes the next task, answers what it shows, submits, and is approved;
    an adaptive batch's estimates are refitted after each round. Returns the rounds."""
    from hits.allocation.policy import ADAPTIVE_KINDS
    from hits.services import handout
    from hits.services.review import approve
    from hits.services.submission import submit_assignment
    from scoring.runs.worker_estimates import refit_estimates

    rounds = 0
    while True:
        worked = 0
        for w in rng.permutation(len(workers)):
            try:
                assignment = handout.next_assignment(workers[w], batch)
            except handout.NoWork:
                continue
            hit = assignment.hit
            acus = list(hit.task_acus().values_list("pk", flat=True))
            pairs = np.array([lab.index[(hit.summary_id, a)] for a in acus])
            said = crowd.said(np.full(len(pairs), w), pairs, u[w, pairs])
            answers = {str(a): bool(x) for a, x in zip(acus, said, strict=True)}
            submit_assignment(assignment_id=assignment.pk, worker_id=workers[w].pk, answers=answers)
            approve(assignment_id=assignment.pk)
            worked += 1
        if batch.allocation in ADAPTIVE_KINDS:
            refit_estimates(batch.pk)
        rounds += 1
        if not worked:
            return rounds


def round_labels(lab: Lab, batch) -> tuple[np.ndarray, np.ndarray]:
    """(label per pair, judged per pair) of the round, as the app's scores read them."""
    from scoring.runs.data import load_judgments
    from scoring.runs.services import scored_judgments
    from scoring.stats.aggregation import acu_labels

    judgments = scored_judgments(batch, load_judgments(lab.dataset, batch))
    summaries, acus, label, _, _ = acu_labels(judgments.summary, judgments.acu, judgments.present)
    labels = np.zeros(len(lab.keys), dtype=bool)
    judged = np.zeros(len(lab.keys), dtype=bool)
    at = np.array([lab.index[(int(s), int(a))] for s, a in zip(summaries, acus, strict=True)], dtype=int)
    labels[at], judged[at] = label, True
    return labels, judged


def crowd_judgments(batch) -> int:
    """The ACU judgments the crowd made on the batch's non-gold HITs."""
    from hits.models import Judgment

    return Judgment.objects.filter(assignment__hit__batch=batch, assignment__hit__gold_answers__isnull=True).count()


def triage_figures(lab: Lab, batch) -> dict | None:
    """A triage round's confidence and the share of the non-gold pairs its judge decided."""
    state = {"state": batch.triage_state, "decision": batch.triage_decision} if batch.triage_state else {}
    if batch.triage_run_id is None or not batch.machine_decides:  # no triage, or one held back (pending, off)
        return None if batch.allocation == "fixed" else {"c": None, "decided": 0.0, **state}
    from scoring.runs.triage import machine_votes

    plain = int(np.sum(lab.sizes[~np.isin(lab.docs, lab.experts)]))
    return {"c": batch.triage_confidence, "decided": len(machine_votes(batch)) / plain, **state}


def figures(lab: Lab, batch, workers: list, crowd: Crowd) -> dict:
    from hits.collusion import CollusionFlag
    from hits.models import WorkerEstimate

    truth = lab.truth
    gold = np.repeat(np.isin(lab.docs, lab.experts), lab.sizes)
    batch.refresh_from_db()  # decided during the round (a held-back triage: machine_decides): as the scores read it
    labels, judged = round_labels(lab, batch)
    labels = np.where(gold, truth, labels)
    plain = ~gold
    expert_systems = system_scores(lab.systems, truth, lab.starts, lab.sizes)
    scores = system_scores(lab.systems, labels, lab.starts, lab.sizes)
    kind_of = {w.pk: crowd.kind[i] for i, w in enumerate(workers)}
    stopped = WorkerEstimate.objects.filter(batch=batch, stopped_at__isnull=False).values_list("worker_id", flat=True)
    flagged = {w for f in CollusionFlag.objects.filter(batch=batch) for w in (f.first_id, f.second_id)}
    return {
        "judgments": crowd_judgments(batch),
        "agreement": float(np.mean(labels[plain] == truth[plain])),
        "tau": float(kendalltau(scores, expert_systems).statistic),
        "unjudged": int((~judged & plain).sum()),
        "stopped": {k: sum(kind_of[w] == i for w in stopped) for i, k in enumerate(KINDS)},
        "flagged": {k: sum(kind_of[w] == i for w in flagged) for i, k in enumerate(KINDS)},
        "triage": triage_figures(lab, batch),
        # the batch's gold guard (hits/allocation/guard.py): its figures when it fired, None when it never did
        "gold_guard": type(batch).objects.values_list("gold_guard", flat=True).get(pk=batch.pk),
    }


def run_seed(
    data: Path,
    documents: slice,
    spec: dict,
    seed: int,
    workers: list,
    expert_share: float = 0.1,
    systems=None,
    triage: bool = True,
    when: str = "always",
) -> dict:
    """One seed through the app (`systems`: the first that many only; `triage`: the pairs batch's
    triage): {policy: figures, "lab": Lab,
    "batches": {policy: batch}, "crowd": Crowd, "u": the draws per (worker, pair)}."""
    first = documents.start or 0
    with tempfile.TemporaryDirectory() as folder:
        sliced = pyramid_slice(data, documents, Path(folder), systems)
        names, docs, labels = expert_labels(sliced)  # allocation_bench's order and crowd, on the whole folder too
        docs = docs + first
        lab = lab_dataset(sliced, f"realsumm {args_range(documents)} seed {seed}", (names, docs), expert_share, seed)
    if any((a != b).any() for a, b in zip(labels, lab.labels, strict=True)):
        raise RuntimeError("the app's expert labels do not line up with the label files")
    crowd = simulate_crowd(spec, docs, labels, np.random.default_rng(seed))
    if len(workers) < len(crowd.kind):
        raise ValueError(f"the crowd has {len(crowd.kind)} workers, {len(workers)} given")
    lab.judge_run = learned_judge(lab)
    u = np.random.default_rng([seed, 2]).random((len(crowd.kind), len(lab.keys)))
    out: dict = {"lab": lab, "batches": batches(lab, triage, when), "crowd": crowd, "u": u}
    for name, batch in out["batches"].items():
        work(batch, workers, crowd, lab, u, np.random.default_rng([seed, 3]))
        out[name] = figures(lab, batch, workers, crowd)
    return out


def args_range(documents: slice) -> str:
    return f"{'' if documents.start is None else documents.start}:{'' if documents.stop is None else documents.stop}"


def quiet_signals() -> None:
    """The refit runs after each round (`work`); the score recomputes are not this bench's."""
    from hits.signals import judgments_changed, submission_stored

    submission_stored.disconnect(dispatch_uid="scoring.runs.worker_estimates")
    judgments_changed.disconnect(dispatch_uid="scoring.runs.recompute")


def setup_django(database: str) -> None:
    os.environ.update(
        DATABASE_URL=database,
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY=os.environ.get("SECRET_KEY", "bench-only"),
        LOG_LEVEL="WARNING",
        CELERY_TASK_ALWAYS_EAGER="1",
    )
    os.environ.pop("CELERY_BROKER_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    quiet_signals()


def table(summary: dict, against: dict) -> str:
    lines = ["| policy | crowd ACU judgments | agreement | τ |", "| --- | --- | --- | --- |"]
    for name, m in summary.items():
        lines.append(
            f"| {name} | {m['judgments']:,.0f} | {m['agreement']:.4f} ± {m['agreement_sd']:.4f} | "
            f"{m['tau']:.3f} ± {m['tau_sd']:.3f} |"
        )
    for name, d in against.items():
        saved, agree, tau = d["saved"], d["agreement_minus_base"], d["tau_minus_base"]
        lines.append(
            f"\n{name} vs fixed-3: judgments saved {saved[0]:.1%} [{saved[1]:.1%}, {saved[2]:.1%}], agreement "
            f"{agree[0]:+.4f} [{agree[1]:+.4f}, {agree[2]:+.4f}], τ {tau[0]:+.3f} [{tau[1]:+.3f}, {tau[2]:+.3f}] "
            f"({d['seeds_below_base_agreement']} seeds below fixed-3's agreement)"
        )
    return "\n".join(lines)


def measure(args) -> dict:
    spec = read_spec(Path(args.crowd_spec))
    documents = documents_slice(args.documents)
    workers = make_workers(int(spec["workers"]), "crowd-")
    results: dict[str, list[dict]] = {name: [] for name in POLICIES}
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        started = time.perf_counter()
        out = run_seed(
            Path(args.data),
            documents,
            spec,
            seed,
            workers,
            args.expert_documents,
            triage=bool(args.pair_triage),
            when=args.pair_triage_when,
        )
        for name in POLICIES:
            results[name].append(out[name])
        row = {
            name: {k: out[name][k] for k in ("judgments", "agreement", "tau", "triage", "gold_guard")}
            for name in POLICIES
        }
        print(f"seed {seed}: {time.perf_counter() - started:.0f} s {json.dumps(row)}", file=sys.stderr, flush=True)
    return results


def main() -> None:
    parser = crowd_arguments(__doc__.split("\n")[0], seeds=3, first_seed=100, documents="50:100")
    parser.add_argument("--expert-documents", type=float, default=0.1, help="the share of documents with expert labels")
    parser.add_argument(
        "--pair-triage",
        type=int,
        choices=(0, 1),
        default=1,
        help="1 (default): the pairs batch triages with its judge run at the confidence chosen on the expert "
        "documents; 0: every pair goes to the crowd (the judge only a prior)",
    )
    parser.add_argument(
        "--pair-triage-when",
        choices=("always", "spammers"),
        default="always",
        help="the pairs batch's triage_when: spammers holds the triage until the gold round is bought, then on "
        "only if it shows workers at chance (docs/leads.md). The app's default is spammers since 2026-12-07; "
        "this bench's stays always, so the commands in bench/RESULTS.md measure what they measured",
    )
    parser.add_argument("--database", help="a database URL to create and drop (default: a throwaway SQLite file)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    try:
        read_spec(Path(args.crowd_spec))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parser.error(f"crowd spec: {exc}")
    if not 0 < args.expert_documents < 1:
        parser.error("--expert-documents is a share of the documents: above 0, below 1 (e.g. 0.1)")
    memory = "/dev/shm" if Path("/dev/shm").is_dir() else None  # the throwaway file in memory: no disk syncs
    with tempfile.TemporaryDirectory(dir=memory) as tmp:
        database = args.database or f"sqlite:///{tmp}/app_pairs_bench.sqlite3"
        if args.database:
            from load_bench import recreate_database

            recreate_database(database)
        started = time.perf_counter()
        try:
            setup_django(database)
            results = measure(args)
        finally:
            if args.database:
                from django.db import connections

                connections.close_all()
                recreate_database(database, drop_only=True)
    summary = means(results)
    against = paired(results)
    if args.json:
        per_seed = {
            name: [{k: r[k] for k in ("judgments", "agreement", "tau", "triage", "gold_guard")} for r in rows]
            for name, rows in results.items()
        }
        print(json.dumps({"policies": summary, "against_fixed_3": against, "per_seed": per_seed}, indent=1))
        return
    print(
        f"{args.crowd_spec}: documents {args.documents}, seeds {args.first_seed}..{args.first_seed + args.seeds - 1}, "
        f"expert documents {args.expert_documents:g}, pair triage {args.pair_triage}; "
        f"{time.perf_counter() - started:.0f} s"
    )
    print(table(summary, against))


if __name__ == "__main__":
    main()
