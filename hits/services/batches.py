"""Creating, pricing, publishing and stopping batches."""

from collections import Counter
from datetime import timedelta

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from hits import versions
from hits.allocation.policy import ADAPTIVE_KINDS, PAIRS, TRIAGE_ALWAYS
from hits.batch_fields import FIELDS, BatchError, BatchSpec
from hits.models import HIT, Batch, BatchRequest, JudgeRun, PayBucket
from hits.money import Bucket, batch_buckets, bucket_for, check_buckets, unpaid_counts
from hits.provider_interface import Capability, ProviderError, get_provider
from hits.ratings import PRIOR
from hits.release import release_overdue
from hits.selectors import tests_for_batches
from hits.services import batch_plan, rating_batches
from hits.services.money_budget import over_budget_message
from hits.triage import carry_undecided, check_triage_source, decided_pairs

NOT_PUBLISHABLE = "Only a crowd batch is published; this round holds {kind}."


class KeyReused(BatchError):
    """An idempotency key sent again with another request body."""


def create_batch_once(*, key: str | None, body_digest: str, created_by, **spec) -> tuple[Batch, bool]:
    """`create_batch` for a client that may send its request again (a retry after a timeout):
    with a `key`, the lead's first request with that key makes the batch and a repeat gets the
    same batch back, `(batch, False)`, instead of a second draft. The key is stored with the batch
    in one transaction: a request that failed made nothing and left no key, so its retry runs
    afresh. A repeat waits for a first request still running (the key's unique row) and then
    answers with its batch. The same key with another body (`body_digest`) is refused."""
    if key is None:
        return create_batch(created_by=created_by, **spec), True
    with transaction.atomic():
        request, made = BatchRequest.objects.get_or_create(
            created_by=created_by, key=key, defaults={"body_digest": body_digest}
        )
        if not made:
            if request.body_digest != body_digest:
                raise KeyReused(
                    f"The Idempotency-Key {key!r} was already used for another request body: "
                    "send a new key for a new batch, or the same body to get the batch it made."
                )
            return request.batch, False
        request.batch = create_batch(created_by=created_by, **spec)
        request.save(update_fields=["batch"])
        return request.batch, True


def bucket_hits(batch: Batch, bucket):
    """The batch's HITs whose ACU count falls in the bucket (a PayBucket or a Bucket)."""
    hits = batch.hits.filter(acu_count__gte=bucket.min_acus)
    return hits if bucket.max_acus is None else hits.filter(acu_count__lte=bucket.max_acus)


def default_name(batch: Batch) -> str:
    """The name of a batch the lead gave none: its dataset's, its id and when it was made (the site's
    time), e.g. "cnndm batch 12 (2026-12-07 14:03)". Unique by its id: two batches made in the same
    minute (or second) were both "cnndm batch 2026-12-07 14:03"."""
    return f"{batch.dataset.name} batch {batch.pk} ({timezone.localtime(batch.created_at):%Y-%m-%d %H:%M})"


@transaction.atomic
def create_batch(
    *,
    dataset,
    spec: BatchSpec | None = None,
    systems=None,
    references=None,
    documents=None,
    qualification_test=None,
    created_by=None,
    seed: int = 0,
) -> Batch:
    """A draft batch with one HIT per system summary of the chosen approved references, with the
    settings of `spec` (hits.batch_fields.BatchSpec, valid once built; default: the defaults). A
    rating batch (`spec.rating`): one HIT per chosen document (`documents`; None: all) instead,
    its ratings collected in the rating round `spec.rating_round` (hits.services.ratings).

    Adaptive allocation (hits/allocation/policy.py): each HIT (but gold HITs, which keep the
    assignments) starts with the minimum places; the assignments stay the fixed allocation the
    batch page compares its cost with. A `pairs` batch with `spec.triage_confidence`: its judge run
    decides the pairs of non-gold HITs it is sure of (`_triage`); a run marked "not for ranking" only
    with `spec.triage_allow_not_for_ranking`."""
    spec = spec or BatchSpec()
    policy = spec.policy
    if qualification_test is not None and not tests_for_batches(dataset).filter(pk=qualification_test.pk).exists():
        raise BatchError(
            f"The qualification test “{qualification_test.name}” belongs to another dataset and is not offered to "
            "its batches: its lead can tick “Offer to batches of other datasets” on its dataset's batches page."
        )
    buckets = list(spec.buckets)
    # the HITs (after `_triage`: the plan's `kept`), as the new batch form's live estimate counted them,
    # and the judge run the plan read (the prior; read once)
    plan = batch_plan.plan(dataset, spec, systems=systems, references=references, documents=documents, seed=seed)
    prior_run = plan.judge_run
    _check_paid(buckets, [h.acu_count for h in plan.hits])
    if prior_run is not None and spec.triage_confidence is not None:
        # a run "not for ranking" is refused unless the lead allowed it, as for a triage batch (then logged)
        check_triage_source(
            prior_run,
            spec.triage_confidence,
            allow_not_for_ranking=spec.triage_allow_not_for_ranking,
            override=f"tick “{FIELDS['triage_allow_not_for_ranking'].label}” (triage_allow_not_for_ranking)",
        )
    round_ = rating_batches.rating_round(dataset, spec.rating_round, spec.protocol, created_by) if spec.rating else None
    batch = Batch.objects.create(
        dataset=dataset,
        name=spec.name,  # none given: `default_name`, once the batch has its id
        provider=spec.provider,
        assignments_per_hit=spec.assignments,
        lifetime_seconds=int(spec.lifetime_hours * 3600),
        assignment_duration_seconds=int(spec.assignment_minutes * 60),
        auto_approve_seconds=int(spec.auto_approve_hours * 3600),
        qualification_test=qualification_test,
        gold_share=spec.gold_share,
        budget=spec.budget,
        provider_config=dict(spec.provider_config),
        created_by=created_by,
        allocation=policy.kind,
        allocation_min=policy.min_places,
        allocation_max=policy.max_places,
        allocation_threshold=policy.threshold,
        allocation_max_sd=policy.max_sd,
        allocation_judge_run=prior_run,
        triage_allow_not_for_ranking=spec.triage_allow_not_for_ranking,
        stop_after=spec.stop_after,
        protocol=spec.protocol if spec.rating else "",
        instructions=spec.instructions if spec.rating else "",
        rating_round=round_,
        # Prior's raters must not have seen the example's article or reference (on a Ref-free or
        # Ref-based page of the same examples): its HITs go out first (the lead may change it)
        priority=PRIOR_PRIORITY if spec.rating and spec.protocol == PRIOR else 0,
    )
    if not batch.name:
        batch.name = default_name(batch)
        batch.save(update_fields=["name"])
    if systems:
        batch.systems.set(systems)
    PayBucket.objects.bulk_create(
        [PayBucket(batch=batch, min_acus=b.min_acus, max_acus=b.max_acus, reward=b.reward) for b in buckets]
    )

    def first_places(gold: bool) -> int:
        return policy.min_places if policy.kind in ADAPTIVE_KINDS and not gold else spec.assignments

    HIT.objects.bulk_create(
        [
            HIT(
                batch=batch,
                summary_id=h.summary_id,
                max_assignments=first_places(h.gold is not None),
                open_places=first_places(h.gold is not None),
                acu_count=h.acu_count,  # a rating HIT: the summaries it asks about
                reward=bucket_for(buckets, h.acu_count).reward,
                gold_answers=h.gold,
                turn=i / len(plan.hits),
                priority=hit_priority(batch, h.gold is not None),
            )
            for i, h in enumerate(plan.hits)
        ],
        batch_size=2000,
    )
    if prior_run is not None and spec.triage_confidence is not None:
        _triage(batch, prior_run, spec.triage_confidence, spec.triage_when)
    return batch


def _triage(batch: Batch, run: JudgeRun, confidence: float, when: str = TRIAGE_ALWAYS) -> None:
    """A `pairs` batch's triage (hits/triage.py): the pairs its judge run is sure of at `confidence`
    leave its non-gold HITs (a HIT left with none is deleted, the others paid by the bucket of what
    they carry), which become the plan's `kept`, the HITs the live estimate priced (batch_plan.plan
    has refused a triage that leaves the crowd nothing); the gold HITs keep every ACU, their answers
    and their priority. Scores read the run's labels for the decided pairs (scoring/runs/triage.py).
    `when` "spammers": the run and confidence are recorded but nothing is carried yet (every HIT whole,
    as the plan priced it); the decision waits for the gold round (hits.services.triage_when)."""
    batch.triage_run, batch.triage_confidence, batch.triage_when = run, confidence, when
    batch.triage_state = "" if when == TRIAGE_ALWAYS else Batch.TriageState.PENDING
    batch.save(update_fields=["triage_run", "triage_confidence", "triage_when", "triage_state"])
    if batch.triage_state == Batch.TriageState.PENDING:
        return
    plain = list(batch.hits.filter(gold_answers__isnull=True).select_related("summary"))
    carry_undecided(batch, plain, decided_pairs(run, confidence))


def _check_paid(buckets: list[Bucket], acu_counts) -> None:
    """Every HIT is paid by a bucket: a HIT no bucket holds was left at its old reward (or, when
    the batch was made, refused with a server error)."""
    unpaid = unpaid_counts(buckets, acu_counts)
    if unpaid:
        counts = ", ".join(str(n) for n in unpaid[:10])
        raise BatchError(
            f"Pay buckets: no bucket pays the HITs of {counts} ACUs; end the last bucket open-ended "
            f"(as “21+ 0.55”) or make it reach {unpaid[-1]}."
        )


@transaction.atomic
def set_buckets(batch: Batch, buckets: list[Bucket]) -> None:
    """Replace a draft batch's pay buckets and reprice its HITs."""
    batch = Batch.objects.select_for_update().get(pk=batch.pk)
    if batch.status != Batch.Status.DRAFT:
        raise BatchError("Rewards can only change before the batch is published.")
    try:
        check_buckets(buckets)
    except ValueError as exc:
        raise BatchError(f"Pay buckets: {exc}.") from None
    _check_paid(buckets, batch.hits.values_list("acu_count", flat=True))
    batch.buckets.all().delete()
    PayBucket.objects.bulk_create(
        [PayBucket(batch=batch, min_acus=b.min_acus, max_acus=b.max_acus, reward=b.reward) for b in buckets]
    )
    for b in buckets:
        bucket_hits(batch, b).update(reward=b.reward)


def cost_estimate(batch: Batch) -> dict:
    """HITs, assignments and cost by pay bucket, the provider's fees included; an adaptive batch
    at its most places (what the budget check counts; gold HITs at the assignments per HIT),
    priced as the new batch form's live estimate prices its plan (batch_plan.price)."""
    # a `pairs` batch's follow-up HITs are places of their summary, which its first HIT's most places count
    first = batch.hits.filter(follow_up=0)
    counts: Counter = Counter()
    for gold in (True, False):
        rows = first.filter(gold_answers__isnull=not gold).values_list("acu_count").annotate(n=Count("pk"))
        counts.update({(acu_count, gold): n for acu_count, n in rows.order_by()})
    return batch_plan.price(batch, batch_buckets(batch), counts, batch_plan.Places.of_batch(batch))


def publish_refusal(batch: Batch) -> str | None:
    """Why the batch cannot be published (not a crowd batch, published already, no HITs, a draft over
    its budget), else None. `publish_batch` asks it under the batch's lock; a page or the API asks it
    before queuing the publication, so the lead hears it at once instead of a "publishing" that never
    comes."""
    if batch.kind != Batch.Kind.CROWD:
        return NOT_PUBLISHABLE.format(kind=batch.get_kind_display())
    if batch.status not in (Batch.Status.DRAFT, Batch.Status.PUBLISHING):
        return f"The batch is already {batch.get_status_display().lower()}."
    if not batch.hits.exists():
        return "The batch has no HITs."
    if batch.status == Batch.Status.DRAFT:
        return over_budget_message(batch, cost_estimate(batch)["total"])
    return None


def publish_batch(batch: Batch) -> Batch:
    """Hand the batch to its provider (or resume an interrupted publication).

    The batch is marked publishing first; the provider creates its HITs idempotently; only
    then is the batch published. A provider failure keeps the batch in "publishing" with
    the error for the lead, and publishing again finishes the rest.
    """
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch.pk)
        refused = publish_refusal(batch)
        if refused:
            raise BatchError(refused)
        batch.status = Batch.Status.PUBLISHING
        batch.save(update_fields=["status"])
        versions.create_stripes(batch.dataset_id, batch.pk)  # before any submission can race to create them
    provider = get_provider(batch.provider)
    try:
        provider.publish(batch)
    except (ProviderError, ValueError) as exc:
        message = f"{provider.label}: {exc}"
        Batch.objects.filter(pk=batch.pk).update(last_error=message)
        raise BatchError(message + " The batch stays in 'publishing'; publish again to resume.") from None
    now = timezone.now()
    Batch.objects.filter(pk=batch.pk).update(
        status=Batch.Status.PUBLISHED,
        published_at=now,
        expires_at=now + timedelta(seconds=batch.lifetime_seconds),
        last_error="",
    )
    batch.refresh_from_db()
    return batch


def publish_progress(batch: Batch) -> dict:
    """HITs created at the provider so far: MTurk creates one HIT per summary, one by one;
    other providers publish the whole batch at once (a Prolific study, in-house work)."""
    total = batch.hits.count()
    if batch.kind == Batch.Kind.CROWD and get_provider(batch.provider).supports(Capability.PER_HIT_PUBLISH):
        done = batch.hits.exclude(external_id="").count()
    else:
        done = 0 if batch.status in (Batch.Status.DRAFT, Batch.Status.PUBLISHING) else total
    return {"done": done, "total": total, "percent": round(100 * done / total) if total else 0}


def stop_batch(batch: Batch) -> Batch:
    """Stop handing out new work; submitted work can still be reviewed. Work held at the stop
    keeps its deadline (it may still be submitted, as at MTurk and Prolific); places already
    past their deadline go back now (hits.release), so the stopped batch's figures are final
    without waiting for the beat. Only a published (or publishing) crowd batch stops: any other is
    refused with its state, never told "Stopped" while nothing changed."""
    _require_state(batch, (Batch.Status.PUBLISHED, Batch.Status.PUBLISHING), "stopped")
    try:
        get_provider(batch.provider).stop(batch)
    except ProviderError as exc:
        Batch.objects.filter(pk=batch.pk).update(last_error=str(exc))
        raise BatchError(f"Could not stop the batch at the provider: {exc}") from None
    Batch.objects.filter(pk=batch.pk, status__in=[Batch.Status.PUBLISHED, Batch.Status.PUBLISHING]).update(
        status=Batch.Status.STOPPED
    )
    release_overdue(batch_id=batch.pk)
    batch.refresh_from_db()
    return batch


def _require_state(batch: Batch, states: tuple, done: str) -> None:
    """Refuse an action on a batch in a state it does not apply to, saying which state it is in."""
    if batch.kind != Batch.Kind.CROWD:
        raise BatchError(f"Only a crowd batch can be {done}; this round holds {batch.get_kind_display().lower()}.")
    if batch.status not in states:
        allowed = " or ".join(Batch.Status(s).label.lower() for s in states)
        raise BatchError(
            f"This batch is in state “{batch.get_status_display()}”: only a {allowed} batch can be {done}."
        )


PRIORITY_RANGE = (-9, 9)
PRIOR_PRIORITY = 1  # a Prior rating batch's priority at creation: above the default 0 of the others


def hit_priority(batch: Batch, gold: bool) -> int:
    """A HIT's place in the handout's fair order (`HIT.priority`, its first key): twice its batch's
    priority, so a higher-priority batch still comes first, plus 1 for a gold HIT of a `pairs` batch
    (issue 43: its gold goes out first, so the workers' gold evidence comes early)."""
    return 2 * batch.priority + (1 if gold and batch.allocation == PAIRS else 0)


def set_priority(batch: Batch, value) -> Batch:
    """The lead's priority for the in-house handout: published batches of one provider with a
    higher priority get the workers first; equal priorities (0, the default) take turns."""
    low, high = PRIORITY_RANGE
    try:
        priority = int(str(value).strip())
    except (TypeError, ValueError):
        raise BatchError(f"The priority must be a whole number from {low} to {high}.") from None
    if not low <= priority <= high:
        raise BatchError(f"The priority must be a whole number from {low} to {high}.")
    with transaction.atomic():
        Batch.objects.filter(pk=batch.pk).update(priority=priority)
        batch.priority = priority
        for gold in (False, True):
            hits = HIT.objects.filter(batch_id=batch.pk, gold_answers__isnull=not gold)
            hits.exclude(priority=hit_priority(batch, gold)).update(priority=hit_priority(batch, gold))
    batch.refresh_from_db()
    return batch


def extend_batch(batch: Batch, hours: float) -> Batch:
    """Keep the batch open `hours` longer from now (at the provider too): a published or stopped
    crowd batch (a draft's time starts when it is published)."""
    _require_state(batch, (Batch.Status.PUBLISHED, Batch.Status.STOPPED), "extended")
    provider = get_provider(batch.provider)
    if provider.supports(Capability.EXTEND):
        try:
            provider.extend(batch, hours)
        except ProviderError as exc:
            raise BatchError(f"Could not extend the batch at the provider: {exc}") from None
    Batch.objects.filter(pk=batch.pk).update(
        expires_at=timezone.now() + timedelta(hours=hours),
        status=Batch.Status.PUBLISHED if batch.status == Batch.Status.STOPPED else batch.status,
    )
    batch.refresh_from_db()
    return batch
