"""The crowd's workers and the qualification test: who may work, and the gold that decides it."""

from django.conf import settings
from django.db import models

from annotation.models import ACU, Dataset, Summary


class Worker(models.Model):
    class Provider(models.TextChoices):
        INHOUSE = "inhouse", "In-house"
        MTURK = "mturk", "Amazon Mechanical Turk"
        PROLIFIC = "prolific", "Prolific"
        PANEL = "panel", "Participant panel"
        # Expert labels: imported with a dataset, or made on our task page in an expert round
        # (hits.services.expert); they are the gold (hits.gold), never a worker to pay or block.
        EXPERT = "expert", "Expert labels"

    provider = models.CharField(max_length=20, choices=Provider.choices)
    external_id = models.CharField(max_length=200)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, related_name="worker", on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    blocked_at = models.DateTimeField(null=True, blank=True)
    block_reason = models.TextField(blank=True)
    # Left out of every score and agreement figure (a lead's decision, reversible).
    excluded = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "external_id"], name="worker_unique_external_id"),
        ]

    @property
    def blocked(self) -> bool:
        return self.blocked_at is not None

    @property
    def is_expert(self) -> bool:
        """Expert labels, not a crowd worker: nothing to pay, block, exclude or flag."""
        return self.provider == self.Provider.EXPERT

    def __str__(self):
        return f"{self.provider}:{self.external_id}"


class QualificationTest(models.Model):
    """A test built from gold items; workers must pass it before they get HITs."""

    dataset = models.ForeignKey(Dataset, related_name="qualification_tests", on_delete=models.CASCADE)
    name = models.CharField(max_length=200)
    pass_score = models.FloatField(default=0.8, help_text="Share of ACUs answered correctly needed to pass.")
    max_attempts = models.PositiveSmallIntegerField(default=2)
    retry_after_hours = models.PositiveIntegerField(default=24)
    created_at = models.DateTimeField(auto_now_add=True)
    # The provider's qualification type per environment, e.g. {"mturk-sandbox": "3ABC..."}.
    external_ids = models.JSONField(default=dict, blank=True)
    # The gold items are a random sample drawn with this seed (random per test); a rotation
    # draws a new sample with a new seed (hits.services.qualification.rotate_gold).
    seed = models.BigIntegerField(default=0)
    rotated_at = models.DateTimeField(null=True, blank=True)
    # The lead offers it to batches of other datasets too (hits.selectors.tests_for_batches).
    shared = models.BooleanField(
        default=False, db_default=False, help_text="Offered to the batches of other datasets as well."
    )
    # The items are a pool: each attempt shows a sheet of this many of them (hits.sheets; 0: all).
    sheet_items = models.PositiveSmallIntegerField(default=0, db_default=0)
    # Failed attempts at one pool before the lead is alerted and the pool redrawn (0: never).
    failure_budget = models.PositiveIntegerField(default=15, db_default=15)
    budget_spent_at = models.DateTimeField(null=True, blank=True)  # the alert, until the lead dismisses it
    auto_rotations = models.PositiveIntegerField(default=0, db_default=0)

    def __str__(self):
        return self.name


class GoldItem(models.Model):
    """A summary with the known answer for each ACU of its reference."""

    test = models.ForeignKey(QualificationTest, related_name="items", on_delete=models.CASCADE)
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE)
    position = models.PositiveSmallIntegerField()
    answers = models.JSONField(help_text="{acu id: true/false}")

    class Meta:
        ordering = ["test", "position"]


class ExpertDecision(models.Model):
    """A lead's decision on an ACU of a summary whose experts disagreed in an expert round: the
    label the gold takes (hits.gold.known_answers); until it exists the summary is no gold."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="expert_decisions")
    acu = models.ForeignKey(ACU, on_delete=models.CASCADE, related_name="expert_decisions")
    present = models.BooleanField()
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["summary", "acu"], name="expert_decision_once")]


class QualificationAttempt(models.Model):
    test = models.ForeignKey(QualificationTest, related_name="attempts", on_delete=models.CASCADE)
    worker = models.ForeignKey(Worker, related_name="qualification_attempts", on_delete=models.CASCADE)
    answers = models.JSONField(default=dict)
    correct = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    # The score the decision was taken on: the balanced accuracy of this sheet together with the
    # worker's undecided sheets just before it (hits.services.qualification.submit_attempt).
    score = models.FloatField(default=0)
    passed = models.BooleanField(default=False)
    # False: not decided yet (the evidence was too thin to fail): no attempt used, no wait.
    decided = models.BooleanField(default=True, db_default=True)
    # This sheet's facts right and shown per class (the evidence the next sheet adds to).
    present_right = models.PositiveIntegerField(default=0, db_default=0)
    present = models.PositiveIntegerField(default=0, db_default=0)
    absent_right = models.PositiveIntegerField(default=0, db_default=0)
    absent = models.PositiveIntegerField(default=0, db_default=0)
    submitted_at = models.DateTimeField(auto_now_add=True)
    # The provider submission the attempt was made in (a Prolific screening submission), once each.
    external_id = models.CharField(max_length=100, blank=True, default="")
    items = models.JSONField(default=list, blank=True)  # the gold items of its sheet (ids; [] before pools)
    # The network it came from, keyed (hits.sheets.network), for a screening whose ids anyone can make up.
    network = models.CharField(max_length=32, blank=True, default="", db_default="")

    class Meta:
        ordering = ["submitted_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["test", "external_id"],
                condition=~models.Q(external_id="") & models.Q(decided=True),
                name="qualification_attempt_once_per_submission",
            )
        ]
