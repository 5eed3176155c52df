"""Allocation policies and quality control on a crowd described in a file (issues 29, 42).

Truth: the expert presence labels of the REALSumm sample (../shared/data/realsumm/labels: one
file per system, one line per document, one 0/1 per ACU of the document's reference), read from
the files; `--documents A:B` keeps documents A..B-1 (0-49 to choose a setting, 50-99 to report).
One summary is one HIT holding all its ACUs.

The crowd comes from `--crowd-spec FILE` (JSON; bench/crowds/ holds examples):

    {"workers": 100, "gold_share": 0.1, "hard_share": 0.2, "hard_shrink": 0.7,
     "groups": [
       {"kind": "honest",   "share": 0.6, "sensitivity": {"beta": [8, 2]}, "specificity": {"beta": [8, 2]}},
       {"kind": "biased",   "share": 0.1, "sensitivity": {"beta": [18, 2]}, "specificity": {"beta": [5, 5]}},
       {"kind": "spammer",  "share": 0.2, "sensitivity": {"fixed": 0.5}, "specificity": {"fixed": 0.5}},
       {"kind": "colluder", "share": 0.1}]}

Each group's share of the workers (rounded; the last group takes what is left) draws each
worker's sensitivity and specificity from a Beta distribution or takes a fixed value. Kinds:
`honest`, `biased`, `spammer` answer by their sensitivity and specificity; `colluder`s all give
one shared pseudo-random answer per ACU (the same for every summary of the document: no reading).
`hard_share` of the (summary, ACU) pairs are hard for everyone: there a worker's sensitivity and
specificity shrink by `hard_shrink` toward 0.5. `gold_share` of the HITs are gold HITs: their
answers are the expert labels, known to the app (its fit clamps them). Per seed (numpy Generator),
every HIT draws DRAWN distinct workers in a random order with their answers; every policy takes the
first ones not stopped, so the policies are compared on the very same crowd.

Policies (HITs arrive in WAVES waves, as a batch is worked over time; before each wave the app's
refit: Dawid-Skene anchored to gold on everything bought so far, scoring.stats.dawid_skene, and
the workers' gold evidence, scoring.stats.gold_evidence):
- `fixed-3`: 3 places per HIT.
- `app`: the app's default adaptive policy as shipped (hits.batch_fields defaults: 2 places, up to 5;
  gold HITs keep the batch's 3 assignments; no stop, as `stop_after` is off by default). Its pilot
  (hits.allocation.policy.pilot_size: the first 50 of 1,250 HITs, the first wave) gets 3 places; from
  the next wave on, pilot_max_sd of the pilot's posteriors (after that wave's refit) is the
  summary-level threshold (hit_policy): one more place while a HIT's sd of its ACU share is above it.
  hits.allocation.policy decides, as in hits.allocation.service.
- `app+stop`: the same with the batch's opt-in stop (`stop_after` STOP_AFTER judgments on gold
  ACUs): before each wave a worker whom gold shows near chance (hits.allocation.policy.at_chance)
  gets no more places and their judgments leave the aggregation; the HIT's next drawn worker
  takes the place.
- `app+judge` (with `--judge learned`, issue 43): the lab's expert documents (`--expert-documents F`,
  a share of the documents per seed) are the gold, and the learned judge (logistic regression over
  the cheap pair features of scoring.machine.features) trains on their expert labels only; its
  confidence is chosen on their out-of-fold probabilities (scoring.stats.triage_crossfit.choose,
  `triage_report`'s agreement criterion) and applied to the other documents: the pairs it decides leave the
  HITs (a HIT left with none is not posted). On what is left: the gold-anchored stop, and `app`'s
  pilot rule (the same code: the first pilot_size of the HITs left, at fixed places, set the
  summary-level threshold, hits.allocation.policy.hit_policy at PILOT_QUANTILE, over the ACUs each HIT
  carries); later HITs start at JUDGE_MIN_PLACES and get places until as precise. **Bench-only as a
  whole**: the app triages an adaptive batch only as a triage batch, which keeps no gold HIT, so it
  has no gold-anchored fit or stop there (hits/services/triage.py); a `pairs` batch triages with gold.
- `pairs+judge` (with `--judge learned`, issue 43; **bench-only**, see bench/RESULTS.md): the same
  judge and triage, and the judge as a voter too: its probability, Platt-scaled on its out-of-fold
  probabilities of the expert documents (scoring.stats.learned.calibration), is each pair's prior
  in the posterior the stop reads (hits.allocation.policy.pair_posteriors with the gold-anchored
  estimates). Adaptive by pair: the gold HITs are handed out first (so the stop has gold evidence
  early), every other HIT starts at one place, and while a HIT has an open pair
  (hits.allocation.policy.open_pairs: its posterior not settled at the threshold, PairSettings, or
  settled by the judge's prior where its crowd's own posterior, over the prior 0.5, does not lean the
  same way: `--pair-crowd 0` drops that condition) it gets one more place, a new worker asking
  only its open pairs (up to the batch's most places), so `judgments` counts only the pairs each
  place shows. `--pair-triage 0`: no triage, every pair goes to the crowd (the judge only a prior).
  The triage is aware of systems (`--pair-system-triage RULE --pair-system-setting X`, the rules of
  hits.allocation.system_triage, read from the expert documents' labels of every system; default cap
  1.5: no system has more than 1.5 times the triaged share of all pairs, its most confident kept;
  `none` is the triage before). The gold-anchored stop as in `app+judge`. `--pair-triage-when spammers`:
  the triage held back until the gold round is bought, then on only if the stop has stopped at least
  `--pair-spammer-share` of the gold-judged workers (bench/pairs_policy.py, opt-in); the policy
  `pairs+judge+when` is pairs+judge with it, to run beside pairs+judge.
  Labels: the posterior with the judge's prior and the last refit's estimates.
- `pairs+judge+pilot` (or `--pair-threshold-rule pilot`; opt-in, bench/pairs_policy.py): `pairs+judge`
  with its threshold learned at each refit from the gold round (fixed places' majority accuracy on the
  gold pairs less `--pair-margin`, never below `--pair-threshold`); the JSON's `pair_threshold` per seed.
  With `--judge`, every policy's gold HITs are the expert documents' summaries, and `judgments`
  leaves them out (the lab pays for them in every policy alike). The JSON's `against_fixed_3`: per
  policy, paired by seed, the share of judgments saved and the differences of agreement and tau,
  each [mean, 95% t-interval low, high].
Every adaptive policy has the app's gold guard (hits/allocation/guard.py, `guard`): after each wave's refit,
its rule replayed on the gold pairs against fixed-3's majority there; once it is worse on gold
(hits.allocation.gold_guard.compare) the rest of the run settles only after 3 judgments (`gold_guard`: the
wave it fired at; the JSON's `gold_guard_fired`: in how many seeds).
Every policy's labels: the anchored Dawid-Skene fit on what it bought (stopped workers left out;
app+judge: the judge's label where it decided; `--labels majority|posterior`: each judged pair's, gold too,
majority, a tie not present, or posterior from the last refit above 0.5, as the app publishes a round);
collusion flags: scoring.stats.gold_evidence.collusion on the same judgments, as the last refit.

Figures, means over the seeds: `judgments` the crowd ACU judgments paid (gold HITs included),
`agreement` the share of the non-gold pairs whose label equals the expert label, `tau` Kendall's
tau-b of the system scores (mean ACU share, gold pairs at their gold answers) against the experts',
`stopped` / `flagged` the mean number of workers of each kind stopped / in a flagged pair per run.

    .venv/bin/python bench/allocation_bench.py --crowd-spec bench/crowds/present.json --seeds 5 --json
    .venv/bin/python bench/allocation_bench.py --crowd-spec bench/crowds/present.json --judge learned --expert-documents 0.1 --seeds 2 --json
    .venv/bin/python bench/allocation_bench.py --crowd-spec bench/crowds/present.json --judge learned --policies fixed-3 pairs+judge --seeds 2 --json
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hits.allocation import system_triage  # noqa: E402 - the path is set up first
from hits.allocation.gold_guard import GoldCheck, compare, first_majority, replay_hits, replay_pairs  # noqa: E402
from hits.allocation.policy import (  # noqa: E402 - the path is set up first
    ADAPTIVE,
    PILOT_QUANTILE,
    Policy,
    at_chance,
    at_least_fixed,
    hit_policy,
    hit_settled,
    pair_posteriors,
    pilot_max_sd,
    pilot_size,
    wants_place,
)
from scoring.stats.aggregation import majority_present  # noqa: E402 - the path is set up first
from scoring.stats.dawid_skene import dawid_skene  # noqa: E402 - the path is set up first
from scoring.stats.gold_evidence import collusion, gold_evidence  # noqa: E402
from scoring.stats.triage_crossfit import SUGGEST_MAX_CHANGE, SUGGEST_MIN_AGREEMENT  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from allocation_report import means, paired, table  # noqa: E402
from pairs_policy import (  # noqa: E402
    PAIRS,
    THRESHOLD_RULES,
    TRIAGE_WHEN,
    PairSettings,
    decide_pairs,
    decide_triage,
    hold_triage,
    wave_threshold,
)
from simulated_crowd import (  # noqa: E402
    KINDS,
    Crowd,
    JudgeData,
    crowd_arguments,
    documents_slice,
    expert_labels,
    judge_data,
    read_spec,
    simulate_crowd,
)

WAVES = 25
ASSIGNMENTS = 3  # the batch form's default assignments per HIT: fixed-3, and gold HITs of an adaptive batch
STOP_AFTER = 20  # app+stop: the opt-in stop after this many judgments on gold ACUs
APP = Policy(ADAPTIVE)  # the shipped defaults of an adaptive batch
POLICIES = ("fixed-3", "app", "app+stop")
JUDGE_POLICY = "app+judge"
PAIRS_POLICY = "pairs+judge"
PILOT_POLICY = "pairs+judge+pilot"  # pairs+judge with its threshold from the gold round (bench/pairs_policy.py)
WHEN_POLICY = "pairs+judge+when"  # pairs+judge with its triage only where the gold round shows spammers


# app+judge's triage criterion: the app's own (a judge run's suggested confidence,
# scoring.stats.triage_crossfit.suggest): agreement 0.97 alone, chosen on documents 0-49, seeds 0-1.
TRIAGE_MIN_AGREEMENT = SUGGEST_MIN_AGREEMENT
TRIAGE_MAX_CHANGE = SUGGEST_MAX_CHANGE
# Chosen on documents 0-49, seeds 0-1 (bench/RESULTS.md): one place to start (of 1 or 2 places: the fewest
# judgments with agreement at least fixed-3's on both crowds), a lead's setting (allocation_min). The pilot's
# quantile is the app's (PILOT_QUANTILE): the 0.75 chosen then was the bench's own, which no batch can take.
JUDGE_MIN_PLACES = 1


class Run:
    """What one policy bought of one crowd: places per HIT, filled by each HIT's drawn workers in
    order, a stopped worker's place taken by the next one (their bought judgments stay paid)."""

    def __init__(self, crowd: Crowd):
        self.crowd = crowd
        self.places = np.zeros(len(crowd.sizes), dtype=int)
        self.taken = np.zeros(crowd.workers.shape, dtype=bool)  # HIT x drawn: took a place
        self.stopped = np.zeros(int(crowd.workers.max()) + 1, dtype=bool)
        self.asked = np.ones(crowd.truth.size, dtype=bool)  # the pairs a HIT carries (triage: the uncertain ones)
        self.open = self.asked  # the pairs a place filled now shows (by pair: the unsettled ones)
        self.shown = np.zeros(crowd.answers.shape, dtype=bool)  # drawn x pairs: the j-th worker judged it
        self.machine: np.ndarray | None = None  # app+judge: the judge's label of the pairs it decides
        self.prior: np.ndarray | None = None  # the judge's calibrated P(present) per pair
        self.max_sd: float | None = None  # app+judge: the summary-level threshold its pilot wave set
        self.policy = APP
        self.fell_back: int | None = None  # the wave the gold guard fired at (hits/allocation/guard.py)
        gold_pairs = crowd.gold_pairs
        self.gold = (gold_pairs, crowd.truth[gold_pairs])

    def fill(self, hits: np.ndarray) -> None:
        """Give each of these HITs' places not held yet to its next free drawn worker."""
        for h in hits:
            free = np.flatnonzero(~self.taken[h] & ~self.stopped[self.crowd.workers[h]])
            need = self.places[h] - int(self.taken[h].sum())
            new = free[: max(need, 0)]
            self.taken[h, new] = True
            pairs = slice(self.crowd.starts[h], self.crowd.starts[h] + self.crowd.sizes[h])
            self.shown[new[:, None], np.arange(pairs.start, pairs.stop)] = self.open[pairs]

    def rows(self, counted_only: bool = True):
        """(pair, worker, said) of every judgment bought (counted_only: stopped workers left out)."""
        c = self.crowd
        slot, items = np.nonzero(self.shown)
        workers = c.workers[c.hit_of[items], slot]
        said = c.answers[slot, items]
        if counted_only:
            keep = ~self.stopped[workers]
            items, workers, said = items[keep], workers[keep], said[keep]
        return items, workers, said

    def refit(self):
        """The app's refit: (estimates per worker, prior, gold evidence, rows)."""
        items, workers, said = self.rows()
        n = self.stopped.size
        sens, spec, prior = np.full(n, np.nan), np.full(n, np.nan), 0.5
        evidence = None
        if items.size:
            fit = dawid_skene(items, workers, said, gold=self.gold)
            if not np.isnan(fit.sensitivity).all():
                sens[fit.workers], spec[fit.workers], prior = fit.sensitivity, fit.specificity, fit.prior
            evidence = gold_evidence(items, workers, said, *self.gold)
        return sens, spec, prior, evidence, (items, workers, said)

    def stop(self, evidence) -> None:
        if evidence is not None:
            self.stopped[evidence.workers[at_chance(evidence.chance_upper, evidence.gold_judged, STOP_AFTER)]] = True

    def judged_of(self, hit: int, posterior: np.ndarray, judged: np.ndarray) -> np.ndarray:
        """The posteriors of the HIT's judged pairs: what the app's rule reads of a HIT
        (hits.allocation.service.hit_posteriors: its ACUs with counted judgments, so a triaged HIT's
        share sd is over the ACUs it carries, not its summary's)."""
        pairs = slice(self.crowd.starts[hit], self.crowd.starts[hit] + self.crowd.sizes[hit])
        return posterior[pairs][judged[pairs]]

    def decide(self, hits: np.ndarray, sens, spec, prior) -> None:
        """Within a wave: one more place per HIT the policy asks for (the app's hit_settled and
        wants_place on each HIT's judged pairs), until none asks."""
        c = self.crowd
        policy = self.policy if self.max_sd is None else replace(self.policy, max_sd=self.max_sd)
        while True:
            items, workers, said = self.rows()
            mine = np.isin(c.hit_of[items], hits)
            p = pair_posteriors(items[mine], said[mine], sens[workers[mine]], spec[workers[mine]], prior, c.truth.size)
            judged = np.bincount(items[mine], minlength=c.truth.size) > 0
            more = [
                h
                for h in hits
                if not c.gold[h]
                and self.taken[h].sum() == self.places[h]  # a place no one can take stays open
                and wants_place(policy, int(self.places[h]), hit_settled(policy, self.judged_of(h, p, judged)))
            ]
            if not more:
                return
            self.places[more] += 1
            self.fill(np.array(more))


def triage(run: Run, judge: JudgeData, systems: str = "none", setting: float = 0.0) -> dict:
    """app+judge's triage: the learned judge trained on the expert documents' labels only, its
    confidence chosen there out of fold (scoring.stats.triage_crossfit.choose on the out-of-fold
    probabilities), applied to the other documents: the pairs it decides leave the crowd's HITs.
    `systems` (pairs+judge): a triage aware of systems, hits.allocation.system_triage's rule of that
    name with its `setting`; the prior is the judge's Platt-scaled probability whatever the rule."""
    from scoring.stats import learned, triage_crossfit

    c, gold = run.crowd, judge.expert
    assert gold is not None
    truth, system, document = c.truth[gold], judge.system[gold], judge.document[gold]
    n_systems = int(judge.system.max()) + 1
    cv = learned.cross_validated(judge.x[gold], truth, document)
    probability = learned.predict(cv["fit"], judge.x)
    run.prior = learned.calibrated(probability, learned.calibration(cv["oof"], truth))
    oof = cv["oof"]
    if systems == "recalibrate":  # c chosen on offsets fitted without each pair's document
        offsets = system_triage.system_offsets(oof, truth, system, setting, n_systems)
        oof = system_triage.crossfit_recalibrated(oof, truth, system, document, setting, n_systems)
        probability = system_triage.recalibrated(probability, judge.system, offsets)
    chosen = triage_crossfit.choose(
        oof,
        truth,
        judge.summary[gold],
        document,
        system,
        triage_crossfit.SUGGEST_GRID,  # the app's: the cs a pairs batch takes
        min_agreement=TRIAGE_MIN_AGREEMENT,
        max_change=TRIAGE_MAX_CHANGE,
    )
    decided = ~gold & system_triage.decided_at(probability, chosen)
    if systems == "gate":
        decided &= system_triage.triaging_systems(oof, truth, system, chosen, setting, n_systems)[judge.system]
    if systems == "cap":
        decided[~gold] = system_triage.capped(
            probability[~gold], decided[~gold], judge.system[~gold], setting, n_systems
        )
    run.asked = run.open = ~decided
    run.machine = np.where(decided, probability >= 0.5, False)
    return {"c": chosen, "decided": float(decided[~gold].mean())}


def run_policy(crowd: Crowd, name: str, judge: JudgeData | None = None, pairs: PairSettings = PAIRS) -> Run:
    run = Run(crowd)
    run.by_pair = name == PAIRS_POLICY  # type: ignore[attr-defined]
    run.thresholds = []  # type: ignore[attr-defined]  # pairs+judge: each wave's settling threshold
    base = APP
    if name in (JUDGE_POLICY, PAIRS_POLICY):
        assert judge is not None
        systems = (pairs.systems, pairs.system_setting) if name == PAIRS_POLICY else ("none", 0.0)
        run.triage = triage(run, judge, *systems)  # type: ignore[attr-defined]
        run.policy = base = Policy(ADAPTIVE, JUDGE_MIN_PLACES, APP.max_places)
        if name == PAIRS_POLICY and not pairs.triage:  # every pair to the crowd: the judge only a prior
            run.asked = run.open = np.ones(crowd.truth.size, dtype=bool)
            run.machine = None
        if name == PAIRS_POLICY:
            hold_triage(run, pairs)
    carries = np.logical_or.reduceat(run.asked, crowd.starts)  # HITs left with a pair for the crowd
    wave_of = (np.arange(len(crowd.sizes)) * WAVES) // len(crowd.sizes)
    if name == PAIRS_POLICY and pairs.gold_first:  # the gold HITs handed out before the others
        wave_of[np.argsort(~crowd.gold, kind="stable")] = wave_of.copy()
    # the app's pilot (hits.allocation.service.pilot_of): the batch's first pilot_size HITs, of those it has
    # (a triaged HIT left with no pair is not made)
    in_pilot = carries & (np.cumsum(carries) <= pilot_size(int(carries.sum())))
    for w in range(WAVES):
        hits = np.flatnonzero(wave_of == w)
        if name == "fixed-3":
            run.places[hits] = ASSIGNMENTS
            run.fill(hits)
            continue
        sens, spec, prior, evidence, rows = run.refit()
        if name in ("app+stop", JUDGE_POLICY, PAIRS_POLICY):
            run.stop(evidence)
        if name == PAIRS_POLICY:
            decide_triage(run, pairs, w, wave_of, evidence, STOP_AFTER)
            carries = np.logical_or.reduceat(run.asked, crowd.starts)
            threshold = wave_threshold(run, pairs, ASSIGNMENTS)
            run.thresholds.append(threshold)  # type: ignore[attr-defined]
            guard(run, w, sens, spec, rows, threshold)
            start = ASSIGNMENTS if w < pairs.pilot_waves else 1
            run.open = run.asked
            run.places[hits] = np.where(crowd.gold[hits], ASSIGNMENTS, np.where(carries[hits], start, 0))
            run.fill(hits)
            if w >= pairs.pilot_waves:
                decide_pairs(run, hits[carries[hits]], sens, spec, pairs, threshold, ASSIGNMENTS)
            run.open = run.asked
            continue
        # the app's rule (hits.allocation.service.policy_for), app+judge's too: the pilot's HITs at fixed
        # places, the others at the threshold the pilot's posteriors set once it is bought (fixed places before)
        pilot = np.flatnonzero(in_pilot & ~crowd.gold)
        bought = in_pilot.any() and wave_of[in_pilot].max() < w
        sd = pilot_threshold(run, pilot, (sens, spec, prior, rows), PILOT_QUANTILE) if bought else None
        guard(run, w, sens, spec, rows, hit_policy(base, ASSIGNMENTS, sd, sd is None), prior)
        for piloting, mine in ((True, hits[in_pilot[hits]]), (sd is None, hits[~in_pilot[hits] & carries[hits]])):
            run.policy = hit_policy(base, ASSIGNMENTS, sd, piloting)
            if run.fell_back is not None and not piloting:
                run.policy = at_least_fixed(run.policy, ASSIGNMENTS)
            run.max_sd = run.policy.max_sd
            run.places[mine] = np.where(crowd.gold[mine], ASSIGNMENTS, run.policy.min_places)
            run.fill(mine)
            run.decide(mine, sens, spec, prior)
    return run


def guard(run: Run, wave: int, sens, spec, rows, rule: Policy | float, prior: float = 0.5) -> GoldCheck | None:
    """The app's gold guard after a refit (hits/allocation/guard.py): the rule (pairs+judge: its threshold,
    with the judge's prior; the HIT-level policies: the rule of their later HITs) replayed on the gold pairs
    answered at the fixed places, in the order their answers came (each HIT's drawn order), against fixed-3's
    majority; once it is worse on gold (hits.allocation.gold_guard.compare) the run falls back from `wave` on."""
    c, (items, workers, said) = run.crowd, rows
    counts = np.bincount(items[c.gold[c.hit_of[items]]], minlength=c.truth.size)
    keys = np.flatnonzero(counts >= ASSIGNMENTS)
    if run.fell_back is not None or not keys.size:
        return None
    keep = counts[items] >= ASSIGNMENTS
    index = np.zeros(c.truth.size, dtype=np.int64)
    index[keys] = np.arange(keys.size)
    it, w, s = index[items[keep]], workers[keep], said[keep]
    if isinstance(rule, Policy):
        _, hit_of = np.unique(c.hit_of[keys], return_inverse=True)
        label, bought = replay_hits(hit_of.ravel(), it, s, sens[w], spec[w], prior, rule, keys.size)
    else:
        pair_prior = prior if run.prior is None else run.prior[keys]
        label, bought = replay_pairs(it, s, sens[w], spec[w], pair_prior, rule, 1, run.policy.max_places, keys.size)
    fixed_label, counted = first_majority(it, s, ASSIGNMENTS, keys.size)
    check = compare(label, fixed_label, c.truth[keys], bought, counted, ASSIGNMENTS)
    if check.worse:
        run.fell_back = wave
    return check


def pilot_threshold(run: Run, pilot: np.ndarray, fit=None, quantile: float = PILOT_QUANTILE) -> float | None:
    """The pilot's summary-level threshold (hits.allocation.policy.pilot_max_sd) after a refit
    (`fit`: the wave's estimates, prior and rows, as the app reads them; None: refit now)."""
    c = run.crowd
    if fit is None:
        sens, spec, prior, _, (items, workers, said) = run.refit()
    else:
        sens, spec, prior, (items, workers, said) = fit
    p = pair_posteriors(items, said, sens[workers], spec[workers], prior, c.truth.size)
    judged = np.bincount(items, minlength=c.truth.size) > 0
    # as the app (hits.allocation.service.pilot_threshold): the pilot HITs' judged pairs only, so a
    # triaged HIT's share sd is over the ACUs it carries
    pairs = np.flatnonzero(judged & np.isin(c.hit_of, pilot))
    hit_of = c.hit_of[pairs]
    starts = np.flatnonzero(np.r_[True, hit_of[1:] != hit_of[:-1]]) if pairs.size else np.zeros(0, dtype=int)
    return pilot_max_sd(p[pairs], starts, quantile=quantile)


def system_scores(systems, labels_flat, starts, sizes):
    per_summary = np.add.reduceat(labels_flat.astype(float), starts) / sizes
    return np.array([per_summary[systems == n].mean() for n in np.unique(systems)])


def figures(run: Run, systems, expert_systems, count_gold: bool = True, rule: str = "ds") -> dict:
    c = run.crowd
    sens, spec, prior, evidence, (items, workers, said) = run.refit()
    fit = dawid_skene(items, workers, said, gold=run.gold)
    labels = np.zeros(c.truth.size, dtype=bool)
    labels[fit.items] = fit.labels
    counts = np.bincount(items, minlength=c.truth.size)
    if run.prior is not None and getattr(run, "by_pair", False):
        p = pair_posteriors(items, said, sens[workers], spec[workers], run.prior, c.truth.size)
        labels = np.where(counts > 0, p >= 0.5, labels)
    elif rule != "ds":  # as the app publishes a round: the majority (a tie not present) or pair_labels' posterior
        p = pair_posteriors(items, said, sens[workers], spec[workers], prior, c.truth.size)
        app = majority_present(np.bincount(items, said, c.truth.size), counts) if rule == "majority" else p > 0.5
        labels = np.where(counts > 0, app, labels)
    triaged_at_truth = None  # tau with the pairs the judge decided at their expert labels: its triage's share
    if run.machine is not None:
        scores = system_scores(systems, np.where(run.asked, labels, c.truth), c.starts, c.sizes)
        triaged_at_truth = float(kendalltau(scores, expert_systems).statistic)
        labels[~run.asked] = run.machine[~run.asked]
    scores = system_scores(systems, labels, c.starts, c.sizes)
    plain = ~c.gold[c.hit_of]
    flagged = np.zeros(run.stopped.size, dtype=bool)
    for flag in collusion(items, workers, said, evidence):
        flagged[[flag.first, flag.second]] = True
    all_items, _, _ = run.rows(counted_only=False)
    if not count_gold:  # the expert documents are the lab's, paid in every policy alike: left out
        all_items = all_items[~c.gold[c.hit_of[all_items]]]
    return {
        "judgments": int(all_items.size),
        "triage": getattr(run, "triage", None),
        "agreement": float(np.mean(labels[plain] == c.truth[plain])),
        "tau": float(kendalltau(scores, expert_systems).statistic),
        "tau_triaged_at_truth": triaged_at_truth,
        "pair_threshold": run.thresholds[-1] if getattr(run, "thresholds", None) else None,
        "gold_guard": run.fell_back,  # the wave the gold guard fired at (None: never)
        "stopped": {k: int((run.stopped & (c.kind == i)).sum()) for i, k in enumerate(KINDS)},
        "flagged": {k: int((flagged & (c.kind == i)).sum()) for i, k in enumerate(KINDS)},
    }


def expert_documents(docs, share: float, rng) -> np.ndarray:
    """The lab's expert (gold) documents of a seed: a share of the documents, at least two."""
    uniques = np.unique(docs)
    return rng.choice(uniques, min(len(uniques), max(2, round(share * len(uniques)))), replace=False)


def run(
    spec: dict,
    systems,
    docs,
    labels,
    *,
    seeds: int,
    first_seed: int = 0,
    policies=POLICIES,
    judge: JudgeData | None = None,
    expert_share: float = 0.1,
    pairs: PairSettings = PAIRS,
    rule: str = "ds",
) -> dict:
    """{policy: [figures per seed]}. With a judge: the gold HITs are the summaries of the expert
    documents (a share of the documents, per seed), and `judgments` leaves them out."""
    truth = np.concatenate(labels)
    sizes = np.array([len(x) for x in labels])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    expert_systems = system_scores(systems, truth, starts, sizes)
    out: dict[str, list[dict]] = {name: [] for name in policies}
    for seed in range(first_seed, first_seed + seeds):
        crowd = simulate_crowd(spec, docs, labels, np.random.default_rng(seed))
        if judge is not None:
            chosen = expert_documents(docs, expert_share, np.random.default_rng([seed, 1]))
            crowd.gold = np.isin(docs, chosen)
            judge.expert = crowd.gold[crowd.hit_of]
        for name in policies:
            if name == PILOT_POLICY:  # side by side with pairs+judge in one run
                bought = run_policy(crowd, PAIRS_POLICY, judge, replace(pairs, threshold_rule="pilot"))
            elif name == WHEN_POLICY:
                bought = run_policy(crowd, PAIRS_POLICY, judge, replace(pairs, triage_when="spammers"))
            else:
                bought = run_policy(crowd, name, judge, pairs)
            out[name].append(figures(bought, systems, expert_systems, judge is None, rule))
    return out


def main():
    parser = crowd_arguments(__doc__.split("\n")[0], seeds=5, first_seed=0, documents=":")
    parser.add_argument(
        "--policies",
        nargs="+",
        choices=(*POLICIES, JUDGE_POLICY, PAIRS_POLICY, PILOT_POLICY, WHEN_POLICY),
        help="default: all",
    )
    parser.add_argument(
        "--judge",
        choices=("learned",),
        help="adds app+judge: the learned judge on the expert documents' labels, triage, adaptive on the rest",
    )
    parser.add_argument(
        "--expert-documents", type=float, default=0.1, help="with --judge: the share of documents with expert labels"
    )
    parser.add_argument("--pair-threshold", type=float, default=PAIRS.threshold, help="pairs+judge: settled at")
    parser.add_argument("--pair-threshold-rule", choices=THRESHOLD_RULES, default=PAIRS.threshold_rule)
    parser.add_argument("--pair-margin", type=float, default=PAIRS.margin, help="pilot: gold accuracy less this")
    parser.add_argument("--pair-pilot-waves", type=int, default=PAIRS.pilot_waves, help="pairs+judge: fixed waves")
    parser.add_argument("--pair-gold-first", type=int, choices=(0, 1), default=int(PAIRS.gold_first))
    parser.add_argument("--pair-scope", choices=("pair", "hit"), default=PAIRS.scope)
    parser.add_argument("--pair-crowd", type=int, choices=(0, 1), default=int(PAIRS.crowd))
    parser.add_argument("--pair-triage", type=int, choices=(0, 1), default=int(PAIRS.triage))
    parser.add_argument("--pair-triage-when", choices=TRIAGE_WHEN, default=PAIRS.triage_when)
    parser.add_argument("--pair-spammer-share", type=float, default=PAIRS.spammer_share, help="with spammers")
    parser.add_argument(
        "--pair-system-triage", choices=system_triage.RULES, default=PAIRS.systems, help="triage aware of systems"
    )
    parser.add_argument(
        "--pair-system-setting",
        type=float,
        default=PAIRS.system_setting,
        help="recalibrate: strength in pairs; gate: needed accuracy; cap: factor of the overall share",
    )
    parser.add_argument("--labels", choices=("ds", "majority", "posterior"), default="ds", help="see the docstring")
    parser.add_argument("--json", action="store_true", help="print one JSON object (the means) instead of a table")
    args = parser.parse_args()
    try:
        spec = read_spec(Path(args.crowd_spec))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parser.error(f"crowd spec: {exc}")
    systems, docs, labels = expert_labels(Path(args.data), documents_slice(args.documents))
    if not labels:
        parser.error(f"no labels/*.label under {args.data} (pass --data or set SHARED_DIR)")
    if not 0 < args.expert_documents < 1:
        parser.error("--expert-documents is a share of the documents: above 0, below 1 (e.g. 0.1)")
    policies = args.policies or [*POLICIES, *([JUDGE_POLICY] if args.judge else [])]
    if {JUDGE_POLICY, PAIRS_POLICY, PILOT_POLICY, WHEN_POLICY} & set(policies) and not args.judge:
        parser.error(f"{JUDGE_POLICY} and {PAIRS_POLICY} need --judge learned")
    started = time.process_time()
    judge = judge_data(Path(args.data), documents_slice(args.documents), systems, docs, labels) if args.judge else None
    results = run(
        spec,
        systems,
        docs,
        labels,
        seeds=args.seeds,
        first_seed=args.first_seed,
        policies=policies,
        judge=judge,
        expert_share=args.expert_documents,
        pairs=PairSettings(
            args.pair_threshold,
            args.pair_pilot_waves,
            bool(args.pair_gold_first),
            args.pair_scope,
            bool(args.pair_crowd),
            bool(args.pair_triage),
            args.pair_system_triage,
            args.pair_system_setting,
            args.pair_threshold_rule,
            args.pair_margin,
            args.pair_triage_when,
            args.pair_spammer_share,
        ),
        rule=args.labels,
    )
    summary = means(results)
    if args.json:
        print(json.dumps({"policies": summary, "against_fixed_3": paired(results)}, indent=1))
        return
    print(
        f"{args.crowd_spec}: {len(labels)} summaries, {sum(map(len, labels))} expert ACU labels (documents "
        f"{args.documents}); {args.seeds} seeds from {args.first_seed}; {time.process_time() - started:.0f} s of CPU"
    )
    print(table(summary))


if __name__ == "__main__":
    main()
