"""Money and provider calls: the ledger (every money event once), the tally, and each provider call."""

from decimal import Decimal

from django.conf import settings
from django.db import models

from hits.models.batches import Batch
from hits.models.work import Assignment
from hits.models.workers import Worker


class LedgerEntry(models.Model):
    """Money, recorded once: the unique key makes a repeated approval or bonus a no-op."""

    class Kind(models.TextChoices):
        REWARD = "reward", "Reward"
        BONUS = "bonus", "Bonus"
        FEE = "fee", "Provider fee"

    batch = models.ForeignKey(Batch, related_name="ledger", on_delete=models.PROTECT)
    worker = models.ForeignKey(Worker, related_name="ledger", on_delete=models.PROTECT)
    assignment = models.ForeignKey(Assignment, null=True, blank=True, related_name="ledger", on_delete=models.PROTECT)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    key = models.CharField(max_length=100, unique=True)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        verbose_name_plural = "ledger entries"


class Tally(models.Model):
    """A change to one of a batch's running counts, written by the database (hits.tallies).

    PostgreSQL triggers append a row per statement that changes HITs, assignments or ledger
    entries, whatever code path ran it (ORM, bulk update, COPY, cascade delete); a periodic
    compaction folds a key's rows into one. A count is the sum of its key's rows, so readers
    touch a few rows per batch, never its assignments. Rows are only ever inserted and folded,
    never updated, so concurrent writers never wait for each other.
    """

    # No foreign-key constraint: a cascade may write a row for a batch it deletes next
    # (the compaction drops rows of batches that are gone).
    batch = models.ForeignKey(Batch, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")
    # "hits", an assignment status, "submissions" (per minute) or "ledger:<kind>".
    what = models.CharField(max_length=30)
    # For "submissions": the minute since the epoch; 0 for running totals.
    minute = models.BigIntegerField(default=0)
    n = models.BigIntegerField(default=0)
    amount = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal("0.00"))

    class Meta:
        indexes = [models.Index(fields=["batch", "what", "minute"], name="tally_key")]


class ProviderCall(models.Model):
    """One call to an outside provider and its outcome, shown to the lead."""

    batch = models.ForeignKey(Batch, null=True, blank=True, related_name="provider_calls", on_delete=models.CASCADE)
    action = models.CharField(max_length=60)
    target = models.CharField(max_length=200, blank=True)
    ok = models.BooleanField()
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]


# ---- Machine judges ---------------------------------------------------------------------
