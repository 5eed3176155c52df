"""The work itself: a worker's estimate on a batch, assignments and their judgments.

A judgment always belongs to an assignment of a worker on a HIT of a batch, whether it came
from the crowd or from an imported label file, so scoring treats both alike.
"""

from django.conf import settings
from django.db import models

from annotation.models import ACU
from hits.models.batches import HIT, Batch
from hits.models.workers import Worker


class WorkerEstimate(models.Model):
    """A worker's current estimates in an adaptive batch (refitted after submissions by
    scoring/runs/worker_estimates.py): Dawid-Skene anchored to the batch's gold (the allocation
    decision reads those of a HIT's workers) and what gold alone says of the worker (the stop
    reads that)."""

    batch = models.ForeignKey(Batch, related_name="worker_estimates", on_delete=models.CASCADE)
    worker = models.ForeignKey(Worker, related_name="estimates", on_delete=models.CASCADE)
    sensitivity = models.FloatField()
    specificity = models.FloatField()
    labels = models.PositiveIntegerField(default=0)
    # Judgments on ACUs someone else judged too.
    judged = models.PositiveIntegerField(default=0, db_default=0)
    # Gold: judgments on gold ACUs, and the 95% upper credible bound of sensitivity + specificity - 1
    # on them (null: no fit with gold yet); `gold` holds the counts and credible intervals shown
    # as evidence (scoring.stats.gold_evidence).
    gold_judged = models.PositiveIntegerField(default=0, db_default=0)
    chance_upper = models.FloatField(null=True, blank=True)
    gold = models.JSONField(default=dict, blank=True)
    # Stopped in this batch (gold shows the worker near chance: hits.allocation.service.stop_at_chance),
    # and why; their judgments leave this batch's aggregation (hits.selectors.counted). Lifted by the
    # lead: never stopped again in this batch.
    stopped_at = models.DateTimeField(null=True, blank=True)
    stop_reason = models.TextField(blank=True)
    stop_lifted_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["batch", "worker"], name="worker_estimate_unique")]


class Assignment(models.Model):
    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Assigned"
        SUBMITTED = "submitted", "Submitted"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        EXPIRED = "expired", "Expired"

    # Judgments of these assignments count in scores and exports.
    COUNTED = (Status.SUBMITTED, Status.APPROVED)
    # These hold one of the HIT's places.
    ACTIVE = (Status.ASSIGNED, Status.SUBMITTED, Status.APPROVED)

    hit = models.ForeignKey(HIT, related_name="assignments", on_delete=models.CASCADE)
    worker = models.ForeignKey(Worker, related_name="assignments", on_delete=models.PROTECT)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ASSIGNED)
    created_at = models.DateTimeField(auto_now_add=True)
    deadline = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # When it was released unanswered before its time ran out (its worker gave it back, or a block
    # took it back): stored as expired like a task whose time ran out, this tells the two apart
    # once the deadline has passed (hits.services.submission.taken_back). Null otherwise.
    released_at = models.DateTimeField(null=True, blank=True)
    active_seconds = models.FloatField(null=True, blank=True)
    comment = models.TextField(blank=True)
    feedback = models.TextField(blank=True, help_text="The lead's reason for a rejection.")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, related_name="+", on_delete=models.SET_NULL
    )
    gold_correct = models.PositiveIntegerField(null=True, blank=True)
    gold_total = models.PositiveIntegerField(null=True, blank=True)
    # The provider's own id (MTurk's AssignmentId, Prolific's submission id).
    external_id = models.CharField(max_length=200, blank=True, db_index=True)
    # Judgments count only once the provider confirmed this assignment for this worker
    # (in-house work is confirmed by being ours; MTurk's by a sync).
    confirmed = models.BooleanField(default=True)
    # Something the lead must look at, e.g. "MTurk reports it submitted, we hold no answers".
    flag = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["hit", "worker"], name="assignment_unique_worker"),
            # One open in-house assignment per worker (provider work carries the provider's id:
            # a Prolific session holds several at once).
            models.UniqueConstraint(
                fields=["worker"],
                name="assignment_one_open_inhouse",
                condition=models.Q(status="assigned", external_id=""),
            ),
        ]
        indexes = [models.Index(fields=["status", "deadline"])]

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
