"""Expert rounds: authors and leads label summaries' ACUs on the crowd's task page, in house,
unpaid, with no provider.

An expert round is a batch of kind `expert` whose HITs are the summaries chosen to become gold.
Its work is stored exactly as imported expert labels are: one approved assignment per expert
and summary, by a worker of provider `expert` named "<dataset>/<username>" (an imported
annotator is "<dataset>/<annotator>"). So hits.gold reads both alike, and every reader of the
gold (qualification tests, gold HITs, worker quality, the judges' expert target) uses labels
made here with no code of its own. No pay bucket, reward 0, and a submission is approved as it
is stored (hits.services.submission): no approval, so no ledger row, is ever written.
"""

import random
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import ACU, Reference, Summary
from annotation.services import authoring
from config.roles import AUTHOR, LEAD, user_roles
from hits import versions
from hits.gold import disagreements, expert_judgments
from hits.models import HIT, Assignment, Batch, ExpertDecision, Worker
from hits.release import release_overdue
from hits.selectors import expert_external_id
from hits.services import handout

MAX_SUMMARIES = 200
MAX_EXPERTS = 3
LIFETIME = timedelta(days=3650)  # an expert round stays open until the lead stops it
TASK_MINUTES = 60  # a summary held longer goes back to the other experts


class ExpertError(Exception):
    """A refused expert-round action, with a message for the person."""


def round_name(batch: Batch) -> str:
    """An expert round's name: its dataset's, its id and when it was made (the site's time), e.g.
    "cnndm: expert labels 12 (2026-12-07 14:03)". Unique by its id, as a crowd batch's
    (`hits.services.batches.default_name`): two rounds made in the same minute had the same name."""
    return f"{batch.dataset.name}: expert labels {batch.pk} ({timezone.localtime(batch.created_at):%Y-%m-%d %H:%M})"


def _candidates(dataset) -> list[tuple[int, int, int]]:
    """(summary, document, system) of summaries an expert can label: of an approved reference with
    ACUs, without expert labels yet and not in an open expert round."""
    with_acus = ACU.objects.filter(reference__document__dataset=dataset).values("reference_id")
    labelled = set(expert_judgments(dataset).values_list("assignment__hit__summary_id", flat=True).distinct())
    queued = set(
        HIT.objects.filter(batch__dataset=dataset, batch__kind=Batch.Kind.EXPERT)
        .exclude(batch__status=Batch.Status.STOPPED)
        .values_list("summary_id", flat=True)
    )
    rows = Summary.objects.filter(
        document__dataset=dataset,
        document__reference__status=Reference.Status.APPROVED,
        document__reference__in=with_acus,
    ).values_list("pk", "document_id", "system_id")
    return [r for r in rows.order_by("pk") if r[0] not in labelled and r[0] not in queued]


def labelable_count(dataset) -> int:
    """How many summaries an expert round could take now (`_candidates`)."""
    return len(_candidates(dataset))


def choose_summaries(dataset, count: int, *, seed: int = 0) -> list[int]:
    """`count` summaries spread over the documents and systems: each pick takes a summary of a
    document and a system picked least so far (ties broken at random with `seed`)."""
    rng = random.Random(seed)
    left = _candidates(dataset)
    rng.shuffle(left)
    per_document: dict[int, int] = {}
    per_system: dict[int, int] = {}
    chosen: list[int] = []
    while left and len(chosen) < count:
        best = min(range(len(left)), key=lambda i: (per_document.get(left[i][1], 0), per_system.get(left[i][2], 0)))
        summary, document, system = left.pop(best)
        chosen.append(summary)
        per_document[document] = per_document.get(document, 0) + 1
        per_system[system] = per_system.get(system, 0) + 1
    return chosen


def create_round(dataset, *, count, experts: int = 2, by=None, seed: int | None = None) -> Batch:
    """An open expert round of `count` summaries (chosen by `choose_summaries`), each to be
    labelled by `experts` authors or leads (two by default: gold resting on one unchecked person
    is not gold; where they disagree a lead decides, `decide`); raises ExpertError with a clear
    message."""
    try:
        count, experts = int(count), int(experts)
    except (TypeError, ValueError):
        raise ExpertError("Give the number of summaries as a whole number, e.g. 10.") from None
    if not 1 <= count <= MAX_SUMMARIES:
        raise ExpertError(f"Label between 1 and {MAX_SUMMARIES} summaries at a time.")
    if not 1 <= experts <= MAX_EXPERTS:
        raise ExpertError(f"Each summary is labelled by 1 to {MAX_EXPERTS} experts.")
    summaries = choose_summaries(dataset, count, seed=secure_seed() if seed is None else seed)
    if not summaries:
        raise ExpertError(
            f"{dataset.name} has no summary left to label: experts label summaries of approved references "
            "with ACUs (write and proofread them first) that have no expert labels yet."
        )
    acu_counts = dict(
        ACU.objects.filter(reference__document__summaries__in=summaries)
        .values_list("reference__document__summaries")
        .annotate(n=Count("pk"))
        .order_by()
    )
    now = timezone.now()
    with transaction.atomic():
        batch = Batch.objects.create(
            dataset=dataset,
            name="",  # named once it has its id (`round_name`)
            kind=Batch.Kind.EXPERT,
            provider=Worker.Provider.EXPERT,
            status=Batch.Status.PUBLISHED,
            assignments_per_hit=experts,
            lifetime_seconds=int(LIFETIME.total_seconds()),
            assignment_duration_seconds=TASK_MINUTES * 60,
            auto_approve_seconds=0,
            created_by=by,
            published_at=now,
            expires_at=now + LIFETIME,
            title="Label which facts a summary contains (expert round)",
        )
        batch.name = round_name(batch)
        batch.save(update_fields=["name"])
        HIT.objects.bulk_create(
            [
                HIT(
                    batch=batch,
                    summary_id=sid,
                    max_assignments=experts,
                    open_places=experts,
                    acu_count=acu_counts.get(sid, 0),
                    turn=i / len(summaries),
                )
                for i, sid in enumerate(summaries)
            ]
        )
        versions.create_stripes(dataset.pk, batch.pk)
    return batch


def mark_expert(batch: Batch) -> Batch:
    """Turn a draft crowd batch into an expert round: its summaries (the lead chose them on the
    batch form: documents, systems) are labelled by authors and leads instead, unpaid, by as many
    experts each as it had assignments (at most MAX_EXPERTS). No pay bucket, reward 0, no
    qualification test or gold HITs, no provider; it opens at once."""
    now = timezone.now()
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch.pk)
        if batch.kind != Batch.Kind.CROWD or batch.status != Batch.Status.DRAFT:
            raise ExpertError("Only a draft crowd batch can become an expert round; this one is not a draft.")
        if batch.protocol:  # its HITs ask for ratings, not ACU labels (hits.ratings)
            raise ExpertError("A rating batch cannot become an expert round: expert labels are ACU labels.")
        experts = min(batch.assignments_per_hit, MAX_EXPERTS)
        batch.buckets.all().delete()
        batch.hits.update(
            reward=0, gold_answers=None, max_assignments=experts, open_places=experts, extra_places=0, priority=0
        )
        Batch.objects.filter(pk=batch.pk).update(
            kind=Batch.Kind.EXPERT,
            provider=Worker.Provider.EXPERT,
            status=Batch.Status.PUBLISHED,
            assignments_per_hit=experts,
            allocation="fixed",
            qualification_test=None,
            gold_share=0,
            budget=None,
            provider_config={},
            lifetime_seconds=int(LIFETIME.total_seconds()),
            assignment_duration_seconds=TASK_MINUTES * 60,
            auto_approve_seconds=0,
            published_at=now,
            expires_at=now + LIFETIME,
            priority=0,
        )
        versions.create_stripes(batch.dataset_id, batch.pk)
    batch.refresh_from_db()
    return batch


def secure_seed() -> int:
    return random.SystemRandom().randrange(2**31)


def _expert_id(user, dataset) -> str:
    """The external id of a user's expert labels in a dataset (hits.selectors.expert_external_id)."""
    return expert_external_id(dataset.name, user.username)


def expert_worker(user, dataset) -> Worker:
    """The user's expert-label worker of this dataset ("<dataset>/<username>", provider
    `expert`), made on first use (get_or_create takes a parallel first request's row)."""
    worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.EXPERT, external_id=_expert_id(user, dataset))
    return worker


def owns(user, assignment: Assignment) -> bool:
    """Whether `user` (a signed-in lead or author) is the expert an expert-round assignment was
    handed to. Expert labels are gold: a round's task opens and submits only for its owner's
    session, never for whoever holds the link (hits.services.submission asks this)."""
    if user is None or not user.is_authenticated or not user_roles(user) & {LEAD, AUTHOR}:
        return False
    row = Assignment.objects.select_related("hit__batch__dataset", "worker").filter(pk=assignment.pk).first()
    if row is None or row.hit.batch.kind != Batch.Kind.EXPERT or not row.worker.is_expert:
        return False
    return row.worker.external_id == _expert_id(user, row.hit.batch.dataset)


def next_task(user, batch: Batch) -> Assignment:
    """Resume the user's open summary of this round or give them the next one (the crowd's
    handout, for this round only); raises handout.NoWork with the reason."""
    if batch.kind != Batch.Kind.EXPERT:
        raise handout.NoWork("This is not an expert round.")
    if batch.status != Batch.Status.PUBLISHED:
        raise handout.NoWork("This expert round is closed.")
    worker = expert_worker(user, batch.dataset)
    open_here = Assignment.objects.filter(
        worker=worker, hit__batch=batch, status=Assignment.Status.ASSIGNED, deadline__gt=timezone.now()
    ).first()
    if open_here is not None:
        return open_here
    try:
        return handout.next_assignment(worker, batch)
    except handout.NoWork:
        raise handout.NoWork("Every summary of this round is labelled or being labelled. Thank you!") from None


def round_progress(batch: Batch, user=None) -> dict:
    """Summaries labelled (every expert place done), places done, and the user's own count."""
    done = Assignment.objects.filter(hit__batch=batch, status__in=Assignment.COUNTED)
    hits = batch.hits.count()
    finished = done.values("hit_id").annotate(n=Count("pk")).filter(n__gte=batch.assignments_per_hit).order_by().count()
    mine = 0
    if user is not None:
        mine = done.filter(worker__external_id=_expert_id(user, batch.dataset)).count()
    return {
        "summaries": hits,
        "labelled": finished,
        "left": hits - finished,
        "mine": mine,
        "percent": round(100 * finished / hits) if hits else 0,
    }


def stop_round(batch: Batch) -> Batch:
    """Close an expert round: nothing more is handed out; the labels made stay gold (places
    past their deadline go back now, as at any stop)."""
    Batch.objects.filter(pk=batch.pk, kind=Batch.Kind.EXPERT).update(status=Batch.Status.STOPPED)
    release_overdue(batch_id=batch.pk)
    batch.refresh_from_db()
    return batch


def referee_candidates(dataset):
    """Who a lead may name a round's third expert: the dataset's own authors (who write or
    proofread its references), or, for a dataset with none (imported), every active author."""
    own = authoring.dataset_authors(dataset)
    return own if own.exists() else authoring.authors()


def referee(batch: Batch):
    """The round's third expert (a user), who decides its disagreements as a lead does; None
    when only leads decide. An expert round has no provider: its provider_config holds it."""
    user_id = (batch.provider_config or {}).get("referee")
    return get_user_model().objects.filter(pk=user_id, is_active=True).first() if user_id else None


def name_referee(batch: Batch, user_id: int | None) -> Batch:
    """Name (or, with None, clear) the round's third expert; raises ExpertError unless they are
    one of `referee_candidates`."""
    config = {k: v for k, v in (batch.provider_config or {}).items() if k != "referee"}
    if user_id is not None:
        if not referee_candidates(batch.dataset).filter(pk=user_id).exists():
            raise ExpertError(
                f"A third expert is one of the authors of {batch.dataset.name}; choose one from the list."
            )
        config["referee"] = user_id
    Batch.objects.filter(pk=batch.pk, kind=Batch.Kind.EXPERT).update(provider_config=config)
    batch.refresh_from_db()
    return batch


def may_review(user, batch: Batch) -> bool:
    """Whether `user` decides the round's disagreements: a lead, or the round's third expert."""
    roles = user_roles(user) if user is not None and user.is_authenticated else set()
    if LEAD in roles:
        return True
    chosen = referee(batch)
    return AUTHOR in roles and chosen is not None and chosen.pk == user.pk


def _labelled_by(user, batch: Batch) -> set[int]:
    """The summaries of the round `user` labelled as one of its experts."""
    return set(
        Assignment.objects.filter(hit__batch=batch, worker__external_id=_expert_id(user, batch.dataset)).values_list(
            "hit__summary_id", flat=True
        )
    )


def _second_people(user, batch: Batch) -> set[str]:
    """The expert ids of the people other than `user` who could decide the round's disagreements:
    the other active leads, the round's third expert and whoever a lead may name one
    (`referee_candidates`)."""
    leads = get_user_model().objects.filter(Q(groups__name=LEAD) | Q(is_superuser=True), is_active=True)
    people = set(leads.values_list("username", flat=True))
    people |= set(referee_candidates(batch.dataset).values_list("username", flat=True))
    chosen = referee(batch)
    if chosen is not None:
        people.add(chosen.username)
    people.discard(user.username)
    return {expert_external_id(batch.dataset.name, name) for name in people}


def _sides(batch: Batch, summary_ids) -> dict[int, set[str]]:
    """Per summary of the round, the expert ids of the experts it was handed to (its sides)."""
    sides: dict[int, set[str]] = {}
    rows = Assignment.objects.filter(hit__batch=batch, hit__summary_id__in=list(summary_ids)).values_list(
        "hit__summary_id", "worker__external_id"
    )
    for summary_id, external_id in rows:
        sides.setdefault(summary_id, set()).add(external_id)
    return sides


def decides_alone(user, batch: Batch, summary_ids) -> dict[int, bool]:
    """Per summary `user` labelled in the round, whether they may still decide its disagreement: a
    lead only, and only when no second person could (every other lead, the third expert and every
    author a lead may name labelled it too, or there is none). A summary `user` did not label is
    not in the answer; a third expert never decides one they labelled (see docs/leads.md)."""
    mine = _labelled_by(user, batch) & set(summary_ids)
    if not mine:
        return {}
    if LEAD not in user_roles(user):
        return dict.fromkeys(mine, False)
    others = _second_people(user, batch)
    return {sid: not (others - sides) for sid, sides in _sides(batch, mine).items()}


def review_items(batch: Batch, user=None) -> list[dict]:
    """The round's summaries whose experts disagree on some ACU and no lead or third expert has
    decided yet: each with its summary, reference sentences and the split ACUs with their votes.
    Not those `user` labelled themselves (a second person decides those), except where a lead is the
    only one who can (`decides_alone`: the item says so)."""
    split = disagreements(batch.dataset, batch.hits.values_list("summary_id", flat=True))
    alone = decides_alone(user, batch, split) if user is not None else {}
    split = {sid: acus for sid, acus in split.items() if alone.get(sid, True)}
    items = []
    for summary in Summary.objects.filter(pk__in=split).select_related("document__reference", "system"):
        acus = ACU.objects.filter(pk__in=split[summary.pk]).order_by("sentence__position", "position")
        rows = [{"acu": a, "present": split[summary.pk][a.pk][0], "votes": split[summary.pk][a.pk][1]} for a in acus]
        sentences = summary.document.reference.sentences.order_by("position").values_list("text", flat=True)
        items.append(
            {"summary": summary, "rows": rows, "sentences": list(sentences), "alone": alone.get(summary.pk, False)}
        )
    return items


def left_to_others(batch: Batch, user) -> int:
    """How many of the round's disagreements wait for someone other than `user`, who labelled them."""
    split = disagreements(batch.dataset, batch.hits.values_list("summary_id", flat=True))
    return sum(1 for may in decides_alone(user, batch, split).values() if not may)


def review_count(batch: Batch) -> int:
    """How many of the round's summaries wait for a lead's decision."""
    return len(disagreements(batch.dataset, batch.hits.values_list("summary_id", flat=True)))


def decide(batch: Batch, summary_id: int, labels: dict[int, bool], by) -> int:
    """A lead's or the third expert's (`may_review`) labels for the split ACUs of a summary of
    the round (`review_items`); the summary becomes gold once every split ACU is decided.
    Returns how many were decided; raises ExpertError for someone else, for a person who labelled
    the summary (a disagreement is not settled by one of its sides; a lead may only where no
    second person could, `decides_alone`) and for an ACU that is not split in this round's summary."""
    if not may_review(by, batch):
        raise ExpertError("Only a lead or the round's third expert decides its disagreements.")
    if not decides_alone(by, batch, [summary_id]).get(summary_id, True):
        if LEAD not in user_roles(by):
            raise ExpertError("You labelled this summary in this round: a lead decides where its experts disagree.")
        raise ExpertError(
            "You labelled this summary in this round: a second person decides where its experts disagree. "
            "Ask another lead, or name a third expert (an author of the dataset) on the round page."
        )
    split = disagreements(batch.dataset, [summary_id]).get(summary_id, {})
    if not batch.hits.filter(summary_id=summary_id).exists() or not split:
        raise ExpertError("This summary has no disagreement left to decide in this round.")
    unknown = set(labels) - set(split)
    if unknown:
        raise ExpertError("The decision names facts the experts did not disagree on; reload the review page.")
    with transaction.atomic():
        for acu_id, present in labels.items():
            ExpertDecision.objects.update_or_create(
                summary_id=summary_id, acu_id=acu_id, defaults={"present": present, "decided_by": by}
            )
    return len(labels)
