"""A new batch's plan: the HITs it will hold (which summaries, which of them gold, how many ACUs each
carries after its triage) and what they cost at their most places, computed once.

`create_batch` writes its HITs from the plan (and triages them with hits.triage.carry_undecided, which
leaves them as the plan's `kept`); the new batch form's live estimate prices the same plan without
writing anything (`hits.services.estimate`). Both prices come from `price`, which the draft's
`cost_estimate` reads its HIT rows through, so the figure the form shows is the one publishing checks
against the budget."""

import random
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count

from annotation.models import ACU, Summary
from annotation.services.authoring import usable_for_crowd
from hits.allocation.policy import ADAPTIVE_KINDS, TRIAGE_ALWAYS
from hits.batch_fields import BatchError, BatchSpec
from hits.gold import known_answers
from hits.models import JudgeRun
from hits.money import Bucket, cents
from hits.provider_interface import get_provider
from hits.services import rating_batches
from hits.triage import decided_counts


@dataclass(frozen=True)
class PlannedHIT:
    summary_id: int
    acu_count: int  # the ACUs it carries (a triaged HIT: those its judge run left to the crowd); rating: summaries
    gold: dict[str, bool] | None = None  # a gold HIT's known answers {ACU id: present}
    triaged: bool = False  # carries only the ACUs the judge run has not decided (hits.triage.carry_undecided)


@dataclass(frozen=True)
class Plan:
    hits: list[PlannedHIT]  # as created, one per chosen summary, every ACU
    kept: list[PlannedHIT]  # after the triage (a `pairs` batch with triage_confidence), else `hits`
    judge_run: JudgeRun | None = None  # a `pairs` batch's prior, and its triage's source with a confidence

    def counts(self) -> Counter:
        """{(ACU count, gold): HITs} of the draft (after the triage): what `price` reads."""
        return Counter((h.acu_count, h.gold is not None) for h in self.kept)


@dataclass(frozen=True)
class Places:
    """The most places a batch's HIT can get: the assignments per HIT, or an adaptive batch's maximum
    on a HIT that is not gold (gold HITs keep the assignments)."""

    assignments: int
    adaptive_max: int | None = None  # None: fixed allocation

    @classmethod
    def of_spec(cls, spec: BatchSpec) -> "Places":
        policy = spec.policy
        return cls(spec.assignments, policy.max_places if policy.kind in ADAPTIVE_KINDS else None)

    @classmethod
    def of_batch(cls, batch) -> "Places":
        adaptive = batch.allocation in ADAPTIVE_KINDS
        return cls(batch.assignments_per_hit, batch.allocation_max if adaptive else None)

    def most(self, gold: bool) -> int:
        return self.assignments if gold or self.adaptive_max is None else self.adaptive_max

    @property
    def per_hit(self) -> int:
        """The places the provider's fee is charged at (MTurk's rate depends on it)."""
        return self.assignments if self.adaptive_max is None else self.adaptive_max


@dataclass
class BucketCost:
    label: str
    reward: Decimal
    hits: int
    assignments: int
    rewards: Decimal
    fees: Decimal

    @property
    def total(self) -> Decimal:
        return self.rewards + self.fees


def price(owner, buckets: list[Bucket], counts: Counter, places: Places) -> dict:
    """HITs, assignments (their most places) and cost by pay bucket, the provider's fees included, of
    HITs counted as {(ACU count, gold): HITs} of `owner` (a batch, or the spec of a new one); a HIT no
    bucket holds is not counted. Each place costs its bucket's reward and the provider's fee on it
    (MTurk charges per assignment), unless the provider pays per session of several HITs
    (`CrowdProvider.session_price`, Prolific): then the totals are its sessions' rewards and fees,
    what approving every session of the batch writes to the ledger, and `sessions` says how. The
    provider's costs beyond the HITs' places (`CrowdProvider.extra_costs`: a Prolific screening study)
    are `extras`, each counted in the totals."""
    provider = get_provider(owner.provider)
    rows = []
    rewards: Counter = Counter()
    acus = 0
    for b in buckets:
        held = {key: n for key, n in counts.items() if b.holds(key[0])}
        n_places = sum(n * places.most(gold) for (_, gold), n in held.items())
        fee_each = provider.fee(b.reward, places.per_hit)
        rows.append(
            BucketCost(
                b.label, b.reward, sum(held.values()), n_places, cents(b.reward * n_places), cents(fee_each * n_places)
            )
        )
        rewards[b.reward] += sum(held.values())
        acus += sum(acu_count * n for (acu_count, _), n in held.items())
    total_places = sum(r.assignments for r in rows)
    sessions = provider.session_price(owner, dict(rewards), acus, total_places) if rows else None
    if sessions is not None:
        reward_total, fees = cents(sessions.rewards), cents(sessions.fees)
    else:
        reward_total = sum((r.rewards for r in rows), Decimal("0.00"))
        fees = sum((r.fees for r in rows), Decimal("0.00"))
    extras = provider.extra_costs(owner, sessions) if rows else []
    reward_total += sum((cents(e.rewards) for e in extras), Decimal("0.00"))
    fees += sum((cents(e.fees) for e in extras), Decimal("0.00"))
    return {
        "buckets": rows,
        "hits": sum(r.hits for r in rows),
        "assignments": total_places,
        "rewards": reward_total,
        "fees": fees,
        "total": reward_total + fees,
        "sessions": sessions,
        "extras": extras,
        "provider": provider.label,
    }


def plan(dataset, spec: BatchSpec, *, systems=None, references=None, documents=None, seed: int = 0) -> Plan:
    """The HITs of a new batch with these settings and choices (reads only; BatchError when it would
    have none): one per summary of the chosen systems (all when None) with ACUs of the chosen approved
    references (all when None), a share of them gold (drawn with `seed`); a rating batch (`spec.rating`):
    one per chosen document (`documents`; None: all), counting the summaries it asks about.

    A `pairs` batch with `spec.triage_confidence`: its judge run decides the pairs of the non-gold HITs
    it is sure of (hits.triage), each such HIT carries the rest and a HIT left with none is not made;
    the gold HITs keep every ACU. With `spec.triage_when` "spammers" the triage is held back and may never
    happen (hits.services.triage_when): every HIT is planned and priced whole."""
    if spec.rating:
        anchors = rating_batches.example_anchors(dataset, spec.protocol, systems, documents)
        hits = [PlannedHIT(s.pk, n) for s, n in anchors]
        return Plan(hits, hits)
    run = prior_run(dataset, spec.allocation_judge_run)
    summaries = _chosen_summaries(dataset, systems, references)
    gold = _gold_answers(dataset, [s for s, _ in summaries], spec.gold_share, seed) if spec.gold_share > 0 else {}
    hits = [PlannedHIT(s, n, gold.get(s)) for s, n in summaries]
    if run is None or spec.triage_confidence is None or spec.triage_when != TRIAGE_ALWAYS:
        return Plan(hits, hits, run)  # no triage, or one held back (it may never happen): every HIT whole
    return Plan(hits, _triaged(hits, run, spec.triage_confidence), run)


def _triaged(hits: list[PlannedHIT], run: JudgeRun, confidence: float) -> list[PlannedHIT]:
    """The HITs after the triage, as `carry_undecided` leaves them: a non-gold HIT carries the ACUs of its
    document the run has not decided (`decided_counts`, one query), a HIT left with none is not made."""
    plain = [h.summary_id for h in hits if h.gold is None]
    decided = decided_counts(run, confidence, plain)
    kept = [
        h if h.gold is not None else PlannedHIT(h.summary_id, h.acu_count - decided.get(h.summary_id, 0), triaged=True)
        for h in hits
    ]
    kept = [h for h in kept if h.acu_count > 0]
    if plain and not any(h.triaged for h in kept):
        raise BatchError(
            f"At c = {confidence:g} judge run {run.pk} decides every pair of the non-gold HITs: there is nothing "
            "for the crowd. Choose a higher confidence."
        )
    return kept


def prior_run(dataset, run_id: int | None) -> JudgeRun | None:
    """A `pairs` batch's prior (hits.allocation.service.pair_priors): a finished, calibrated judge
    run of the dataset; None when none is chosen."""
    if run_id is None:
        return None
    run = JudgeRun.objects.filter(pk=run_id, batch__dataset=dataset).first()
    if run is None:
        raise BatchError(f"Judge run {run_id} is no run of the dataset {dataset.name}.")
    if not run.has_probabilities:
        raise BatchError(f"Judge run {run_id} has not finished with calibrated probabilities: it cannot be a prior.")
    return run


def _chosen_summaries(dataset, systems, references) -> list[tuple[int, int]]:
    """(summary id, ACU count) of the summaries (of the chosen systems, all when none) of the chosen
    approved references (all when None) that have ACUs, in document and system order."""
    approved = usable_for_crowd(dataset)
    if references is not None:
        wanted = {r.pk for r in references}
        not_ok = wanted - set(approved.filter(pk__in=wanted).values_list("pk", flat=True))
        if not_ok:
            raise BatchError(f"{len(not_ok)} of the chosen references are not approved yet.")
        approved = approved.filter(pk__in=wanted)
    summaries = Summary.objects.filter(document__reference__in=approved)
    if systems:
        summaries = summaries.filter(system__in=systems)
    acu_counts = dict(
        ACU.objects.filter(reference__in=approved).values_list("reference_id").annotate(n=Count("pk")).order_by()
    )
    rows = summaries.order_by("document__position", "system__name").values_list("pk", "document__reference")
    chosen = [
        (summary_id, acu_counts[reference_id]) for summary_id, reference_id in rows if acu_counts.get(reference_id)
    ]
    if not chosen:
        raise BatchError("No summary of an approved reference with ACUs matches this choice.")
    return chosen


def _gold_answers(dataset, summary_ids: list[int], share: float, seed: int) -> dict[int, dict[str, bool]]:
    """A share of the summaries with known answers (drawn with `seed`) as gold: {summary id: {ACU id: label}}."""
    answers = known_answers(dataset, summary_ids)
    candidates = [s for s in summary_ids if s in answers]
    rng = random.Random(seed)
    chosen = rng.sample(candidates, min(len(candidates), round(share * len(summary_ids))))
    return {sid: {str(a): v for a, v in answers[sid].items()} for sid in chosen}
