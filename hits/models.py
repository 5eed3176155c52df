"""Crowd work: batches (or imported label rounds), HITs, workers, assignments and judgments.

A judgment always belongs to an assignment of a worker on a HIT of a batch, whether it came
from the crowd or from an imported label file, so scoring treats both alike.
"""
from django.conf import settings
from django.db import models

from annotation.models import ACU, Dataset, Summary


class Worker(models.Model):
    class Provider(models.TextChoices):
        INHOUSE = "inhouse", "In-house"
        MTURK = "mturk", "Amazon Mechanical Turk"
        PROLIFIC = "prolific", "Prolific"
        IMPORTED = "imported", "Imported labels"

    provider = models.CharField(max_length=20, choices=Provider.choices)
    external_id = models.CharField(max_length=200)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, related_name="worker", on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "external_id"], name="worker_unique_external_id"),
        ]

    def __str__(self):
        return f"{self.provider}:{self.external_id}"


class Batch(models.Model):
    """A round of judgments: a crowd batch, or a read-only set of imported labels."""

    class Kind(models.TextChoices):
        CROWD = "crowd", "Crowd batch"
        IMPORTED = "imported", "Imported labels"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        PUBLISHED = "published", "Published"
        COMPLETE = "complete", "Complete"

    dataset = models.ForeignKey(Dataset, related_name="batches", on_delete=models.CASCADE)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.CROWD)
    provider = models.CharField(max_length=20, choices=Worker.Provider.choices, default=Worker.Provider.INHOUSE)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    assignments_per_hit = models.PositiveSmallIntegerField(default=3)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["dataset", "created_at"]
        verbose_name_plural = "batches"

    @property
    def read_only(self) -> bool:
        return self.kind == self.Kind.IMPORTED

    def __str__(self):
        return self.name


class HIT(models.Model):
    """One system summary with all ACUs of its reference (as in RoSE)."""

    batch = models.ForeignKey(Batch, related_name="hits", on_delete=models.CASCADE)
    summary = models.ForeignKey(Summary, related_name="hits", on_delete=models.CASCADE)
    max_assignments = models.PositiveSmallIntegerField(default=3)

    class Meta:
        verbose_name = "HIT"
        constraints = [models.UniqueConstraint(fields=["batch", "summary"], name="hit_unique_summary")]

    def __str__(self):
        return f"HIT {self.pk} ({self.summary})"


class Assignment(models.Model):
    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Assigned"
        SUBMITTED = "submitted", "Submitted"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        EXPIRED = "expired", "Expired"

    # Judgments of these assignments count in scores and exports.
    COUNTED = (Status.SUBMITTED, Status.APPROVED)

    hit = models.ForeignKey(HIT, related_name="assignments", on_delete=models.CASCADE)
    worker = models.ForeignKey(Worker, related_name="assignments", on_delete=models.PROTECT)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ASSIGNED)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    active_seconds = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hit", "worker"], name="assignment_unique_worker")]

    def __str__(self):
        return f"Assignment {self.pk} of {self.worker} on HIT {self.hit_id}"


class Judgment(models.Model):
    """One worker's answer: is this ACU present in this HIT's summary?"""

    assignment = models.ForeignKey(Assignment, related_name="judgments", on_delete=models.CASCADE)
    # PROTECT: an ACU with judgments can be neither deleted nor (by the services) edited.
    acu = models.ForeignKey(ACU, related_name="judgments", on_delete=models.PROTECT)
    present = models.BooleanField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "acu"], name="judgment_unique_acu")]
