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
        APPROVED = "approved", "Approved"

    document = models.OneToOneField(Document, related_name="reference", on_delete=models.CASCADE)
    word_count = models.PositiveIntegerField()
    # Only approved references (their ACUs written and proofread) go into crowd tasks.
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.TODO)

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
