"""Datasets and what they hold: documents, references split into sentences, systems,
system summaries and the Atomic Content Units (ACUs) of each reference."""
from django.conf import settings
from django.db import models


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


class ReferenceSentence(models.Model):
    reference = models.ForeignKey(Reference, related_name="sentences", on_delete=models.CASCADE)
    position = models.PositiveIntegerField()
    text = models.TextField()

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

    The text of an ACU that has judgments is frozen (see `annotation.services.edit_acu`):
    a judgment always means the exact text the worker saw.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        APPROVED = "approved", "Approved"

    reference = models.ForeignKey(Reference, related_name="acus", on_delete=models.CASCADE)
    sentence = models.ForeignKey(ReferenceSentence, related_name="acus", on_delete=models.CASCADE)
    position = models.PositiveIntegerField(help_text="Order within its sentence.")
    text = models.TextField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
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

    reference = models.ForeignKey(Reference, related_name="changes", on_delete=models.CASCADE)
    acu = models.ForeignKey(ACU, null=True, blank=True, related_name="changes", on_delete=models.SET_NULL)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=10, choices=Action.choices)
    old_text = models.TextField(blank=True)
    new_text = models.TextField(blank=True)
    old_sentence = models.PositiveIntegerField(null=True, blank=True)
    new_sentence = models.PositiveIntegerField(null=True, blank=True)
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
