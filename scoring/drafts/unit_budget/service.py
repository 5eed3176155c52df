"""Applying the Lite2.x human-unit budget to a dataset that is being written.

The regressor is trained on every other dataset that has human ACUs and system summaries
(the per-sentence error of `draft_report`), then ranks the sentences still without a human
ACU: the top share goes to authors (their references are assigned), the rest get machine
units (the drafter's drafts, `ACU.machine`), always shown as such.
"""

import logging
from collections import defaultdict

import numpy as np
from django.db import transaction
from django.db.models import Count, F, Q

from annotation.drafting import DEFAULT_DRAFTER, get_drafter
from annotation.drafting.service import draft_context, fill_machine_units
from annotation.models import ACU, Dataset, DraftACU, Reference, ReferenceSentence, Summary
from annotation.services import authoring
from scoring.drafts import quality as draft_quality
from scoring.drafts.report import build_tables, default_judge_name, feature_matrix
from scoring.drafts.unit_budget import features, regressor
from scoring.machine.judges import get_judge

logger = logging.getLogger(__name__)


class BudgetError(Exception):
    """The budget cannot be applied; the message is for the lead."""


def training_sets(exclude: Dataset):
    """Datasets with human ACUs and system summaries (other than `exclude`)."""
    return (
        Dataset.objects.exclude(pk=exclude.pk)
        .annotate(
            human=Count(
                "documents__reference__acus", filter=Q(documents__reference__acus__machine=False), distinct=True
            ),
            summaries=Count("documents__summaries", distinct=True),
        )
        .filter(human__gt=0, summaries__gt=0)
        .order_by("name")
    )


def training_rows(
    target: Dataset, *, drafter: str, judge, progress=None, criterion: str = "abs"
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    rows, labels, names = [], [], []
    sets = list(training_sets(target))
    for k, dataset in enumerate(sets):
        if progress:
            progress(k, len(sets) + 1)
        tables = build_tables(dataset, drafter=drafter, judge=judge)
        if not tables.sentence_ids:
            continue
        errors = draft_quality.sentence_errors(*tables.sums(), criterion)
        rows.append(feature_matrix(tables))
        labels.append(errors)
        names.append(dataset.name)
    if not rows:
        return np.zeros((0, len(features.FEATURES))), np.zeros(0), []
    return np.vstack(rows), np.concatenate(labels), names


def run_job(job_id: int):
    """Apply the budget of a DraftJob (kind budget), recording progress, result or error on it."""
    from django.utils import timezone

    from annotation.drafting import DrafterError
    from annotation.models import DraftJob
    from scoring.machine.judges import JudgeUnavailable

    job = DraftJob.objects.select_related("dataset").get(pk=job_id)
    DraftJob.objects.filter(pk=job.pk).update(status=DraftJob.Status.RUNNING)

    def progress(done, total):
        DraftJob.objects.filter(pk=job.pk).update(done=done, total=total)

    try:
        result = apply_budget(
            dataset=job.dataset,
            share=float(job.params["share"]),
            drafter=job.drafter,
            judge_name=job.params.get("judge"),
            author_ids=job.params.get("authors") or None,
            progress=progress,
            criterion=job.params.get("criterion", "abs"),
        )
    except (BudgetError, DrafterError, JudgeUnavailable, authoring.AuthoringError) as exc:
        DraftJob.objects.filter(pk=job.pk).update(
            status=DraftJob.Status.FAILED, error=str(exc), finished_at=timezone.now()
        )
    else:
        DraftJob.objects.filter(pk=job.pk).update(
            status=DraftJob.Status.DONE,
            result=result,
            drafts=result["machine_units"],
            done=F("total"),
            finished_at=timezone.now(),
        )
    job.refresh_from_db()
    return job


def _open_sentences(dataset: Dataset) -> list[ReferenceSentence]:
    """Sentences of unapproved references that have no ACU written or accepted by a person."""
    return list(
        ReferenceSentence.objects.filter(reference__document__dataset=dataset)
        .exclude(reference__status=Reference.Status.APPROVED)
        .exclude(acus__machine=False)
        .select_related("reference__document")
        .order_by("reference__document__position", "position")
        .distinct()
    )


def _draft_scores(sentences, drafts, judge) -> list[np.ndarray]:
    """Per sentence, the machine score of its drafts in each system summary of its document: the
    mean over its drafts per summary, as `report.feature_matrix` gives the regressor's training rows."""
    summaries = defaultdict(list)
    for doc, text in Summary.objects.filter(document__in={s.reference.document_id for s in sentences}).values_list(
        "document_id", "text"
    ):
        summaries[doc].append(text)
    pairs, owners = [], []
    for i, (sentence, texts) in enumerate(zip(sentences, drafts, strict=False)):
        for text in texts:
            for summary in summaries[sentence.reference.document_id]:
                pairs.append((text, summary))
                owners.append(i)
    p = judge.judge(pairs) if pairs else np.zeros(0)
    per = [[] for _ in sentences]
    for owner, value in zip(owners, p, strict=False):
        per[owner].append(value)
    return [
        np.array(v).reshape(len(texts), -1).mean(axis=0) if v else np.zeros(1)
        for v, texts in zip(per, drafts, strict=False)
    ]


def _draft_sentences(dataset, sentences, engine) -> list[list[str]]:
    """The drafter's units of each open sentence, drafted reference by reference."""
    by_reference = defaultdict(list)
    for i, s in enumerate(sentences):
        by_reference[s.reference_id].append(i)
    drafts: list[list[str]] = [[] for _ in sentences]
    context = draft_context(dataset)
    for members in by_reference.values():
        for i, out in zip(members, engine.draft([sentences[i].text for i in members], context), strict=False):
            drafts[i] = out
    return drafts


def _predicted_error(
    dataset, F: np.ndarray, *, drafter: str, judge, progress, criterion: str
) -> tuple[np.ndarray, str]:
    """Each sentence's predicted machine error and how it was predicted: the regressor trained on
    the datasets with human ACUs and summaries, else length and coordinations."""
    X, y, trained_on = training_rows(dataset, drafter=drafter, judge=judge, progress=progress, criterion=criterion)
    if len(y) >= 20:
        try:
            predicted = regressor.fit(X, y).predict(F)
        except regressor.RegressorUnavailable as exc:
            raise BudgetError(str(exc)) from None
        method = f"gradient boosting trained on {len(y)} sentences of {', '.join(trained_on)}"
    else:
        # NOTE: without training data, longer sentences with more coordinations go to people first.
        predicted = F[:, features.FEATURES.index("words")] * (1 + F[:, features.FEATURES.index("coordinations")])
        method = "no dataset with human ACUs and summaries to train on: ranked by length and coordinations"
    if progress:
        progress(len(trained_on), len(trained_on) + 1)
    return predicted, method


def _store_split(sentences, human, predicted, drafts, drafter: str) -> tuple[int, int]:
    """Store each sentence's side and predicted error; machine units for the machine side, none
    left unjudged on the human side. (machine units created, removed)."""
    with transaction.atomic():
        for sentence, is_human, value in zip(sentences, human, predicted, strict=False):
            sentence.budget = ReferenceSentence.Budget.HUMAN if is_human else ReferenceSentence.Budget.MACHINE
            sentence.predicted_error = float(value)
        ReferenceSentence.objects.bulk_update(sentences, ["budget", "predicted_error"])
        now_human = [s.pk for s, h in zip(sentences, human, strict=False) if h]
        removed, _ = ACU.objects.filter(sentence_id__in=now_human, machine=True, judgments__isnull=True).delete()
        machine = {s.pk: d for s, d, h in zip(sentences, drafts, human, strict=False) if not h}
        created = fill_machine_units(sentence_ids=list(machine), drafter=drafter, drafts_by_sentence=machine)
        # The machine units stand where pending drafts were: no second copy for the writer to dismiss.
        DraftACU.objects.filter(sentence_id__in=list(machine), status=DraftACU.Status.PENDING).delete()
    return created, removed


def apply_budget(
    *,
    dataset: Dataset,
    share: float,
    drafter: str = DEFAULT_DRAFTER,
    judge_name: str | None = None,
    author_ids: list[int] | None = None,
    progress=None,
    criterion: str = "abs",
) -> dict:
    """Rank the dataset's open sentences by predicted machine error and split them: the top
    `share` for human ACUs, the rest filled with machine units. Re-applying moves sentences
    between the two (unjudged machine units of sentences that become human are removed)."""
    if not 0 <= share <= 1:
        raise BudgetError("The budget is a share of sentences between 0% and 100%.")
    sentences = _open_sentences(dataset)
    if not sentences:
        raise BudgetError("Every sentence already has human ACUs or is approved: nothing to budget.")
    judge = get_judge(judge_name or default_judge_name())
    engine = get_drafter(drafter)
    drafts = _draft_sentences(dataset, sentences, engine)
    scores = _draft_scores(sentences, drafts, judge)
    F = np.array(
        [features.sentence_features(s.text, d, sc) for s, d, sc in zip(sentences, drafts, scores, strict=False)]
    )
    predicted, method = _predicted_error(
        dataset, F, drafter=engine.name, judge=judge, progress=progress, criterion=criterion
    )
    human = regressor.choose_human(predicted, share)
    created, removed = _store_split(sentences, human, predicted, drafts, engine.name)
    assigned = {}
    if author_ids:
        wanted = sorted({s.reference_id for s, h in zip(sentences, human, strict=False) if h})
        assigned = authoring.assign_references(dataset=dataset, author_ids=author_ids, reference_ids=wanted)
    logger.info(
        "Budget %.0f%% on %s: %d human, %d machine sentences (%s)",
        100 * share,
        dataset,
        human.sum(),
        len(sentences) - human.sum(),
        method,
    )
    return {
        "share": share,
        "sentences": len(sentences),
        "human": int(human.sum()),
        "machine": int(len(sentences) - human.sum()),
        "machine_units": created,
        "removed_machine_units": removed,
        "method": method,
        "assigned": assigned,
        "judge": judge.name,
        "drafter": engine.name,
    }
