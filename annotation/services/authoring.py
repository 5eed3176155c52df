"""Authoring services: assigning references, saving ACUs, review and time on task.

Every write takes the reference row lock, so concurrent saves of one reference are
serialized and the version check sees the latest state.
"""

import hashlib
import json
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.hints import reference_hints, usual_length
from annotation.models import (
    ACU,
    ACUChange,
    AuthoringTime,
    Dataset,
    DraftACU,
    Reference,
    ReviewComment,
)
from annotation.text import clean_acu_text, clean_comment_text
from config.roles import AUTHOR

# Consecutive edits of one ACU by the same user within this window (one typing burst,
# autosaved every pause) extend one history row: old text before, new text after.
COALESCE_EDITS = timedelta(minutes=2)
MAX_TIME_REPORT = 120.0  # seconds one heartbeat may add (the page reports every 15 s)


class AuthoringError(Exception):
    """A refused authoring action, with a message for the person who tried it."""


class AlreadyDone(AuthoringError):
    """The same action again (a double click, a second tab, Back): it was done once, nothing more is."""


class VersionConflict(AuthoringError):
    def __init__(self, reference: Reference):
        self.reference = reference
        super().__init__(
            "This reference was changed in another tab or by someone else since you opened it. "
            "Your last change was not saved; reload to see the current ACUs."
        )


class RefusedAcu(AuthoringError):
    """One ACU of a save refused (too long, a control character): the message names it by its place
    ("ACU 3 of sentence 2"), and `sentence_id` and `index` (in that sentence's list as sent) let
    the editor mark its field."""

    def __init__(self, message: str, sentence_id: int, index: int):
        self.sentence_id, self.index = sentence_id, index
        super().__init__(message)


def authors():
    return get_user_model().objects.filter(groups__name=AUTHOR, is_active=True).order_by("username")


def dataset_authors(dataset: Dataset):
    """The dataset's own authors: active authors who write or review one of its references.
    Proofreading goes only to them, never to the authors of another dataset."""
    references = Reference.objects.filter(document__dataset=dataset)
    return authors().filter(Q(pk__in=references.values("writer")) | Q(pk__in=references.values("reviewer")))


def review_gap(dataset: Dataset) -> dict | None:
    """What the lead must be told when the dataset's references cannot all be proofread: fewer
    than two of its own authors, or references in review that no author of it can take."""
    references = Reference.objects.filter(document__dataset=dataset)
    if not references.exclude(writer=None).exists():
        return None  # nobody writes yet: nothing to proofread
    people = list(dataset_authors(dataset).values_list("username", flat=True))
    waiting = references.filter(status=Reference.Status.IN_REVIEW, reviewer__isnull=True).count()
    if len(people) >= 2 and not waiting:
        return None
    return {"authors": people, "waiting": waiting, "lone": len(people) < 2}


# ---- assignment -------------------------------------------------------------------------


def assign_references(
    *,
    dataset: Dataset,
    author_ids: list[int],
    count: int | None = None,
    reference_ids: list[int] | None = None,
    reviewer_id: int | None = None,
) -> dict[str, int]:
    """Give unassigned, unapproved references of a dataset to authors, in document order.

    With `count`, each author gets up to `count` more; without, the unassigned references
    are split evenly (round robin). `reference_ids` limits the references to give (the
    human-unit budget assigns only those with sentences for people); `reviewer_id` names the author
    who proofreads them (else the dataset's other authors do). Returns {username: references given}.
    """
    people = list(authors().filter(pk__in=author_ids))
    if not people:
        raise AuthoringError("Pick at least one author.")
    reviewer = authors().filter(pk=reviewer_id).first() if reviewer_id is not None else None
    if reviewer_id is not None and (reviewer is None or reviewer in people):
        raise AuthoringError("The reviewer must be an author who does not write these references.")
    if count is not None and count < 1:
        raise AuthoringError("The count must be at least 1.")
    with transaction.atomic():
        free = list(
            Reference.objects.select_for_update()
            .filter(document__dataset=dataset, writer__isnull=True)
            .exclude(status=Reference.Status.APPROVED)
            .order_by("document__position")
        )
        if reference_ids is not None:
            free = [r for r in free if r.pk in set(reference_ids)]
        if count is not None:
            free = free[: count * len(people)]
        given = {p.username: 0 for p in people}
        for i, reference in enumerate(free):
            person = people[i % len(people)]
            reference.writer = person
            if reviewer is not None:
                reference.reviewer = reviewer
            given[person.username] += 1
        Reference.objects.bulk_update(free, ["writer", "reviewer"])
    return given


def author_queue(user) -> dict:
    """The writer's references by state, and the next one to open (revisions first)."""
    mine = (
        Reference.objects.filter(writer=user)
        .select_related("document__dataset")
        .order_by("document__dataset__name", "document__position")
    )
    groups = {
        "changes": [r for r in mine if r.status == Reference.Status.CHANGES],
        "todo": [r for r in mine if r.status in (Reference.Status.TODO, Reference.Status.WRITING)],
        "in_review": [r for r in mine if r.status == Reference.Status.IN_REVIEW],
        "approved": [r for r in mine if r.status == Reference.Status.APPROVED],
    }
    writing_first = sorted(groups["todo"], key=lambda r: r.status != Reference.Status.WRITING)
    upcoming = groups["changes"] + writing_first
    return {**groups, "next": upcoming[0] if upcoming else None, "total": len(mine)}


def _own_datasets(user):
    """Datasets in which the user writes or reviews a reference."""
    references = Reference.objects.filter(Q(writer=user) | Q(reviewer=user))
    return Dataset.objects.filter(pk__in=references.values("document__dataset"))


def review_queue(user):
    """References waiting for this author's review: assigned to them, or unclaimed ones
    written by someone else in a dataset the author works on."""
    return (
        Reference.objects.filter(status=Reference.Status.IN_REVIEW)
        .filter(Q(reviewer=user) | Q(reviewer__isnull=True, document__dataset__in=_own_datasets(user)))
        .exclude(writer=user)
        .select_related("document__dataset", "writer")
        .order_by("submitted_at")
    )


def reviewed_by(user):
    """References this author reviewed and decided: approved, or sent back to their writer (still to
    revise; sent again, one is back in `review_queue`). The decision leaves its reviewer on the
    reference (`_reviewable` claims it), and its state says which it was."""
    return (
        Reference.objects.filter(reviewer=user, status__in=(Reference.Status.APPROVED, Reference.Status.CHANGES))
        .exclude(writer=user)
        .select_related("document__dataset", "writer")
        .order_by("document__dataset__name", "document__position")
    )


# ---- the writer's state and saves -------------------------------------------------------

HISTORY_ROWS = 50  # newest changes shown in the editor's history panel


def _history(reference: Reference) -> list[dict]:
    rows = reference.changes.select_related("user").order_by("-at", "-pk")[:HISTORY_ROWS]
    return [
        {
            "at": c.at.isoformat(timespec="seconds"),
            "user": c.user.username if c.user else "machine",
            "action": c.action,
            "action_display": c.get_action_display(),
            "old_text": c.old_text,
            "new_text": c.new_text,
            "drafter": c.drafter,
        }
        for c in rows
    ]


HINTS_TTL = 7 * 24 * 3600  # seconds the hints of one state of a reference are kept


def _stored_hints(reference: Reference, structure: list, drafts: list[list[str]]) -> dict:
    """The hints of a reference (its ACUs, and its pending drafts named as drafts), computed once per
    state: stored in the "pages" cache under a digest of the texts, so opening, reloading or reviewing
    an unchanged reference reads them back. The usual ACU length of the dataset is the one when they
    were computed (the hints the writer saw)."""
    digest = hashlib.sha256(json.dumps([reference.pk, structure, drafts]).encode()).hexdigest()
    key = f"acu-hints:v5:{digest}"  # v5: no second full stop after a quoted ACU; v4: "the same text"
    stored = caches["pages"].get(key)
    if stored is not None:
        return stored
    dataset_acus = ACU.objects.filter(
        reference__document__dataset_id=reference.document.dataset_id, status=ACU.Status.APPROVED
    ).values_list("text", flat=True)[:2000]
    usual = usual_length(list(dataset_acus))
    # Drafts are checked as if written after the sentence's own ones (the ACUs' hints ignore them).
    hints = reference_hints(structure, usual, drafts)
    caches["pages"].set(key, hints, HINTS_TTL)
    return hints


def reference_state(reference: Reference) -> dict:
    """What the editor shows: sentences with their ACUs and pending drafts, version, hints
    (drafts are checked too), open comments and the recent history."""
    sentences = list(reference.sentences.prefetch_related("acus", "drafts"))
    pending = [[d for d in s.drafts.all() if d.status == DraftACU.Status.PENDING] for s in sentences]
    structure = [(s.text, [a.text for a in s.acus.all()]) for s in sentences]
    hints = _stored_hints(reference, structure, [[d.text for d in p] for p in pending])
    comments = [
        {
            "id": c.pk,
            "acu": c.acu_id,
            "acu_text": c.acu_text,
            "text": c.text,
            "by": c.author.username if c.author else "",
        }
        for c in reference.comments.filter(resolved_at__isnull=True).select_related("author")
    ]
    return {
        "id": reference.pk,
        "version": reference.version,
        "status": reference.status,
        "status_display": reference.get_status_display(),
        "sentences": [
            {
                "id": s.pk,
                "text": s.text,
                "budget": s.budget,
                "hints": hints["sentences"][i],
                "acus": [
                    {
                        "id": a.pk,
                        "text": a.text,
                        "hints": hints["acus"][i][j],
                        "drafter": a.drafter,
                        "machine": a.machine,
                    }
                    for j, a in enumerate(s.acus.all())
                ],
                "drafts": [
                    {
                        "id": d.pk,
                        "text": d.text,
                        "drafter": d.drafter,
                        "hints": hints["drafts"][i][k],
                    }
                    for k, d in enumerate(pending[i])
                ],
            }
            for i, s in enumerate(sentences)
        ],
        "comments": comments,
        "history": _history(reference),
    }


def check_writer(reference: Reference, user) -> None:
    if reference.writer_id != user.pk:
        raise AuthoringError("This reference is assigned to another author.")
    if reference.status not in Reference.EDITABLE:
        raise AuthoringError(f"This reference is {reference.get_status_display().lower()}; it cannot be changed now.")


def save_reference(
    *, reference_id: int, user, base_version: int, sentences: list[dict], dismissed: list | None = None
) -> dict:
    """Store the writer's whole list of ACUs per sentence (the editor sends it after every
    change) and return the new state.

    `sentences`: [{"id": sentence id, "acus": [{"id": ACU id or None, "text": str, "draft":
    draft id when it is an accepted draft}]}], every sentence of the reference once;
    `dismissed`: ids of drafts the writer dismissed. Refused with VersionConflict when
    `base_version` is not the current version: another tab or person saved in between; with
    RefusedAcu (nothing stored) when an ACU's text cannot be stored.
    """
    with transaction.atomic():
        reference = Reference.objects.select_for_update(of=("self",)).select_related("document").get(pk=reference_id)
        check_writer(reference, user)
        if base_version != reference.version:
            raise VersionConflict(reference)
        own_sentences = {s.pk: s for s in reference.sentences.all()}
        if sorted(s.get("id") for s in sentences) != sorted(own_sentences):  # type: ignore[type-var]
            raise AuthoringError("The sentences sent do not match this reference; reload the page.")
        numbers = {pk: n for n, pk in enumerate(own_sentences, start=1)}  # the editor's sentence numbers
        save = _Save(reference, user)
        save.dismiss(dismissed or [])
        for entry in sentences:
            sentence = own_sentences[entry["id"]]
            position = 0
            for index, item in enumerate(entry.get("acus", [])):
                text = _clean(item, sentence.pk, numbers[sentence.pk], index)
                if not text:
                    continue
                if item.get("id") is None:
                    save.create(sentence, position, text, item.get("draft"))
                else:
                    save.update(item["id"], sentence, position, text)
                position += 1
        save.delete_unsent()
        reference.version += 1
        if reference.status == Reference.Status.TODO:
            reference.status = Reference.Status.WRITING
        reference.save(update_fields=["version", "status"])
    return reference_state(reference)


def _clean(item: dict, sentence_id: int, number: int, index: int) -> str:
    try:
        return clean_acu_text(item.get("text", ""), name=f"ACU {index + 1} of sentence {number}")
    except ValueError as exc:
        raise RefusedAcu(str(exc), sentence_id, index) from None


class _Save:
    """One save of a reference's ACUs, each change recorded in its history: the ACUs and pending
    drafts it had, those with crowd judgments (frozen), and the ACUs the save sent."""

    def __init__(self, reference: Reference, user) -> None:
        self.reference, self.user = reference, user
        self.existing = {a.pk: a for a in reference.acus.select_related("sentence")}
        self.judged = set(
            ACU.objects.filter(pk__in=self.existing, judgments__isnull=False).values_list("pk", flat=True)
        )
        self.drafts = {d.pk: d for d in reference.drafts.filter(status=DraftACU.Status.PENDING)}
        self.seen: set[int] = set()

    def record(self, action, acu=None, **fields) -> None:
        ACUChange.objects.create(reference=self.reference, acu=acu, user=self.user, action=action, **fields)

    def record_edit(self, acu: ACU, new: str) -> None:
        """An edit, folded into the writer's last edit of the ACU when that is recent."""
        last = ACUChange.objects.filter(reference=self.reference, acu=acu).order_by("-at", "-pk").first()
        if (
            last
            and last.user_id == self.user.pk
            and last.action == ACUChange.Action.EDIT
            and timezone.now() - last.at < COALESCE_EDITS
        ):
            last.new_text = new
            last.save(update_fields=["new_text", "at"])
        else:
            self.record(ACUChange.Action.EDIT, acu, old_text=acu.text, new_text=new)

    def dismiss(self, draft_ids: list) -> None:
        for draft_id in draft_ids:
            draft = self.drafts.pop(int(draft_id), None)
            if draft is None:
                continue  # already gone (dismissed in another save, or replaced by new drafts)
            draft.status = DraftACU.Status.DISMISSED
            draft.save(update_fields=["status"])
            self.record(
                ACUChange.Action.DISMISS,
                old_text=draft.text,
                old_sentence=draft.sentence.position,
                drafter=draft.drafter,
            )

    def create(self, sentence, position: int, text: str, draft_id) -> None:
        """A new ACU, written or an accepted draft (maybe edited: the old text is the drafter's)."""
        if draft_id not in (None, "") and (type(draft_id) not in (int, str) or not str(draft_id).isdecimal()):
            raise AuthoringError("A draft id must be a whole number; reload the page.")
        draft = self.drafts.pop(int(draft_id), None) if draft_id else None
        acu = ACU.objects.create(
            reference=self.reference,
            sentence=sentence,
            position=position,
            text=text,
            author=self.user,
            drafter=draft.drafter if draft else "",
        )
        if draft is None:
            self.record(ACUChange.Action.CREATE, acu, new_text=text, new_sentence=sentence.position)
            return
        draft.status = DraftACU.Status.ACCEPTED
        draft.acu = acu
        draft.save(update_fields=["status", "acu"])
        self.record(
            ACUChange.Action.ACCEPT,
            acu,
            old_text=draft.text,
            new_text=text,
            new_sentence=sentence.position,
            drafter=draft.drafter,
        )

    def update(self, acu_id: int, sentence, position: int, text: str) -> None:
        """An ACU of the reference, its text edited (not once judged), moved or reordered."""
        acu = self.existing.get(acu_id)
        if acu is None or acu_id in self.seen:
            raise AuthoringError("An ACU sent does not belong to this reference; reload the page.")
        self.seen.add(acu_id)
        fields = []
        if acu.text != text:
            if acu_id in self.judged:
                raise AuthoringError(f"“{acu.text}” has crowd judgments; its text is frozen.")
            self.record_edit(acu, text)
            acu.text = text
            fields.append("text")
            if acu.machine:  # a person corrected a machine unit: it is theirs now
                acu.machine = False
                acu.author = self.user
                fields += ["machine", "author"]
        if acu.sentence_id != sentence.pk:
            self.record(
                ACUChange.Action.MOVE,
                acu,
                old_text=acu.text,
                new_text=acu.text,
                old_sentence=acu.sentence.position,
                new_sentence=sentence.position,
            )
            acu.sentence = sentence
            fields.append("sentence")
        if acu.position != position:
            acu.position = position
            fields.append("position")
        if fields:
            acu.save(update_fields=fields + ["updated_at"])

    def delete_unsent(self) -> None:
        """The ACUs the save did not send are deleted (not one with crowd judgments)."""
        for acu_id in set(self.existing) - self.seen:
            acu = self.existing[acu_id]
            if acu_id in self.judged:
                raise AuthoringError(f"“{acu.text}” has crowd judgments; it cannot be deleted.")
            self.record(ACUChange.Action.DELETE, old_text=acu.text, old_sentence=acu.sentence.position)
            acu.delete()


# ---- review ------------------------------------------------------------------------------


def _pick_reviewer(reference: Reference):
    """The reviewer of the previous round if still an author, else the dataset's own author (not
    the writer) with the fewest references waiting for their review; None when it has no other."""
    candidates = dataset_authors(reference.document.dataset).exclude(pk=reference.writer_id)
    if reference.reviewer_id and candidates.filter(pk=reference.reviewer_id).exists():
        return reference.reviewer
    return (
        candidates.annotate(
            pending=Count("references_reviewing", filter=Q(references_reviewing__status=Reference.Status.IN_REVIEW))
        )
        .order_by("pending", "username")
        .first()
    )


def submit_for_review(*, reference_id: int, user, base_version: int | None = None) -> Reference:
    """Send the reference to review. With `base_version` (the writer's page's), refused when the
    reference changed since: a reviewer's comments sent back meanwhile are read, not resolved unseen."""
    with transaction.atomic():
        reference = Reference.objects.select_for_update().get(pk=reference_id)
        if reference.writer_id == user.pk and reference.status == Reference.Status.IN_REVIEW:
            by = f" ({reference.reviewer.username})" if reference.reviewer else ""
            raise AlreadyDone(f"Already sent to review{by}; nothing was sent again.")
        check_writer(reference, user)
        if base_version is not None and base_version != reference.version:
            raise AuthoringError(
                "This reference changed since this page was opened (in another tab, or a reviewer sent it "
                "back); nothing was sent. Read it below, then send it again."
            )
        if not reference.acus.exists():
            raise AuthoringError("Write at least one ACU before sending the reference to review.")
        reference.reviewer = _pick_reviewer(reference)
        reference.status = Reference.Status.IN_REVIEW
        reference.submitted_at = timezone.now()
        reference.version += 1
        reference.save(update_fields=["reviewer", "status", "submitted_at", "version"])
        # The writer has answered this round's comments by revising.
        reference.comments.filter(resolved_at__isnull=True).update(resolved_at=timezone.now())
    return reference


class StaleReview(AuthoringError):
    """A decision taken on a page of a reference that has changed since it was opened."""

    def __init__(self):
        super().__init__(
            "This reference changed since you opened it; nothing was decided. "
            "Read its current ACUs below and decide again."
        )


def check_seen(reference: Reference, base_version: int | None) -> None:
    """Refuses a decision on a reference whose version is not the one its page showed (None: a
    caller that shows no page, nothing to check)."""
    if base_version is not None and base_version != reference.version:
        raise StaleReview()


# A decision taken already (a second tab, Back, a double click): the verb of each decided state, which
# the reviewer's and the lead's refusals (annotation.lead_review) both say.
DECIDED: dict[str, str] = {Reference.Status.APPROVED: "approved", Reference.Status.CHANGES: "sent back"}


def _reviewable(reference_id: int, user, base_version: int | None = None, doing: str = "decided again") -> Reference:
    reference = Reference.objects.select_for_update().get(pk=reference_id)
    if reference.writer_id == user.pk:
        raise AuthoringError("You wrote this reference; another author must review it.")
    if reference.reviewer_id == user.pk and reference.status in DECIDED:
        raise AlreadyDone(f"You already {DECIDED[reference.status]} this reference; nothing was {doing}.")
    if reference.status != Reference.Status.IN_REVIEW:
        raise AuthoringError(f"This reference is {reference.get_status_display().lower()}, not in review.")
    if reference.reviewer_id not in (None, user.pk):
        raise AuthoringError("This reference is assigned to another reviewer.")
    check_seen(reference, base_version)
    if reference.reviewer_id is None:
        if not dataset_authors(reference.document.dataset).filter(pk=user.pk).exists():
            raise AuthoringError("Only the authors of this dataset proofread its references; ask the lead.")
        reference.reviewer = user  # claiming an unassigned review
        reference.save(update_fields=["reviewer"])
    return reference


def claim_review(*, reference_id: int, user) -> Reference:
    with transaction.atomic():
        return _reviewable(reference_id, user)


def add_comment(*, reference_id: int, user, text: str, acu_id: int | None = None) -> ReviewComment:
    try:
        text = clean_comment_text(text or "")
    except ValueError as exc:  # empty, too long, a control character
        raise AuthoringError(str(exc)) from None
    with transaction.atomic():
        reference = _reviewable(reference_id, user, doing="saved")
        acu = reference.acus.filter(pk=acu_id).first() if acu_id else None
        if acu_id and acu is None:
            raise AuthoringError("That ACU is not part of this reference.")
        return ReviewComment.objects.create(
            reference=reference, acu=acu, acu_text=acu.text if acu else "", author=user, text=text
        )


def request_changes(*, reference_id: int, user, base_version: int | None = None) -> Reference:
    with transaction.atomic():
        reference = _reviewable(reference_id, user, base_version)
        if not reference.comments.filter(resolved_at__isnull=True).exists():
            raise AuthoringError("Add at least one comment saying what to change.")
        reference.status = Reference.Status.CHANGES
        reference.version += 1
        reference.save(update_fields=["status", "version"])
    return reference


def approve(*, reference_id: int, user, base_version: int | None = None) -> Reference:
    """Approve the reference and its ACUs: from now on they can go into crowd tasks. With
    `base_version` (the review page's), refused when the reference changed since (StaleReview)."""
    with transaction.atomic():
        reference = _reviewable(reference_id, user, base_version)
        reference.acus.update(status=ACU.Status.APPROVED, updated_at=timezone.now())
        reference.comments.filter(resolved_at__isnull=True).update(resolved_at=timezone.now())
        reference.status = Reference.Status.APPROVED
        reference.approved_at = timezone.now()
        reference.version += 1
        reference.save(update_fields=["status", "approved_at", "version"])
    return reference


def usable_for_crowd(dataset: Dataset):
    """References whose ACUs may be shown to crowd workers: approved ones only."""
    return Reference.objects.filter(document__dataset=dataset, status=Reference.Status.APPROVED)


# ---- time on task and the lead's overview ------------------------------------------------


def record_time(*, reference_id: int, user, seconds: float, kind: str = AuthoringTime.Kind.WRITING) -> None:
    """Add active seconds reported by the page (idle time is already left out there)."""
    seconds = max(0.0, min(float(seconds), MAX_TIME_REPORT))
    if seconds == 0 or kind not in AuthoringTime.Kind.values:
        return
    row, _ = AuthoringTime.objects.get_or_create(reference_id=reference_id, user=user, kind=kind)
    AuthoringTime.objects.filter(pk=row.pk).update(seconds=F("seconds") + seconds)
