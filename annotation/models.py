"""Datasets and what they hold: documents, references split into sentences, systems,
system summaries and the Atomic Content Units (ACUs) of each reference."""

from django.conf import settings
from django.core.validators import MaxLengthValidator
from django.db import models

from .text import MAX_ACU_CHARS


class Dataset(models.Model):
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    source_format = models.CharField(max_length=20, blank=True, help_text="pyramid, rose or authored")
    # Normalization strength of the length-normalized ACU score (RoSE: 2 for CNN/DM).
    length_alpha = models.FloatField(default=2.0)
    # Authoring guidelines shown beside the ACU editor; empty means the built-in text.
    guidelines = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Document(models.Model):
    dataset = models.ForeignKey(Dataset, related_name="documents", on_delete=models.CASCADE)
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(help_text="Order of the document in its dataset.")
    source = models.TextField()

    class Meta:
        ordering = ["dataset", "position"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="document_unique_external_id"),
        ]

    def __str__(self):
        return self.external_id


class Reference(models.Model):
    class Status(models.TextChoices):
        TODO = "todo", "To do"
        WRITING = "writing", "Writing"
        IN_REVIEW = "in_review", "In review"
        CHANGES = "changes", "Changes requested"
        APPROVED = "approved", "Approved"

    # States in which the writer may change the ACUs.
    EDITABLE = (Status.TODO, Status.WRITING, Status.CHANGES)

    document = models.OneToOneField(Document, related_name="reference", on_delete=models.CASCADE)
    word_count = models.PositiveIntegerField()
    # Only approved references (their ACUs written and proofread) go into crowd tasks.
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.TODO)
    writer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, related_name="references_writing", on_delete=models.SET_NULL
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, related_name="references_reviewing", on_delete=models.SET_NULL
    )
    # Bumped by every saved change: a save based on an older version is a conflict.
    version = models.PositiveIntegerField(default=0)
    submitted_at = models.DateTimeField(null=True, blank=True)
    approved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["writer", "status"]), models.Index(fields=["reviewer", "status"])]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences.all())

    def __str__(self):
        return f"Reference of {self.document}"


class ReferenceTally(models.Model):
    """A change to a dataset's count of references in one authoring state, written by the
    database (annotation.tallies): the overview sums a few rows, not the dataset's references."""

    # No foreign-key constraint: a cascade may write a row for a dataset it deletes next.
    dataset = models.ForeignKey(Dataset, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")
    status = models.CharField(max_length=20)
    n = models.BigIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["dataset", "status"], name="reference_tally_key")]


class ReferenceSentence(models.Model):
    class Budget(models.TextChoices):
        UNSET = "", "Not budgeted"
        HUMAN = "human", "Human ACUs"
        MACHINE = "machine", "Machine units"

    reference = models.ForeignKey(Reference, related_name="sentences", on_delete=models.CASCADE)
    position = models.PositiveIntegerField()
    text = models.TextField()
    # Set by the lead's human-unit budget (scoring.drafts.unit_budget): who writes this sentence's units,
    # and the predicted machine error that ranked it.
    budget = models.CharField(max_length=10, choices=Budget.choices, blank=True, default="")
    predicted_error = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["reference", "position"]
        constraints = [
            models.UniqueConstraint(fields=["reference", "position"], name="sentence_unique_position"),
        ]

    def __str__(self):
        return self.text[:80]


class System(models.Model):
    dataset = models.ForeignKey(Dataset, related_name="systems", on_delete=models.CASCADE)
    name = models.CharField(max_length=200)

    class Meta:
        ordering = ["dataset", "name"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name"], name="system_unique_name")]

    def __str__(self):
        return self.name


class Summary(models.Model):
    document = models.ForeignKey(Document, related_name="summaries", on_delete=models.CASCADE)
    system = models.ForeignKey(System, related_name="summaries", on_delete=models.CASCADE)
    text = models.TextField()
    word_count = models.PositiveIntegerField()

    class Meta:
        ordering = ["document", "system"]
        verbose_name_plural = "summaries"
        constraints = [models.UniqueConstraint(fields=["document", "system"], name="summary_unique_system")]

    def __str__(self):
        return f"{self.system} on {self.document}"


class ACU(models.Model):
    """One atomic fact of a reference, attached to the sentence it comes from.

    The text of an ACU that has judgments is frozen (see `annotation.services.acus.edit_acu`):
    a judgment always means the exact text the worker saw.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        APPROVED = "approved", "Approved"

    reference = models.ForeignKey(Reference, related_name="acus", on_delete=models.CASCADE)
    sentence = models.ForeignKey(ReferenceSentence, related_name="acus", on_delete=models.CASCADE)
    position = models.PositiveIntegerField(help_text="Order within its sentence.")
    text = models.TextField(validators=[MaxLengthValidator(MAX_ACU_CHARS)])
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    # The drafter that proposed this ACU ("" = typed by a person), and whether it is a machine
    # unit placed by the human-unit budget that no person wrote or accepted.
    drafter = models.CharField(max_length=20, blank=True, default="")
    machine = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "ACU"
        ordering = ["reference", "sentence__position", "position"]
        indexes = [models.Index(fields=["sentence", "position"])]

    def __str__(self):
        return self.text[:80]


class ACUChange(models.Model):
    """The authoring history: who changed which ACU when, with the old and new text."""

    class Action(models.TextChoices):
        CREATE = "create", "Created"
        EDIT = "edit", "Edited"
        MOVE = "move", "Moved"
        DELETE = "delete", "Deleted"
        ACCEPT = "accept", "Accepted draft"
        DISMISS = "dismiss", "Dismissed draft"
        MACHINE = "machine", "Machine unit"

    reference = models.ForeignKey(Reference, related_name="changes", on_delete=models.CASCADE)
    acu = models.ForeignKey(ACU, null=True, blank=True, related_name="changes", on_delete=models.SET_NULL)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=10, choices=Action.choices)
    old_text = models.TextField(blank=True)
    new_text = models.TextField(blank=True)
    old_sentence = models.PositiveIntegerField(null=True, blank=True)
    new_sentence = models.PositiveIntegerField(null=True, blank=True)
    drafter = models.CharField(
        max_length=20, blank=True, default="", help_text="The drafter of an accepted or dismissed draft."
    )
    at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["at", "pk"]


class ReviewComment(models.Model):
    """A reviewer's remark on one ACU (or on the whole reference when acu is empty)."""

    reference = models.ForeignKey(Reference, related_name="comments", on_delete=models.CASCADE)
    acu = models.ForeignKey(ACU, null=True, blank=True, related_name="comments", on_delete=models.SET_NULL)
    acu_text = models.TextField(blank=True, help_text="The ACU as the reviewer saw it.")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]


class AuthoringTime(models.Model):
    """Active (non-idle) seconds a user spent writing or reviewing one reference."""

    class Kind(models.TextChoices):
        WRITING = "writing", "Writing"
        REVIEW = "review", "Review"

    reference = models.ForeignKey(Reference, related_name="times", on_delete=models.CASCADE)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.WRITING)
    seconds = models.FloatField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["reference", "user", "kind"], name="authoring_time_unique"),
        ]


class DraftACU(models.Model):
    """A drafter's proposal for one sentence, shown to the writer until accepted or dismissed."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        DISMISSED = "dismissed", "Dismissed"

    reference = models.ForeignKey(Reference, related_name="drafts", on_delete=models.CASCADE)
    sentence = models.ForeignKey(ReferenceSentence, related_name="drafts", on_delete=models.CASCADE)
    position = models.PositiveIntegerField()
    text = models.TextField()
    drafter = models.CharField(max_length=20)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    acu = models.ForeignKey(ACU, null=True, blank=True, related_name="drafts", on_delete=models.SET_NULL)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["sentence__position", "position", "pk"]
        indexes = [models.Index(fields=["reference", "status"])]

    def __str__(self):
        return f"{self.drafter}: {self.text[:70]}"


class DraftJob(models.Model):
    """A lead's drafting job on a whole dataset, run as a Celery task whose progress is polled:
    pre-drafting every empty sentence, or applying the human-unit budget (scoring.drafts.unit_budget.service)."""

    class Kind(models.TextChoices):
        PREDRAFT = "predraft", "Pre-drafting"
        BUDGET = "budget", "Human-unit budget"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    dataset = models.ForeignKey(Dataset, related_name="draft_jobs", on_delete=models.CASCADE)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.PREDRAFT)
    drafter = models.CharField(max_length=20)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    drafts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]


# ---- rating protocols (RoSE §5): Prior, Ref-free and Ref-based ratings of summaries -----------


class RatingRound(models.Model):
    """One round of protocol ratings of a dataset's summaries: imported from a file (RoSE's
    protocol study) or collected here. Its ratings and any ACU scores it brought are read
    together by the Protocols page (scoring/protocols)."""

    class Kind(models.TextChoices):
        IMPORTED = "imported", "Imported"
        CROWD = "crowd", "Collected here"

    dataset = models.ForeignKey(Dataset, related_name="rating_rounds", on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.IMPORTED)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["dataset", "created_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name"], name="rating_round_unique_name")]

    def __str__(self):
        return self.name


class ProtocolRating(models.Model):
    """A 1-5 score of one summary under one protocol, by one rater (``rater`` empty: the mean
    of ``ratings`` anonymous ratings, as RoSE's protocol files give them)."""

    class Protocol(models.TextChoices):
        PRIOR = "prior", "Prior"
        REF_FREE = "ref_free", "Ref-free"
        REF_BASED = "ref_based", "Ref-based"

    round = models.ForeignKey(RatingRound, related_name="ratings", on_delete=models.CASCADE)
    summary = models.ForeignKey(Summary, related_name="protocol_ratings", on_delete=models.CASCADE)
    protocol = models.CharField(max_length=10, choices=Protocol.choices)
    rater = models.CharField(max_length=100, blank=True, default="")
    score = models.FloatField()
    ratings = models.PositiveSmallIntegerField(default=1, help_text="How many ratings the score is the mean of.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "summary", "protocol", "rater"], name="protocol_rating_unique"),
            models.CheckConstraint(condition=models.Q(score__gte=1, score__lte=5), name="protocol_rating_1_to_5"),
        ]
        indexes = [models.Index(fields=["round", "protocol"])]


class SummaryACUScore(models.Model):
    """An ACU score of one summary brought by a rating round (RoSE's protocol file carries the
    ACU and normalized ACU scores of the rated summaries, without the ACUs)."""

    round = models.ForeignKey(RatingRound, related_name="acu_scores", on_delete=models.CASCADE)
    summary = models.ForeignKey(Summary, related_name="imported_acu_scores", on_delete=models.CASCADE)
    acu = models.FloatField()
    normalized_acu = models.FloatField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["round", "summary"], name="summary_acu_score_unique")]
