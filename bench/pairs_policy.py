"""pairs+judge's settings and its rule within a wave (bench/allocation_bench.py, issue 43): moved out of
allocation_bench so that it stays within 600 lines; allocation_bench re-exports PairSettings and PAIRS.

`threshold_rule` "pilot" (`--pair-threshold-rule pilot`, opt-in, not the default): the settling threshold
is learned from the batch's own gold round instead of the constant PAIRS_THRESHOLD. The gold HITs are
answered at the fixed places (and handed out first), so after each refit the accuracy fixed places'
majority reached on the gold pairs bought so far is known; the threshold is
hits.allocation.policy.pilot_pair_threshold of it (that accuracy less `margin`, never below the constant).

`triage_when` "spammers" (`--pair-triage-when spammers`, opt-in, not the default; issue 43): the judge's
triage is held back until the gold round is bought, then turned on only if the gold-anchored stop has
stopped at least `spammer_share` of the workers with enough gold judgments to be judged
(hits.allocation.policy.at_chance's `after`): a crowd whose gold shows workers at chance gets the triage
(its saving needs it), a crowd whose gold shows none sends every pair to its workers (the judge only a
prior), where the triage's system-level bias cost the ranking on held-out documents. The HITs handed out
before the decision keep all their pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hits.allocation.gold_guard import first_majority
from hits.allocation.policy import (
    PAIRS_THRESHOLD,
    TRIAGE_SPAMMER_SHARE,
    TRIAGE_WHEN,  # noqa: F401 - allocation_bench reads it here
    open_pairs,
    pair_posteriors,
    pilot_pair_threshold,
    triage_on,
)

if TYPE_CHECKING:
    from allocation_bench import Run

THRESHOLD_RULES = ("constant", "pilot")


@dataclass(frozen=True)
class PairSettings:
    """pairs+judge's settings. Chosen on documents 0-49, seeds 0-7 (bench/RESULTS.md): gold first and
    no pilot wave (both cheaper at higher agreement); the judge never settles a pair against or without
    its crowd (`crowd`, issue 43: its system-level bias leaked into the labels on documents 50-99), and
    with it, of thresholds 0.7, 0.725, 0.75 the smallest whose 95% interval of agreement minus fixed-3's
    lay above 0 on both crowds with tau minus fixed-3's at least 0 on average on both. The triage aware of
    systems (`systems`, issue 43): of recalibrate 20 / 100, gate 0.6 / 0.75 and cap 1.0 / 1.5, all of which
    met that agreement and tau rule on both crowds, the largest mean saving (cap 1.5)."""

    threshold: float = PAIRS_THRESHOLD  # a pair is settled when its posterior is this sure (0.725)
    pilot_waves: int = 0  # first waves at fixed places (0: every HIT starts at one place)
    gold_first: bool = True  # the gold HITs are handed out before the others
    scope: str = "pair"  # "hit": a HIT's next place asks all its pairs while any is open
    crowd: bool = True  # a pair settles only where its crowd leans the same way (open_pairs' `crowd`)
    triage: bool = True  # the pairs the judge decides at its cross-fitted confidence leave the crowd's HITs
    systems: str = "cap"  # triage aware of systems (hits.allocation.system_triage.RULES)
    system_setting: float = 1.5  # its setting: recalibrate's strength, gate's needed accuracy, cap's factor
    threshold_rule: str = "constant"  # "pilot": the threshold from the gold round (module docstring)
    margin: float = 0.05  # pilot: fixed places' gold accuracy less this (floor: `threshold`)
    triage_when: str = "always"  # "spammers": the triage only if the gold round shows workers at chance
    # spammers: the share of gold-judged workers stopped that turns it on (the app's TRIAGE_SPAMMER_SHARE,
    # chosen of 0.05 / 0.1 / 0.2 on documents 0-49, seeds 0-7, bench/RESULTS.md)
    spammer_share: float = TRIAGE_SPAMMER_SHARE


PAIRS = PairSettings()


def wave_threshold(run: Run, pairs: PairSettings, fixed: int) -> float:
    """The threshold of this wave: the constant, or (pilot) from the gold pairs bought so far with all
    their `fixed` answers, read with every worker's answer (a stopped one's too: fixed places keep them)."""
    if pairs.threshold_rule == "constant":
        return pairs.threshold
    c = run.crowd
    items, _, said = run.rows(counted_only=False)
    gold = c.gold[c.hit_of[items]]
    label, counted = first_majority(items[gold], said[gold], fixed, c.truth.size)
    full = counted >= fixed
    correct = int((label[full] == c.truth[full]).sum())
    return pilot_pair_threshold(correct, int(full.sum()), pairs.margin, floor=pairs.threshold)


def stopped_share(stopped: np.ndarray, evidence, after: int) -> float | None:
    """The share of the workers with at least `after` judgments on gold whom the gold-anchored stop has
    stopped (None: no worker has that many yet). `evidence` is a refit's, of counted rows only, so it
    leaves out the workers stopped before; each of them had `after` gold judgments when stopped."""
    if evidence is None:
        return None
    enough = evidence.workers[np.asarray(evidence.gold_judged) >= after]
    counted = np.zeros(stopped.size, dtype=bool)
    counted[enough] = True
    judged = counted | stopped
    return float(stopped[judged].mean()) if judged.any() else None


def hold_triage(run: Run, pairs: PairSettings) -> None:
    """triage_when "spammers": every pair to the crowd until the gold round is bought (`decide_triage`)."""
    if pairs.triage_when == "always" or run.machine is None:
        return
    run.held = ~run.asked  # type: ignore[attr-defined]  # the pairs the triage would decide
    run.asked = run.open = np.ones(run.crowd.truth.size, dtype=bool)
    run.triage["on"] = None  # type: ignore[attr-defined]


def decide_triage(run: Run, pairs: PairSettings, wave: int, wave_of: np.ndarray, evidence, after: int) -> None:
    """At the first wave after every gold HIT was handed out: the triage on for the HITs not handed out
    yet if the stop has stopped at least `spammer_share` of the gold-judged workers (`hold_triage`)."""
    held = getattr(run, "held", None)
    c = run.crowd
    if held is None or run.triage["on"] is not None or wave_of[c.gold].max(initial=-1) >= wave:  # type: ignore[attr-defined]
        return
    share = stopped_share(run.stopped, evidence, after)
    on = triage_on(share, pairs.spammer_share)  # the app's rule (hits.allocation.policy)
    run.triage.update(on=on, stopped_share=share, wave=wave)  # type: ignore[attr-defined]
    if on:
        later = (wave_of >= wave)[c.hit_of]
        run.asked = run.open = ~(held & later)
    else:
        run.machine = None


def decide_pairs(run: Run, hits: np.ndarray, sens, spec, pairs: PairSettings, threshold: float, fixed: int) -> None:
    """pairs+judge within a wave: while a HIT has an open pair (hits.allocation.policy.open_pairs:
    judged too few times, or its posterior with the judge's calibrated probability as its prior
    not settled at `threshold`), one more place showing only its open pairs (`fixed`: the places
    every pair gets once the gold guard fired)."""
    c = run.crowd
    while True:
        items, workers, said = run.rows()
        p = pair_posteriors(items, said, sens[workers], spec[workers], run.prior, c.truth.size)
        judged = np.bincount(items, minlength=c.truth.size)
        crowd = pair_posteriors(items, said, sens[workers], spec[workers], 0.5, c.truth.size) if pairs.crowd else None
        least = 1 if run.fell_back is None else min(fixed, run.policy.max_places)  # the gold guard fired
        run.open = run.asked & open_pairs(p, judged, threshold, min_judged=least, crowd=crowd)
        wants = np.logical_or.reduceat(run.open, c.starts)
        if pairs.scope == "hit":  # the whole HIT again while any of its pairs is open
            run.open = run.asked & wants[c.hit_of]
        more = [
            h
            for h in hits
            if not c.gold[h]
            and wants[h]
            and run.taken[h].sum() == run.places[h]  # a place no one can take stays open
            and run.places[h] < run.policy.max_places
        ]
        if not more:
            return
        run.places[more] += 1
        run.fill(np.array(more))
