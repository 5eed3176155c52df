"""Adaptive allocation of crowd work against fixed assignments and Potato's max_diversity (issue 29).

Truth: the expert presence labels of the REALSumm sample (../shared/data/realsumm/labels, 2,500
summaries of 25 systems, 26,400 (summary, ACU) pairs), read from the files. Crowd (seeded numpy
Generator): a pool of --workers workers; --spammers of them (a share, default 0.3) are spammers,
half answering "present" at random (p = 0.5), half always "present"; an honest worker has a
sensitivity and a specificity each drawn uniformly from [--low, --high] (default 0.70-0.95).
Each summary is one HIT holding all its ACUs; its possible workers are drawn once per seed (5
distinct workers in a random order, with their answers), and every policy takes the first k of
them, so the policies are compared on the very same crowd.

Policies (the number of places k per HIT is what is bought; a place labels every ACU of the HIT):
- fixed-3, fixed-5: k = 3 or 5 everywhere.
- adaptive (min 2, max 5, threshold t): every HIT gets 2 places; then, round by round, the labels
  so far are fitted by Dawid-Skene (scoring/stats/dawid_skene.py, the workers' current estimates)
  and a HIT gets one more place while any of its pairs is unsettled (hits/allocation/policy.py, the rule
  the app applies on each submission), up to 5.
- max_diversity (Potato's strategy, as the peer baseline): every HIT gets 2 places; the rest of
  the same budget as the adaptive policy it sits under goes round by round to the HITs with the
  most disagreement first (mean minority share of the votes over the HIT's ACUs), up to 5.

With --variants, policies explored after the rule above missed the bar (issue 29, i29b and i29c):
HITs arrive in --waves waves (default 25 of 100 HITs, as a batch is worked over time and the app
refits after submissions); before each wave's decisions and for its labels the workers' estimates
are a Dawid-Skene fit on the pairs judged at least twice so far (a pair judged once tells nothing
about its worker and would only confirm the worker's own answer), the fallback of
hits/allocation/policy.py for a worker without one; nothing is learned from the expert labels. Each HIT
has DRAWN (10) drawn workers; the first 5 are those of the policies above, the others take the
places of stopped workers.
- fixed-k, waves: k places everywhere, labelled the same way (the reference for "+ stop").
- adaptive a-5, t, waves: the app's per-ACU rule on whole HITs (hits.allocation.policy.settled), from a.
- per-ACU, min m, threshold t: every pair starts with m judgments; round by round each unsettled
  pair (hits.allocation.policy.settled at t) gets the next worker of its HIT, up to 5; an extra place
  carries only its HIT's unsettled ACUs (a place with fewer ACUs, which the app does not open).
- summary-level, min 1, eps: whole-HIT places; a HIT gets one more while the standard deviation of
  its ACU share (hits.allocation.policy.share_sd, the quantity the system score averages) is above eps:
  the app's `allocation_max_sd`.
- "+ stop": the app's opt-in `stop_after` = 50: from the second wave, a worker with at least 50
  judgments on pairs judged twice whose estimates are at chance (hits.allocation.policy.at_chance:
  sensitivity + specificity - 1 below 0.2) gets no more places, and their judgments are dropped
  from the fit and the labels (as the lead's Exclude); the HIT's next drawn worker takes the place.
- max_diversity per pair / per HIT (Potato's strategy under the budget of the row it names, with
  its stop setting): from 2 judgments per pair (per HIT), the rest of that row's ACU judgments
  (places) round by round to the pairs (HITs: mean over their ACUs) with the largest minority
  share of the votes first, up to 5.

Labels of every policy: Dawid-Skene on what was bought (fixed-3 with majority vote too).
Figures per policy, mean ± standard deviation over the seeds: places (assignments, one per HIT and
worker, whatever number of ACUs it carries) bought and their change against fixed-3, ACU judgments
bought (one per (summary, ACU) pair and worker) and their change against fixed-3, label agreement with the experts, system-level
Kendall tau (tau-b) of the 25 system scores (mean ACU score) against the experts', and the largest
|system score - expert system score|.

    .venv/bin/python bench/allocation_bench.py [--seeds 5] [--thresholds 0.55 0.6 0.7 0.8 0.9] [--variants [--only REGEX]]
"""

import argparse
import copy
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hits.allocation.policy import ADAPTIVE, Policy, at_chance, pair_posteriors, settled, share_sd, wants_place  # noqa: E402
from scoring.stats.aggregation import majority_present  # noqa: E402 - the path is set up first
from scoring.stats.dawid_skene import dawid_skene  # noqa: E402 - the path is set up first

MAX_PLACES = 5
DRAWN = 10  # workers drawn per HIT (the first MAX_PLACES are the policies' order; the rest replace stopped ones)


def expert_labels(folder: Path):
    """(system per summary, list of label arrays) from the pyramid folder's label files."""
    systems, labels = [], []
    for path in sorted((folder / "labels").glob("*.label")):
        for line in path.read_text().strip("\n").split("\n"):
            systems.append(path.stem)
            labels.append(np.array([int(x) for x in line.split("\t")], dtype=bool))
    return np.array(systems), labels


@dataclass
class Crowd:
    """Per HIT its MAX_PLACES possible workers in order and their answers."""

    truth: np.ndarray  # per pair
    hit_of: np.ndarray  # per pair: its HIT
    starts: np.ndarray  # per HIT: its first pair
    sizes: np.ndarray  # per HIT: its ACU count
    workers: np.ndarray  # HITs x DRAWN worker ids
    answers: np.ndarray  # DRAWN x pairs: what the j-th worker of the pair's HIT said
    kind: np.ndarray  # per worker: 0 honest, 1 random spammer, 2 always present


def simulate_crowd(labels, rng, *, workers=100, spam_share=0.3, low=0.70, high=0.95) -> Crowd:
    truth = np.concatenate(labels)
    sizes = np.array([len(x) for x in labels])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    hit_of = np.repeat(np.arange(len(labels)), sizes)
    kind = np.zeros(workers, dtype=int)  # 0 honest, 1 random spammer, 2 always present
    spammers = rng.choice(workers, round(spam_share * workers), replace=False)
    kind[spammers[: len(spammers) // 2]] = 1
    kind[spammers[len(spammers) // 2 :]] = 2
    sens = rng.uniform(low, high, workers)
    spec = rng.uniform(low, high, workers)
    chosen = np.argsort(rng.random((len(labels), workers)), axis=1)[:, :DRAWN]
    answers = np.empty((DRAWN, truth.size), dtype=bool)
    for j in range(DRAWN):  # the first MAX_PLACES columns are drawn as before DRAWN existed
        w = chosen[hit_of, j]
        u = rng.random(truth.size)
        honest = np.where(truth, u < sens[w], u >= spec[w])
        answers[j] = np.select([kind[w] == 1, kind[w] == 2], [u < 0.5, True], honest)
    return Crowd(truth, hit_of, starts, sizes, chosen, answers, kind)


def bought(crowd: Crowd, places: np.ndarray):
    """(pair, worker, said) rows of the first `places[h]` workers of every HIT."""
    per_pair = places[crowd.hit_of]
    rows = [np.flatnonzero(per_pair > j) for j in range(MAX_PLACES)]
    items = np.concatenate(rows)
    workers = np.concatenate([crowd.workers[crowd.hit_of[r], j] for j, r in enumerate(rows)])
    said = np.concatenate([crowd.answers[j, r] for j, r in enumerate(rows)])
    return items, workers, said


def ds_posteriors(crowd: Crowd, places: np.ndarray):
    """P(present) per pair: Dawid-Skene's fit, the posterior taken as the app takes it
    (hits.allocation.policy.pair_posteriors with the fitted estimates and prior)."""
    items, workers, said = bought(crowd, places)
    fit = dawid_skene(items, workers, said)
    index = np.searchsorted(fit.workers, workers)
    return pair_posteriors(
        items, said, fit.sensitivity[index], fit.specificity[index], fit.prior, n_items=crowd.truth.size
    )


def adaptive_places(crowd: Crowd, policy: Policy) -> np.ndarray:
    places = np.full(len(crowd.sizes), policy.min_places)
    while True:
        posterior = ds_posteriors(crowd, places)
        all_settled = np.logical_and.reduceat(settled(posterior, policy.threshold), crowd.starts)
        more = np.array([wants_place(policy, int(k), bool(s)) for k, s in zip(places, all_settled, strict=True)])
        if not more.any():
            return places
        places = places + more


def disagreement(crowd: Crowd, places: np.ndarray) -> np.ndarray:
    """Per HIT the mean over its ACUs of the minority's share of the votes."""
    items, _, said = bought(crowd, places)
    yes = np.bincount(items, weights=said, minlength=crowd.truth.size)
    n = places[crowd.hit_of]
    minority = np.minimum(yes, n - yes) / n
    return np.add.reduceat(minority, crowd.starts) / crowd.sizes


def max_diversity_places(crowd: Crowd, budget: int, start: int = 2) -> np.ndarray:
    places = np.full(len(crowd.sizes), start)
    left = budget - int(places.sum())
    while left > 0:
        d = disagreement(crowd, places)
        eligible = np.flatnonzero(places < MAX_PLACES)
        if not eligible.size:
            break
        disagreeing = eligible[d[eligible] > 0]
        pool = disagreeing if disagreeing.size else eligible
        order = pool[np.argsort(-d[pool], kind="stable")][:left]
        places[order] += 1
        left -= order.size
    return places


def overlap_fit(crowd: Crowd, counts: np.ndarray, stopped: np.ndarray | None = None):
    """(rows counted, per worker sensitivity, specificity and judgments on pairs judged at least
    twice, prior): Dawid-Skene on those pairs only, from the simulated answers alone. The rows of
    `stopped` workers are dropped (as the lead's Exclude drops them), before anything is counted."""
    rows = [np.flatnonzero(counts > j) for j in range(MAX_PLACES)]
    items = np.concatenate(rows)
    workers = np.concatenate([crowd.workers[crowd.hit_of[r], j] for j, r in enumerate(rows)])
    said = np.concatenate([crowd.answers[j, r] for j, r in enumerate(rows)])
    if stopped is not None and stopped.any():
        keep = ~stopped[workers]
        items, workers, said = items[keep], workers[keep], said[keep]
    n_workers = int(crowd.workers.max()) + 1
    sens, spec = np.full(n_workers, np.nan), np.full(n_workers, np.nan)
    keep = np.bincount(items, minlength=crowd.truth.size)[items] >= 2
    seen = np.bincount(workers[keep], minlength=n_workers)
    prior = 0.5
    if keep.any():
        fit = dawid_skene(items[keep], workers[keep], said[keep])
        sens[fit.workers], spec[fit.workers], prior = fit.sensitivity, fit.specificity, fit.prior
    return (items, workers, said), sens, spec, seen, prior


def overlap_posteriors(crowd: Crowd, counts: np.ndarray, stopped: np.ndarray | None = None) -> np.ndarray:
    (items, workers, said), sens, spec, _, prior = overlap_fit(crowd, counts, stopped)
    return pair_posteriors(items, said, sens[workers], spec[workers], prior, n_items=crowd.truth.size)


def block_order(crowd: Crowd, hits: np.ndarray, blocked: np.ndarray) -> np.ndarray:
    """Puts the unblocked drawn workers of these HITs first (their answers move with them);
    returns per HIT how many are unblocked."""
    order = np.argsort(blocked[crowd.workers[hits]], axis=1, kind="stable")
    crowd.workers[hits] = np.take_along_axis(crowd.workers[hits], order, axis=1)
    pairs = np.flatnonzero(np.isin(crowd.hit_of, hits))
    perm = order[np.searchsorted(hits, crowd.hit_of[pairs])]
    crowd.answers[:, pairs] = crowd.answers[perm.T, pairs[None, :]]
    return (~blocked[crowd.workers[hits]]).sum(axis=1)


def variant_counts(
    crowd: Crowd, *, low, high, mode="acu", threshold=0.99, eps=None, stop=None, after=50, budget=None, waves=25
):
    """(judgments bought per pair, workers stopped) under a --variants policy (module docstring);
    `crowd` is reordered in place when workers are stopped, so pass a copy.

    mode: "acu" (per-ACU follow-up places: each unsettled pair gets the HIT's next worker), "hit"
    (whole-HIT places while any pair of the HIT is unsettled: the app's rule), "sd" (whole-HIT
    places while the sd of the HIT's ACU share is above eps), "div" (Potato's max_diversity per
    pair: the pairs with the largest minority share first, until `budget` ACU judgments).
    stop: before each wave, a worker with at least `after` judgments on pairs judged twice whose
    estimated sensitivity + specificity - 1 is below hits.allocation.policy.AT_CHANCE gets no more of the batch's work and
    their judgments are dropped from the aggregation (cumulative, as the opt-in batch setting)."""
    n = len(crowd.sizes)
    counts = np.zeros(crowd.truth.size, dtype=int)
    stopped = np.zeros(int(crowd.workers.max()) + 1, dtype=bool)
    wave_of = (np.arange(n) * waves) // n
    for w in range(waves):
        hits = np.flatnonzero(wave_of == w)
        in_wave = np.isin(crowd.hit_of, hits)
        cap = np.full(crowd.truth.size, high)
        if stop and w > 0:
            _, sens, spec, seen, _ = overlap_fit(crowd, counts, stopped)
            stopped |= at_chance(sens, spec, seen, after)
            free = block_order(crowd, hits, stopped)
            cap[in_wave] = np.clip(free, 1, high)[np.searchsorted(hits, crowd.hit_of[in_wave])]
        counts[in_wave] = np.minimum(low, cap[in_wave])
        if mode == "div":
            left = round(budget * in_wave.sum() / crowd.truth.size) - int(counts[in_wave].sum())
        elif mode == "hdiv":
            left = round(budget * hits.size / n) - int(np.maximum.reduceat(counts, crowd.starts)[hits].sum())
        while mode in ("div", "hdiv"):
            (items, _, said), *_ = overlap_fit(crowd, counts, stopped)
            yes = np.bincount(items, weights=said, minlength=crowd.truth.size)
            k = np.maximum(np.bincount(items, minlength=crowd.truth.size), 1)
            minority = np.minimum(yes, k - yes) / k
            if mode == "hdiv":  # whole HITs, the mean minority share over their ACUs
                minority = (np.add.reduceat(minority, crowd.starts) / crowd.sizes)[crowd.hit_of]
            pool = np.flatnonzero(in_wave & (counts < cap) & (minority > 0))
            if mode == "hdiv":
                pool = crowd.starts[np.unique(crowd.hit_of[pool])]  # one pair stands for its HIT
            if left <= 0 or not pool.size:
                break
            take = pool[np.argsort(-minority[pool], kind="stable")][:left]
            if mode == "hdiv":
                take = np.flatnonzero(np.isin(crowd.hit_of, crowd.hit_of[take]))
                left -= np.unique(crowd.hit_of[take]).size
            else:
                left -= take.size
            counts[take] += 1
        while mode not in ("div", "hdiv"):
            p = overlap_posteriors(crowd, counts, stopped)
            if mode == "acu":  # per ACU: an extra place carries the unsettled ACUs only
                more = ~settled(p, threshold)
            elif mode == "hit":  # whole-HIT places while any ACU is unsettled
                more = ~np.logical_and.reduceat(settled(p, threshold), crowd.starts)[crowd.hit_of]
            else:  # summary level, whole-HIT places
                more = (share_sd(p, crowd.starts) > eps)[crowd.hit_of]
            more &= in_wave & (counts < cap)
            if not more.any():
                break
            counts = counts + more
    return counts, stopped


def system_scores(systems, labels_flat, starts, sizes):
    per_summary = np.add.reduceat(labels_flat.astype(float), starts) / sizes
    return np.array([per_summary[systems == n].mean() for n in np.unique(systems)])


def figures(crowd: Crowd, systems, places, expert_systems, *, majority=False) -> dict:
    if majority:
        items, _, said = bought(crowd, places)
        votes = np.bincount(items, weights=said.astype(float), minlength=crowd.truth.size)
        labels = majority_present(votes, places[crowd.hit_of])
    else:
        labels = ds_posteriors(crowd, places) > 0.5
    scores = system_scores(systems, labels, crowd.starts, crowd.sizes)
    return {
        "places": int(places.sum()),
        "judgments": int((places * crowd.sizes).sum()),
        "agreement": float(np.mean(labels == crowd.truth)),
        "tau": float(kendalltau(scores, expert_systems).statistic),
        "max_change": float(np.abs(scores - expert_systems).max()),
    }


def variant_figures(crowd: Crowd, systems, counts, expert_systems, stopped=None) -> dict:
    labels = overlap_posteriors(crowd, counts, stopped) > 0.5
    scores = system_scores(systems, labels, crowd.starts, crowd.sizes)
    return {
        "places": int(np.maximum.reduceat(counts, crowd.starts).sum()),
        "judgments": int(counts.sum()),
        "agreement": float(np.mean(labels == crowd.truth)),
        "tau": float(kendalltau(scores, expert_systems).statistic),
        "max_change": float(np.abs(scores - expert_systems).max()),
        "stopped": int(stopped.sum()) if stopped is not None else 0,
        "stopped_spammers": int((stopped & (crowd.kind > 0)).sum()) if stopped is not None else 0,
    }


STOP = {"stop": True, "after": 50}  # the opt-in batch setting: at chance (J < AT_CHANCE) after >= 50 judgments
VARIANTS = {
    "fixed-3, waves": {"low": 3, "high": 3, "mode": "hit"},
    "fixed-3 + stop": {"low": 3, "high": 3, "mode": "hit", **STOP},
    "fixed-2 + stop": {"low": 2, "high": 2, "mode": "hit", **STOP},
    **{f"adaptive 2-5, t={t:g}, waves": {"low": 2, "high": 5, "mode": "hit", "threshold": t} for t in (0.55, 0.6)},
    **{
        f"adaptive 2-5, t={t:g} + stop": {"low": 2, "high": 5, "mode": "hit", "threshold": t, **STOP}
        for t in (0.55, 0.6, 0.7)
    },
    **{
        f"adaptive 1-5, t={t:g} + stop": {"low": 1, "high": 5, "mode": "hit", "threshold": t, **STOP}
        for t in (0.85, 0.9)
    },
    **{f"per-ACU, min 1, t={t:g}": {"low": 1, "high": 5, "threshold": t} for t in (0.81, 0.83, 0.85, 0.9)},
    **{
        f"per-ACU, min 1, t={t:g} + stop": {"low": 1, "high": 5, "threshold": t, **STOP}
        for t in (0.81, 0.83, 0.85, 0.87, 0.9)
    },
    **{f"per-ACU, min 2, t={t:g}": {"low": 2, "high": 5, "threshold": t} for t in (0.6, 0.7, 0.8, 0.9)},
    **{
        f"per-ACU, min 2, t={t:g} + stop": {"low": 2, "high": 5, "threshold": t, **STOP}
        for t in (0.55, 0.6, 0.65, 0.7, 0.8, 0.9)
    },
    **{f"summary-level, min 1, eps={e:g}": {"low": 1, "high": 5, "mode": "sd", "eps": e} for e in (0.1, 0.115)},
    **{
        f"summary-level, min 1, eps={e:g} + stop": {"low": 1, "high": 5, "mode": "sd", "eps": e, **STOP}
        for e in (0.09, 0.095, 0.1, 0.105, 0.11)
    },
}
# Potato's max_diversity at the budget of these rows, with their stop setting: per pair (from 2
# judgments, ACU-judgment budget) under per-ACU rows, per HIT (from 2 places, place budget) otherwise.
DIVERSITY_AT = (
    "per-ACU, min 1, t=0.81",
    "per-ACU, min 1, t=0.85 + stop",
    "per-ACU, min 2, t=0.6 + stop",
    "adaptive 2-5, t=0.55 + stop",
    "summary-level, min 1, eps=0.1 + stop",
    "summary-level, min 1, eps=0.105 + stop",
)


def run(
    labels,
    systems,
    *,
    seeds,
    thresholds,
    workers,
    spam_share,
    low,
    high,
    minimum=2,
    maximum=MAX_PLACES,
    variants=False,
    only=None,
    first_seed=0,
):
    """{policy name: [figures per seed]}."""
    truth = np.concatenate(labels)
    sizes = np.array([len(x) for x in labels])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    expert_systems = system_scores(systems, truth, starts, sizes)
    out: dict[str, list[dict]] = {}
    for seed in range(first_seed, first_seed + seeds):
        rng = np.random.default_rng(seed)
        crowd = simulate_crowd(labels, rng, workers=workers, spam_share=spam_share, low=low, high=high)
        n = len(sizes)

        def add(name, places, crowd=crowd, **kw):
            out.setdefault(name, []).append(figures(crowd, systems, places, expert_systems, **kw))

        add("fixed-3 (majority)", np.full(n, 3), majority=True)
        add("fixed-3", np.full(n, 3))
        add("fixed-5", np.full(n, 5))
        for t in thresholds:
            places = adaptive_places(crowd, Policy(ADAPTIVE, minimum, maximum, t))
            add(f"adaptive {minimum}-{maximum}, t={t:g}", places)
            add(f"max_diversity, budget of t={t:g}", max_diversity_places(crowd, int(places.sum()), minimum))
        for name, options in VARIANTS.items() if variants else ():
            if only and not re.search(only, name):
                continue
            own = copy.deepcopy(crowd)
            counts, stopped = variant_counts(own, **options)
            out.setdefault(name, []).append(variant_figures(own, systems, counts, expert_systems, stopped))
            if name in DIVERSITY_AT:
                per_pair = options.get("mode", "acu") == "acu"
                budget = int(counts.sum()) if per_pair else int(np.maximum.reduceat(counts, crowd.starts).sum())
                own = copy.deepcopy(crowd)
                extra = {k: v for k, v in options.items() if k in ("stop", "after")}
                mode = "div" if per_pair else "hdiv"
                counts, stopped = variant_counts(own, low=2, high=5, mode=mode, budget=budget, **extra)
                label = "per pair" if per_pair else "per HIT"
                out.setdefault(f"max_diversity {label}, budget of {name}", []).append(
                    variant_figures(own, systems, counts, expert_systems, stopped)
                )
    return out


def table(results: dict[str, list[dict]]) -> str:
    base = np.mean([r["places"] for r in results["fixed-3"]])
    base_judgments = np.mean([r["judgments"] for r in results["fixed-3"]])
    lines = [
        "| policy | places bought | vs fixed-3 | ACU judgments | vs fixed-3 | agreement with experts | "
        "system Kendall τ | largest system-score change | workers stopped (spammers) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, rows in results.items():

        def ms(key, fmt, rows=rows):
            v = np.array([r[key] for r in rows], dtype=float)
            return f"{v.mean():{fmt}} ± {v.std():{fmt}}"

        change = np.mean([r["places"] for r in rows]) / base - 1
        judged = np.mean([r["judgments"] for r in rows]) / base_judgments - 1
        lines.append(
            f"| {name} | {ms('places', ',.0f')} | {change:+.1%} | {ms('judgments', ',.0f')} | {judged:+.1%} | "
            f"{ms('agreement', '.4f')} | {ms('tau', '.4f')} | {ms('max_change', '.4f')} | "
            f"{np.mean([r.get('stopped', 0) for r in rows]):.1f} ({np.mean([r.get('stopped_spammers', 0) for r in rows]):.1f}) |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
    parser.add_argument("--data", default=str(shared / "data" / "realsumm"), help="a pyramid folder with labels/")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.55, 0.6, 0.7, 0.8, 0.9])
    parser.add_argument("--min", type=int, default=2, help="the adaptive policy's first places per HIT")
    parser.add_argument("--max", type=int, default=MAX_PLACES, help=f"its most places per HIT (at most {MAX_PLACES})")
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--spammers", type=float, default=0.3)
    parser.add_argument("--low", type=float, default=0.70)
    parser.add_argument("--high", type=float, default=0.95)
    parser.add_argument("--variants", action="store_true", help="also the explored policies (~8 CPU minutes more)")
    parser.add_argument("--only", help="with --variants: only the variants whose name matches this regex")
    args = parser.parse_args()
    systems, labels = expert_labels(Path(args.data))
    if not labels:
        parser.error(f"no labels/*.label under {args.data} (pass --data or set SHARED_DIR)")
    print(
        f"{len(labels)} summaries, {sum(map(len, labels))} expert ACU labels; crowd: {args.workers} workers, "
        f"{args.spammers:.0%} spammers (half random, half always present), honest sensitivity and "
        f"specificity in [{args.low}, {args.high}]; {args.seeds} seeds from {args.first_seed}; mean ± sd"
    )
    results = run(
        labels,
        systems,
        seeds=args.seeds,
        thresholds=args.thresholds,
        workers=args.workers,
        spam_share=args.spammers,
        low=args.low,
        high=args.high,
        minimum=args.min,
        maximum=args.max,
        variants=args.variants,
        only=args.only,
        first_seed=args.first_seed,
    )
    print(table(results))


if __name__ == "__main__":
    main()
