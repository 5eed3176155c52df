"""The participant panel's models: a participant's session and the ledger rows paid at the panel."""

from django.conf import settings
from django.db import models

from hits.models import Assignment, Batch, LedgerEntry, Worker


class PanelSession(models.Model):
    """One panel participant's session of a batch: up to `size` tasks taken one at a time.

    A place (an assignment) is taken only when a task starts; `key` is the external id of the
    session's assignments. One session per participant and batch, so the same link resumes it."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Working"
        COMPLETED = "completed", "Completed"
        IDLE = "idle", "Idle (place given back)"

    batch = models.ForeignKey(Batch, related_name="panel_sessions", on_delete=models.CASCADE)
    worker = models.ForeignKey(Worker, related_name="panel_sessions", on_delete=models.PROTECT)
    key = models.CharField(max_length=40, unique=True)
    size = models.PositiveSmallIntegerField(help_text="Tasks in this session.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True, help_text="When the id was first seen: its first Start.")
    completed_at = models.DateTimeField(null=True, blank=True)
    address = models.CharField(
        max_length=45, blank=True, default="", help_text="The client address of the first Start (shown to the lead)."
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["batch", "worker"], name="panel_session_unique_worker")]

    def assignments(self):
        return Assignment.objects.filter(hit__batch_id=self.batch_id, worker_id=self.worker_id, external_id=self.key)

    def __str__(self):
        return f"Panel session {self.key} of {self.worker}"


class PanelPayment(models.Model):
    """A ledger row the lead paid at the panel (from a downloaded list), recorded once."""

    class List(models.TextChoices):
        APPROVAL = "approval", "Approval list"
        BONUS = "bonus", "Bonus list"

    entry = models.OneToOneField(LedgerEntry, related_name="panel_payment", on_delete=models.PROTECT)
    batch = models.ForeignKey(Batch, related_name="panel_payments", on_delete=models.CASCADE)
    paid_list = models.CharField(max_length=10, choices=List.choices)
    paid_at = models.DateTimeField(auto_now_add=True)
    paid_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
