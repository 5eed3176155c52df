"""Import a dataset: validate the records, then write documents, references, ACUs and any
imported label rounds in one transaction: all of it or nothing."""

from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.importing.bulk import analyze, create_all, insert_rows
from annotation.importing.errors import DatasetExists, DatasetImportError
from annotation.importing.foreign_keys import checked_as_a_set
from annotation.importing.formats import check_alpha, guess_format, read_records
from annotation.importing.limits import check_text
from annotation.importing.protocols import read_protocol_file
from annotation.importing.records import DocumentRecord, LabelSource
from annotation.models import ACU, ACUChange, Dataset, Document, Reference, ReferenceSentence, Summary, System
from annotation.services import ratings
from annotation.text import attach_units_to_sentences, word_count
from annotation.uploads import uploaded_dataset_path
from hits import versions
from hits.models import HIT, Assignment, Batch, Judgment, Worker
from hits.money import MAX_FEEDBACK


@dataclass
class ImportSummary:
    dataset_id: int
    name: str
    documents: int
    systems: int
    summaries: int
    acus: int
    judgments: int
    annotators: int
    batch_id: int | None
    without_acus: int = 0  # references that came without ACUs: they wait for their authors

    def __str__(self):
        text = (
            f"Imported {self.name!r}: {self.documents} documents, {self.systems} systems, "
            f"{self.summaries} summaries, {self.acus} ACUs"
        )
        if self.batch_id:
            text += f", {self.judgments} imported judgments from {self.annotators} annotator(s) (round {self.batch_id})"
        if self.without_acus:
            came = "1 reference came" if self.without_acus == 1 else f"{self.without_acus} references came"
            text += f". {came} without ACUs: they wait for authors (Assign authors on the dataset's page)"
        return text


def import_dataset(
    path, *, name: str, fmt: str | None = None, replace: bool = False, created_by=None, alpha: float | None = None
) -> ImportSummary:
    """Read a dataset file or folder and store it; raises DatasetImportError, writing nothing.

    ``alpha`` sets the dataset's length-normalization strength (else the file's `length_alpha`,
    as our export writes it; else 2, CNN/DM)."""
    length_alpha = check_alpha(alpha) if alpha is not None else None
    name = (name or "").strip()
    limit = Dataset._meta.get_field("name").max_length
    if not name:
        raise DatasetImportError(f"The dataset needs a name (1 to {limit} characters).")
    if len(name) > limit:
        raise DatasetImportError(f"The dataset name is {len(name):,} characters long; at most {limit} are allowed.")
    check_text(name, "The dataset name")
    fmt = fmt or guess_format(path)
    records = read_records(path, fmt)
    if length_alpha is None:
        length_alpha = _carried_alpha(records)
    with transaction.atomic():
        existing = Dataset.objects.select_for_update().filter(name=name).first()
        if existing:
            if not replace:
                raise DatasetExists(name)
            delete_dataset(existing)
        summary = _store(records, name=name, fmt=fmt, created_by=created_by, length_alpha=length_alpha)
        if fmt == "rose-protocols":  # the protocol file's ratings and ACU scores, as one rating round
            dataset = Dataset.objects.get(pk=summary.dataset_id)
            ratings.import_ratings(dataset, read_protocol_file(path), created_by=created_by)
    # Fresh statistics for the tables just filled (outside the transaction, which committed).
    analyze([Document, Reference, ReferenceSentence, ACU, System, Summary, HIT, Assignment, Judgment])
    return summary


def _carried_alpha(records: list[DocumentRecord]) -> float | None:
    """The alpha an export of ours carries on every line (one value), used when none is given."""
    given = {r.length_alpha: r for r in records if r.length_alpha is not None}
    if len(given) > 1:
        second = list(given.values())[1]
        raise DatasetImportError(
            f"'length_alpha' differs between lines ({', '.join(str(a) for a in given)}): a dataset has one",
            *second.origin,
        )
    return next(iter(given), None)


def delete_dataset(dataset: Dataset) -> None:
    """Delete a dataset with its imported labels; refused if it holds work done here (crowd
    batches, expert rounds labelled in the browser, ACUs its authors wrote)."""

    made_here = dataset.batches.exclude(kind__in=(Batch.Kind.IMPORTED, Batch.Kind.IMPORTED_CROWD))
    if made_here.exists():
        plural = {
            Batch.Kind.CROWD: "crowd batches",
            Batch.Kind.EXPERT: "expert rounds",
            Batch.Kind.MACHINE: "machine judge rounds",
        }
        kinds = " and ".join(sorted({plural[Batch.Kind(k)] for k in made_here.values_list("kind", flat=True)}))
        raise DatasetImportError(
            f"dataset {dataset.name!r} has {kinds} ({', '.join(made_here.values_list('name', flat=True)[:5])}); "
            "replacing it would destroy their judgments. Import under a new name instead."
        )
    written = ACUChange.objects.filter(reference__document__dataset=dataset).exclude(action=ACUChange.Action.MACHINE)
    if written.exists():
        references = written.values("reference").distinct().count()
        raise DatasetImportError(
            f"dataset {dataset.name!r} has ACUs its authors wrote here ({references} reference(s)); replacing it "
            "would destroy them. Export it first and import under a new name instead."
        )
    # Delete bottom-up in single queries: judgments PROTECT their ACUs.
    Judgment.objects.filter(assignment__hit__batch__dataset=dataset).delete()
    Assignment.objects.filter(hit__batch__dataset=dataset).delete()
    HIT.objects.filter(batch__dataset=dataset).delete()
    dataset.batches.all().delete()
    ACU.objects.filter(reference__document__dataset=dataset).delete()
    dataset.delete()


ACU_STATUS = {True: ACU.Status.APPROVED, False: ACU.Status.DRAFT}


def _reference_status(record: DocumentRecord) -> str:
    """Imported units were written and checked elsewhere (approved), unless our export says they
    were still being written or proofread: then an author goes on writing them, as a reference
    without any units waits for its authors."""
    if not record.units:
        return Reference.Status.TODO
    return Reference.Status.APPROVED if record.approved else Reference.Status.WRITING


def _store(records: list[DocumentRecord], *, name: str, fmt: str, created_by, length_alpha=None) -> ImportSummary:
    """Write the records in dependency order as plain rows (COPY on PostgreSQL, no model
    instances): documents, references, sentences, ACUs, systems, summaries, then the labels."""
    extra = {"length_alpha": length_alpha} if length_alpha is not None else {}
    try:
        with transaction.atomic():  # another import of the name may have committed since the check
            dataset = Dataset.objects.create(name=name, source_format=fmt, created_by=created_by, **extra)
    except IntegrityError:
        raise DatasetImportError(
            f"another import of a dataset named {name!r} finished while this one ran; nothing was imported"
        ) from None
    documents = insert_rows(
        Document,
        ["dataset", "external_id", "position", "source"],
        [(dataset.pk, r.external_id, i, r.source) for i, r in enumerate(records)],
        ids=True,
    )
    references = insert_rows(
        Reference,
        ["document", "word_count", "status"],
        [
            # |r| of the reference as given, never of its re-split sentences.
            (d, word_count(r.reference_text or " ".join(r.sentences)), _reference_status(r))
            for d, r in zip(documents, records, strict=True)
        ],
        ids=True,
    )
    sentences = insert_rows(
        ReferenceSentence,
        ["reference", "position", "text"],
        [(ref, i, text) for ref, r in zip(references, records, strict=True) for i, text in enumerate(r.sentences)],
        ids=True,
    )
    # Units of every format belong to the whole reference: attach each to its best sentence.
    acu_rows, start = [], 0
    for ref, r in zip(references, records, strict=True):
        ref_sentences = sentences[start : start + len(r.sentences)]
        start += len(r.sentences)
        next_position = [0] * len(ref_sentences)
        attached = r.unit_sentences if r.unit_sentences is not None else attach_units_to_sentences(r.units, r.sentences)
        for unit, s in zip(r.units, attached, strict=True):
            acu_rows.append((ref, ref_sentences[s], next_position[s], unit, ACU_STATUS[r.approved]))
            next_position[s] += 1
    acus = insert_rows(ACU, ["reference", "sentence", "position", "text", "status"], acu_rows, ids=True)

    system_names = sorted({s for r in records for s in r.summaries})
    systems = {s.name: s.pk for s in create_all([System(dataset=dataset, name=n) for n in system_names])}
    summary_keys = [(d, s) for d, r in zip(documents, records, strict=True) for s in r.summaries]
    summary_ids = insert_rows(
        Summary,
        ["document", "system", "text", "word_count"],
        [
            (d, systems[s], text, word_count(text))
            for d, r in zip(documents, records, strict=True)
            for s, text in r.summaries.items()
        ],
        ids=True,
    )
    summaries = dict(zip(summary_keys, summary_ids, strict=True))

    judgments, annotators, batch_id = _store_labels(dataset, records, documents, acus, summaries)
    return ImportSummary(
        dataset.pk,
        name,
        len(documents),
        len(systems),
        len(summaries),
        len(acus),
        judgments,
        annotators,
        batch_id,
        without_acus=_without_units(records),
    )


def _without_units(records: list[DocumentRecord]) -> int:
    """How many references came without units (they wait for their authors)."""
    return sum(1 for r in records if not r.units)


EXPERT_ROUND = Batch.Kind.IMPORTED  # the batch kind of imported expert labels (and of the default round)
CROWD_PROVIDERS = tuple(p for p in Worker.Provider.values if p != Worker.Provider.EXPERT)
STATUSES = {"approved": Assignment.Status.APPROVED, "rejected": Assignment.Status.REJECTED}


@dataclass
class _Item:
    """One annotator's labels of one summary, as one assignment: its review state (`status`,
    the rejection's `feedback`), active seconds and gold record."""

    summary: int
    worker: tuple[str, str]
    labels: list
    acus: list
    source: LabelSource | None
    status: str = Assignment.Status.APPROVED
    feedback: str = ""


@dataclass
class _Round:
    """One imported label round: its batch's name, kind and provider, and its labels."""

    name: str
    kind: str
    provider: str
    items: list[_Item] = field(default_factory=list)


def _worker_key(dataset: Dataset, annotator: str, source: LabelSource | None) -> tuple[str, str]:
    """(provider, external id) of the worker whose labels these are: an expert is named
    "<dataset>/<name>" (expert labels belong to their dataset), a crowd worker keeps its own."""
    if source is None or source.expert:
        return Worker.Provider.EXPERT, f"{dataset.name}/{source.worker if source else annotator}"
    return source.provider, source.worker


def _labelled(record: DocumentRecord):
    """(system, annotator, labels, source, status, feedback) of each label set of a record: the
    counted ones (annotator_labels), then those that count nowhere (uncounted_labels)."""
    for system, per_annotator in record.labels.items():
        for annotator, labels in per_annotator.items():
            yield system, annotator, labels, record.sources.get(system, {}).get(annotator), "approved", ""
    for system, uncounted in record.uncounted.items():
        for item in uncounted:
            yield system, item.source.worker, item.labels, item.source, item.status, item.feedback


def _checked_source(annotator: str, system: str, source: LabelSource | None, feedback: str, origin) -> None:
    """Refuses what the parser cannot judge: a crowd provider unknown here, feedback too long."""
    if source is not None and not source.expert and source.provider not in CROWD_PROVIDERS:
        raise DatasetImportError(
            f"the labels of {annotator!r} on {system!r} are crowd labels of provider "
            f"{source.provider!r}: a crowd provider is one of {', '.join(CROWD_PROVIDERS)}",
            *origin,
        )
    if len(feedback) > MAX_FEEDBACK:
        raise DatasetImportError(
            f"the rejection feedback of {annotator!r} on {system!r} is over {MAX_FEEDBACK} characters", *origin
        )


def _rounds(dataset, records, documents, acus, summaries) -> list[_Round]:
    """The labels grouped by the round they came from (the file's own labels: one round of
    imported expert labels); raises DatasetImportError for a source that cannot be stored."""
    rounds: dict[tuple[str, str, str], _Round] = {}
    seen: set[tuple[str, int, tuple[str, str]]] = set()
    start = 0
    for r, document in zip(records, documents, strict=True):
        unit_acus = acus[start : start + len(r.units)]
        start += len(r.units)
        for system, annotator, labels, source, status, feedback in _labelled(r):
            _checked_source(annotator, system, source, feedback, r.origin)
            expert = source is None or source.expert
            name = source.round if source else f"{dataset.name}: imported labels"
            kind = EXPERT_ROUND if expert else Batch.Kind.IMPORTED_CROWD
            provider = Worker.Provider.EXPERT if expert else source.provider
            worker = _worker_key(dataset, annotator, source)
            summary = summaries[(document, system)]
            if (name, summary, worker) in seen:
                raise DatasetImportError(f"{worker[1]!r} labels {system!r} twice in round {name!r}", *r.origin)
            seen.add((name, summary, worker))
            round_ = rounds.setdefault((name, kind, provider), _Round(name[:200], kind, provider))
            round_.items.append(_Item(summary, worker, labels, unit_acus, source, STATUSES[status], feedback))
    return list(rounds.values())


def _workers(dataset: Dataset, states: dict[tuple[str, str], LabelSource | None]) -> dict[tuple[str, str], int]:
    """The worker of each (provider, external id), made if missing. An in-house worker with no row
    here (an export of another installation) is stored as "<dataset>/<id>", a name no account can
    have, so that their labels never become the work of a later account of that username. A worker
    made here takes the state the file gives (blocked, excluded); one this installation has keeps
    its own (a file never blocks or excludes a worker here)."""
    found: dict[tuple[str, str], int] = {}
    for provider in {p for p, _ in states}:
        ids = [e for p, e in states if p == provider]
        mine = dict(Worker.objects.filter(provider=provider, external_id__in=ids).values_list("external_id", "pk"))
        stored = {e: e for e in ids}
        if provider == Worker.Provider.INHOUSE:
            stored.update((e, f"{dataset.name}/{e}") for e in ids if e not in mine)
        missing = [e for e in ids if e not in mine]
        now = timezone.now()
        Worker.objects.bulk_create(
            [_new_worker(provider, stored[e], states[(provider, e)], now) for e in missing], ignore_conflicts=True
        )
        made = [stored[e] for e in missing]
        mine.update(Worker.objects.filter(provider=provider, external_id__in=made).values_list("external_id", "pk"))
        found.update(((provider, e), mine[stored[e]]) for e in ids)
    return found


def _new_worker(provider: str, external_id: str, source: LabelSource | None, now) -> Worker:
    """A worker made by the import, in the state its source gives (blocked, excluded)."""
    blocked = source is not None and source.blocked
    return Worker(
        provider=provider,
        external_id=external_id,
        excluded=source is not None and source.excluded,
        blocked_at=now if blocked else None,
        block_reason=(source.block_reason or "Blocked where the labels were made (imported).") if blocked else "",
    )


def _worker_states(rounds: list[_Round]) -> dict[tuple[str, str], LabelSource | None]:
    """Per worker one of its sources that says it is blocked or excluded, else any (None: expert labels)."""
    states: dict[tuple[str, str], LabelSource | None] = {}
    for item in (item for round_ in rounds for item in round_.items):
        known = states.get(item.worker)
        if known is None or not (known.blocked or known.excluded):
            states[item.worker] = item.source
    return states


def _store_labels(dataset, records, documents, acus, summaries) -> tuple[int, int, int | None]:
    """Imported labels become read-only rounds, one per round they came from (the file's own
    labels: one round of imported expert labels): a batch of kind 'imported' (expert labels,
    workers of provider `expert`) or 'imported_crowd' (crowd labels under their worker), one HIT
    per labelled summary, one assignment per annotator: approved, or rejected as it was (labels
    that count nowhere come back so)."""

    if not any(r.labels or r.uncounted for r in records):
        return 0, 0, None
    rounds = _rounds(dataset, records, documents, acus, summaries)
    workers = _workers(dataset, _worker_states(rounds))
    stored = [_store_round(dataset, round_, workers) for round_ in rounds]
    return sum(n for _, n in stored), len(workers), stored[0][0]


def _store_round(dataset, round_: _Round, workers: dict) -> tuple[int, int]:
    """One round's batch, HITs, assignments and judgments; (batch id, judgments stored)."""
    per_summary: dict[int, int] = {}
    for item in round_.items:
        counted = int(item.status == Assignment.Status.APPROVED)
        per_summary[item.summary] = per_summary.get(item.summary, 0) + counted
    batch = Batch.objects.create(
        dataset=dataset,
        name=round_.name,
        kind=round_.kind,
        provider=round_.provider,
        status=Batch.Status.COMPLETE,
        assignments_per_hit=max(1, *per_summary.values()),
    )
    hit_rows = [(summary, max(1, places)) for summary, places in per_summary.items()]
    hits = dict(
        zip(
            per_summary,
            insert_rows(HIT, ["summary", "max_assignments"], hit_rows, ids=True, batch=batch.pk),
            strict=True,
        )
    )
    assignments = insert_rows(
        Assignment,
        ["hit", "worker", "active_seconds", "status", "feedback", "gold_correct", "gold_total"],
        [
            (
                hits[item.summary],
                workers[item.worker],
                item.source.seconds if item.source else None,
                item.status,
                item.feedback,
                *(item.source.gold if item.source and item.source.gold else (None, None)),
            )
            for item in round_.items
        ],
        ids=True,
        submitted_at=batch.created_at,
    )
    rows = (  # streamed into COPY; a label is 1/0, which PostgreSQL reads as a boolean
        (assignment, acu, label)
        for assignment, item in zip(assignments, round_.items, strict=True)
        for acu, label in zip(item.acus, item.labels, strict=True)
        if label is not None
    )
    # The judgments' two foreign keys checked by one anti-join each, not a trigger per row.
    with checked_as_a_set(Judgment):
        count = insert_rows(Judgment, ["assignment", "acu", "present"], rows)
    versions.bump(dataset.pk, batch.pk)
    return batch.pk, count


def import_upload(upload, *, name: str, fmt: str, replace: bool = False, created_by=None) -> ImportSummary:
    """Import an uploaded file (the upload page and the API share this); raises
    DatasetImportError, writing nothing."""
    with uploaded_dataset_path(upload, fmt) as path:
        return import_dataset(path, name=name, fmt=fmt, replace=replace, created_by=created_by)
