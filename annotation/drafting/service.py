"""Drafts in the database: suggesting ACUs for a writer, pre-drafting a dataset, machine units.

Drafts (`DraftACU`) live beside the ACUs and never count as ACUs until a writer accepts one
(`authoring.save_reference` turns it into an ACU and records the drafter in the history).
"""

import logging

from django.db import transaction
from django.utils import timezone

from ..guidelines import guidelines_for
from ..models import ACU, ACUChange, Dataset, DraftACU, DraftJob, Reference, ReferenceSentence
from ..text import MAX_ACU_CHARS
from . import DEFAULT_DRAFTER, DraftContext, DrafterError, get_drafter

logger = logging.getLogger(__name__)

EXAMPLE_SENTENCES = 4  # approved sentences of the dataset shown to the llm drafter


def draft_context(dataset: Dataset, exclude_reference: int | None = None) -> DraftContext:
    """The dataset's guidelines and a few approved sentences with their ACUs as examples."""
    sentences = (
        ReferenceSentence.objects.filter(
            reference__document__dataset=dataset, acus__status=ACU.Status.APPROVED, acus__machine=False
        )
        .exclude(reference_id=exclude_reference)
        .distinct()
        .order_by("reference__document__position", "position")[:EXAMPLE_SENTENCES]
    )
    examples = [(s.text, [a.text for a in s.acus.filter(machine=False)]) for s in sentences]
    return DraftContext(guidelines=guidelines_for(dataset), examples=tuple(examples))


def _store_drafts(
    reference: Reference, sentences: list[ReferenceSentence], drafts: list[list[str]], drafter: str, user
) -> int:
    """Replace the pending drafts of these sentences by new ones (texts already among the
    sentence's ACUs are left out). Returns the number stored."""
    DraftACU.objects.filter(sentence__in=sentences, status=DraftACU.Status.PENDING).delete()
    rows = []
    for sentence, texts in zip(sentences, drafts, strict=False):
        have = {a.text.strip().lower() for a in sentence.acus.all()}
        seen: set[str] = set()
        for text in texts:
            text = " ".join(str(text).split())
            key = text.lower()
            if not text or key in have or key in seen or len(text) > MAX_ACU_CHARS:
                continue
            seen.add(key)
            rows.append(
                DraftACU(
                    reference=reference,
                    sentence=sentence,
                    position=len(seen) - 1,
                    text=text,
                    drafter=drafter,
                    requested_by=user,
                )
            )
    DraftACU.objects.bulk_create(rows)
    return len(rows)


def draft_sentences(engine, sentences, context=None) -> dict[int, list[str]]:
    """Drafts of the given sentences (sentence id -> texts), reference by reference, never mixing two
    references in one call. A drafter that reads the whole reference (`whole_reference`, the rules
    drafter: it carries names from sentence to sentence) gets every sentence of it, and the drafts
    of the wanted ones are kept."""
    by_reference: dict[int, list] = {}
    for sentence in sentences:
        by_reference.setdefault(sentence.reference_id, []).append(sentence)
    out: dict[int, list[str]] = {}
    for reference_id, wanted in by_reference.items():
        if getattr(engine, "whole_reference", False):
            every = list(ReferenceSentence.objects.filter(reference_id=reference_id).order_by("position"))
            drafted = engine.draft([s.text for s in every], context)
            by_pk = dict(zip([s.pk for s in every], drafted, strict=False))
        else:
            by_pk = dict(zip([s.pk for s in wanted], engine.draft([s.text for s in wanted], context), strict=False))
        out.update({s.pk: list(by_pk.get(s.pk, [])) for s in wanted})
    return out


def suggest(*, reference_id: int, user, drafter: str = DEFAULT_DRAFTER, sentence_id: int | None = None) -> int:
    """Draft ACUs for one sentence (or every sentence) of the writer's reference.

    The drafter runs outside the transaction (an LLM may take seconds); raises DrafterError
    with a message for the page. Returns the number of drafts stored."""
    from ..services.authoring import AuthoringError, check_writer

    reference = Reference.objects.select_related("document__dataset").get(pk=reference_id)
    check_writer(reference, user)
    sentences = list(reference.sentences.prefetch_related("acus"))
    if sentence_id is not None:
        sentences = [s for s in sentences if s.pk == sentence_id]
        if not sentences:
            raise AuthoringError("That sentence is not part of this reference.")
    engine = get_drafter(drafter)
    by_sentence = draft_sentences(engine, sentences, draft_context(reference.document.dataset, reference.pk))
    drafts = [by_sentence[s.pk] for s in sentences]
    with transaction.atomic():
        reference = Reference.objects.select_for_update(of=("self",)).get(pk=reference_id)
        check_writer(reference, user)
        stored = _store_drafts(reference, sentences, drafts, engine.name, user)
    logger.info("%s drafted %d ACUs for reference %s (%s)", engine.name, stored, reference_id, user)
    return stored


def predraft_dataset(job_id: int) -> DraftJob:
    """Draft every sentence without ACUs or pending drafts in the dataset's unapproved
    references, one reference per transaction, updating the job's progress as it goes.
    A failure is recorded on the job (the drafts stored so far stay)."""
    job = DraftJob.objects.select_related("dataset").get(pk=job_id)
    references = list(
        Reference.objects.filter(document__dataset=job.dataset)
        .exclude(status=Reference.Status.APPROVED)
        .order_by("document__position")
    )
    DraftJob.objects.filter(pk=job.pk).update(status=DraftJob.Status.RUNNING, total=len(references), done=0)
    try:
        engine = get_drafter(job.drafter)
        context = draft_context(job.dataset)
        made = 0
        for done, reference in enumerate(references, start=1):
            sentences = [
                s
                for s in reference.sentences.prefetch_related("acus", "drafts")
                if not s.acus.all() and not any(d.status == DraftACU.Status.PENDING for d in s.drafts.all())
            ]
            if sentences:
                by_sentence = draft_sentences(engine, sentences, context)
                drafts = [by_sentence[s.pk] for s in sentences]
                with transaction.atomic():
                    made += _store_drafts(reference, sentences, drafts, engine.name, job.created_by)
            DraftJob.objects.filter(pk=job.pk).update(done=done, drafts=made)
    except DrafterError as exc:
        logger.warning("Pre-drafting %s with %s failed: %s", job.dataset, job.drafter, exc)
        DraftJob.objects.filter(pk=job.pk).update(
            status=DraftJob.Status.FAILED, error=str(exc), finished_at=timezone.now()
        )
    else:
        DraftJob.objects.filter(pk=job.pk).update(status=DraftJob.Status.DONE, finished_at=timezone.now())
    job.refresh_from_db()
    return job


def job_progress(job: DraftJob | None) -> dict | None:
    if job is None:
        return None
    return {
        "id": job.pk,
        "kind": job.kind,
        "drafter": job.drafter,
        "params": job.params,
        "result": job.result,
        "status": job.status,
        "status_display": job.get_status_display(),
        "done": job.done,
        "total": job.total,
        "drafts": job.drafts,
        "error": job.error,
        "finished": job.status in (DraftJob.Status.DONE, DraftJob.Status.FAILED),
    }


def fill_machine_units(
    *, sentence_ids: list[int], drafter: str = DEFAULT_DRAFTER, drafts_by_sentence: dict | None = None
) -> int:
    """Put machine units (the drafter's drafts, marked `machine`) on sentences that have no
    ACU yet; sentences with ACUs keep theirs. `drafts_by_sentence` may carry drafts already
    made (sentence id -> texts). Returns the number of machine units created."""
    engine = get_drafter(drafter)
    sentences = list(
        ReferenceSentence.objects.filter(pk__in=sentence_ids).select_related("reference").prefetch_related("acus")
    )
    todo = [s for s in sentences if not s.acus.all()]
    missing = [s for s in todo if not drafts_by_sentence or s.pk not in drafts_by_sentence]
    made = dict(drafts_by_sentence or {})
    if missing:
        made.update(draft_sentences(engine, missing))
    created = 0
    with transaction.atomic():
        for sentence in todo:
            texts = [t for t in made.get(sentence.pk, []) if len(t) <= MAX_ACU_CHARS]  # a runaway draft is left out
            for position, text in enumerate(texts):
                acu = ACU.objects.create(
                    reference=sentence.reference,
                    sentence=sentence,
                    position=position,
                    text=text,
                    drafter=engine.name,
                    machine=True,
                )
                ACUChange.objects.create(
                    reference=sentence.reference,
                    acu=acu,
                    user=None,
                    action=ACUChange.Action.MACHINE,
                    new_text=text,
                    new_sentence=sentence.position,
                    drafter=engine.name,
                )
                created += 1
    return created
