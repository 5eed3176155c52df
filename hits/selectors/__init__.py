"""Reads of the crowd side (selectors never write): which judgments count, a dataset's counts.
The figures a lead reads of batches (progress, places left, spend, budget left) are in `figures`.

"Which judgments count" is written here once: those of assignments that are submitted or
approved (`Assignment.COUNTED`), confirmed by their provider, by workers the lead has not
excluded, and not stopped in the assignment's batch (a stop applies to that batch only). Scores, exports, gold answers and the lead's answer view all read them through
`counted_judgments`.
"""

from django.db.models import Case, Count, Exists, F, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Concat
from django.utils import timezone

from annotation.models import ACU, Dataset, Document, Reference, Summary, System
from hits.collusion import CollusionFlag
from hits.models import Assignment, Batch, Judgment, QualificationTest, Worker, WorkerEstimate


def counted(prefix: str = "", *, include_excluded: bool = False) -> Q:
    """The rule, as a filter on assignments (`prefix`: the path to the assignment, e.g. "assignment__")."""
    rule = Q(**{f"{prefix}status__in": Assignment.COUNTED, f"{prefix}confirmed": True})
    if not include_excluded:
        rule = rule & Q(**{f"{prefix}worker__excluded": False}) & Q(~Exists(_stopped_in_batch(prefix)))
    return rule


def _stopped_in_batch(prefix: str) -> QuerySet[WorkerEstimate]:
    """The stop of the assignment's worker in the assignment's batch (hits.allocation.service.stop_at_chance)."""
    return WorkerEstimate.objects.filter(
        batch_id=OuterRef(f"{prefix}hit__batch_id"), worker_id=OuterRef(f"{prefix}worker_id"), stopped_at__isnull=False
    )


def stopped_judgment_ids(dataset, batch=None) -> list[int]:
    """Ids of the judgments that a stop leaves out: those of each stopped worker in the batch that
    stopped them (readers that load excluded workers' judgments too mark these as left out)."""
    stops = WorkerEstimate.objects.filter(batch__dataset=dataset, stopped_at__isnull=False)
    if batch is not None:
        stops = stops.filter(batch=batch)
    pairs = list(stops.values_list("batch_id", "worker_id"))
    if not pairs:
        return []
    which = Q()
    for batch_id, worker_id in pairs:
        which |= Q(assignment__hit__batch_id=batch_id, assignment__worker_id=worker_id)
    return list(Judgment.objects.filter(which).values_list("pk", flat=True))


def counted_assignments(dataset, batch=None, *, include_excluded: bool = False) -> QuerySet[Assignment]:
    """The assignments whose judgments count, of a dataset (or of one batch)."""
    qs = Assignment.objects.filter(counted(include_excluded=include_excluded), hit__batch__dataset=dataset)
    return qs.filter(hit__batch=batch) if batch is not None else qs


def timed_assignments(batch) -> QuerySet[Assignment]:
    """The batch's work whose active seconds measure what a HIT takes an honest worker: counted
    (submitted or approved, confirmed by the provider, by a worker neither excluded nor stopped
    at chance in this batch), by a worker not blocked, with a time stored. Rejected, returned or
    expired work and unconfirmed sessions (anyone can make up a Prolific or panel id) are not.

    Excluded, blocked and stopped workers are left out because they are mostly the ones who
    clicked through (a spammer takes 3-8 s a HIT): their times pulled the median down, and with it
    the reward proposed to the honest workers. Their work is still paid and in the spend figures;
    only the time estimate leaves it out. The calibration table and a session's estimated minutes
    both read it."""
    return Assignment.objects.filter(counted(), hit__batch=batch, worker__blocked_at__isnull=True, active_seconds__gt=0)


def counted_judgments(dataset=None, batch=None, *, hit=None, include_excluded: bool = False) -> QuerySet[Judgment]:
    """Judgments that count, of a dataset, of one batch (round) or of one HIT. `include_excluded`:
    also those of excluded workers (the workers table shows them; expert labels keep them)."""
    qs = Judgment.objects.filter(counted("assignment__", include_excluded=include_excluded))
    if dataset is not None:
        qs = qs.filter(assignment__hit__batch__dataset=dataset)
    if batch is not None:
        qs = qs.filter(assignment__hit__batch=batch)
    if hit is not None:
        qs = qs.filter(assignment__hit=hit)
    return qs


def quality_marks(dataset, batch=None) -> dict[int, list[dict]]:
    """Per worker the open stops and collusion flags of the dataset's batches (or one batch), for
    the workers page: {worker id: [{"kind": "stopped" | "collusion", "batch": id}]}. The evidence
    and the lift are on the batch page."""
    marks: dict[int, list[dict]] = {}
    scope = {"batch": batch} if batch is not None else {"batch__dataset": dataset}
    for worker_id, batch_id in WorkerEstimate.objects.filter(stopped_at__isnull=False, **scope).values_list(
        "worker_id", "batch_id"
    ):
        marks.setdefault(worker_id, []).append({"kind": "stopped", "batch": batch_id})
    for first, second, batch_id in CollusionFlag.objects.filter(lifted_at__isnull=True, **scope).values_list(
        "first_id", "second_id", "batch_id"
    ):
        for worker_id in (first, second):
            marks.setdefault(worker_id, []).append({"kind": "collusion", "batch": batch_id})
    return marks


def _per_dataset(qs, path: str, dataset_ids) -> dict[int, int]:
    if dataset_ids is not None:
        qs = qs.filter(**{f"{path}__in": dataset_ids})
    return dict(qs.values_list(path).annotate(n=Count("pk")).order_by())


def label_rounds(batches: QuerySet[Batch]) -> QuerySet[Batch]:
    """The label rounds among `batches`: the sets of ACU labels people gave, each crowd batch, expert
    round or imported labels; not a machine judge's run, a rating batch (its ratings are a rating
    round's, on the Protocols page) or a draft (no one has judged it)."""
    return batches.exclude(kind=Batch.Kind.MACHINE).exclude(status=Batch.Status.DRAFT).filter(protocol="")


def dataset_counts(dataset_ids: list[int] | None = None) -> dict[int, dict[str, int]]:
    """Per dataset (all: None): documents, systems, summaries, ACUs and label rounds
    (`label_rounds`). One grouped query per count, whatever the number of datasets."""
    ids = list(Dataset.objects.values_list("pk", flat=True)) if dataset_ids is None else list(dataset_ids)
    counts = {
        "documents": _per_dataset(Document.objects.all(), "dataset", dataset_ids),
        "systems": _per_dataset(System.objects.all(), "dataset", dataset_ids),
        "summaries": _per_dataset(Summary.objects.all(), "system__dataset", dataset_ids),
        "acus": _per_dataset(ACU.objects.all(), "reference__document__dataset", dataset_ids),
        "rounds": _per_dataset(label_rounds(Batch.objects.all()), "dataset", dataset_ids),
    }
    return {pk: {what: per.get(pk, 0) for what, per in counts.items()} for pk in ids}


def batches_with_counts() -> QuerySet[Batch]:
    """Batches with their dataset, number of HITs (`n_hits`: one per summary, as the batch was made)
    and of follow-up HITs (`n_follow_ups`: a `pairs` batch's later places), oldest first."""
    return (
        Batch.objects.select_related("dataset")
        .annotate(
            n_hits=Count("hits", filter=Q(hits__follow_up=0)),
            n_follow_ups=Count("hits", filter=Q(hits__follow_up__gt=0)),
        )
        .order_by("pk")
    )


def workers_shared_with(batch: Batch) -> dict:
    """The other published, unexpired batches of the batch's provider with an open place that
    the handout serves before this one (`ahead`: higher priority) or in turns with it
    (`sharing`: equal priority), for the batch page."""
    others = (
        Batch.objects.filter(
            status=Batch.Status.PUBLISHED,
            provider=batch.provider,
            kind=Batch.Kind.CROWD,
            hits__open_places__gt=0,
        )
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        .exclude(pk=batch.pk)
        .distinct()
        .order_by("-priority", "pk")
    )
    ahead = [b for b in others if b.priority > batch.priority]
    sharing = [b for b in others if b.priority == batch.priority]
    return {"ahead": ahead, "sharing": sharing}


def tests_for_batches(dataset) -> QuerySet[QualificationTest]:
    """The qualification tests a new batch of `dataset` may require: the dataset's own, and
    those of other datasets their lead chose to share (`QualificationTest.shared`)."""
    return (
        QualificationTest.objects.filter(Q(dataset=dataset) | Q(shared=True))
        .select_related("dataset")
        .annotate(other=Case(When(dataset=dataset, then=Value(0)), default=Value(1)))
        .order_by("other", "dataset__name", "name", "pk")
    )


def alerted_tests(dataset):
    """Qualification tests of the dataset, or required by its batches, that spent their budget of
    failed attempts (hits.services.qualification) and whose alert the lead has not dismissed."""
    return (
        QualificationTest.objects.filter(budget_spent_at__isnull=False)
        .filter(Q(dataset=dataset) | Q(batches__dataset=dataset))
        .distinct()
        .order_by("pk")
    )


def expert_external_id(dataset_name: str, username: str) -> str:
    """The external id of a user's expert labels in a dataset ("<dataset>/<username>", as an
    imported annotator's): usernames hold no "/", so the dataset is all before the last one."""
    return f"{dataset_name}/{username}"


def _insider_tests(user_id: int, username: str) -> tuple[Exists, Exists]:
    """Whether the account writes or proofreads references of the dataset (OuterRef "pk"), and
    whether it labelled its gold in an expert round (its expert worker, `expert_external_id`)."""
    references = Reference.objects.filter(document__dataset=OuterRef("pk")).filter(
        Q(writer_id=user_id) | Q(reviewer_id=user_id)
    )
    labelled = Worker.objects.filter(
        provider=Worker.Provider.EXPERT, external_id=Concat(OuterRef("name"), Value(expert_external_id("", username)))
    )
    return Exists(references), Exists(labelled)


def insider_datasets(user_id: int, username: str) -> QuerySet[Dataset]:
    """The datasets whose crowd work the account (`user_id`, `username`) must not take: those it
    leads (created), writes or proofreads references of, or labelled gold of in an expert round.
    It knows their references or answers, so its judgments would not be a crowd's
    (hits.services.handout). One query, no join that grows."""
    authors, labelled = _insider_tests(user_id, username)
    return Dataset.objects.filter(Q(created_by_id=user_id) | authors | labelled)


def insider_why(user_id: int, username: str, datasets: QuerySet[Dataset]) -> list[tuple[str, bool, bool, bool]]:
    """(name, leads it, writes or proofreads its references, labelled its gold) of each of these
    insider datasets (`insider_datasets`, narrowed), by name: the worker's page says why."""
    authors, labelled = _insider_tests(user_id, username)
    rows = datasets.annotate(authors=authors, labelled=labelled).values_list(
        "name", "created_by_id", "authors", "labelled"
    )
    return [(name, lead == user_id, bool(a), bool(b)) for name, lead, a, b in rows.order_by("name").distinct()]


def covered_summaries(batch: Batch) -> set[int]:
    """The summaries a round covers: its HITs' and, with triage, those the judge decided wholly
    (their HITs were not made: `Batch.decided_summaries`). A triage round's machine labels count
    on these only (scoring/runs/triage.py)."""
    hits = set(batch.hits.values_list("summary_id", flat=True).distinct().order_by())
    return hits | set(batch.decided_summaries.values_list("pk", flat=True))


def bonus_assignments(worker_ids, dataset, batch=None) -> dict[int, Assignment]:
    """{worker id: the assignment a bonus from the workers page pays on}: the worker's latest counted
    crowd work in the round (`batch`), or in the dataset on its dataset-wide page. Its batch (loaded
    with it) is the one the bonus is paid in, which the form names before it is sent."""
    scope = Q(hit__batch=batch) if batch is not None else Q(hit__batch__dataset=dataset)
    work = Assignment.objects.filter(
        scope, status__in=Assignment.COUNTED, hit__batch__kind=Batch.Kind.CROWD, worker_id=OuterRef("pk")
    )
    latest = (
        Worker.objects.filter(pk__in=list(worker_ids))
        .annotate(latest=Subquery(work.order_by(F("submitted_at").desc(nulls_last=True), "-pk").values("pk")[:1]))
        .values("latest")
    )
    # one query: the workers' latest assignments chosen in a subquery, read with their batches
    return {a.worker_id: a for a in Assignment.objects.filter(pk__in=latest).select_related("hit__batch")}


def imported_round_counts(batch: Batch) -> dict[str, int]:
    """What an imported round holds, as its overview says it instead of crowd progress and money:
    its judgments (ACU labels), the annotators who gave them and the summaries they labelled."""
    assignments = Assignment.objects.filter(hit__batch=batch)
    return {
        "judgments": Judgment.objects.filter(assignment__hit__batch=batch).count(),
        "annotators": assignments.values("worker_id").distinct().count(),
        "summaries": assignments.values("hit__summary_id").distinct().count(),
    }
