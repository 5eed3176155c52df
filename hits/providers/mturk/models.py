"""The MTurk provider's models: answers posted from MTurk's task page, held until a sync confirms
them, and bonuses marked before their pay call."""

from django.conf import settings
from django.db import models

from hits.models import HIT, Assignment, Batch, QualificationTest


class MTurkHeldSubmission(models.Model):
    """Answers posted from MTurk's task page (or our qualification page opened from an MTurk HIT)
    for an (assignmentId, workerId) MTurk has not yet reported: held here, taking no place and writing no Worker or Assignment row, until a sync
    finds that worker's submitted assignment in ListAssignmentsForHIT (then they become an
    Assignment with its judgments; the other held rows of that HIT and worker are dropped)."""

    class Kind(models.TextChoices):
        TASK = "task", "Task answers"
        QUALIFICATION = "qualification", "Qualification test answers"

    hit = models.ForeignKey(HIT, related_name="mturk_held", on_delete=models.CASCADE)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.TASK)
    # The test taken (kind qualification), graded once MTurk reports the assignment.
    test = models.ForeignKey(QualificationTest, null=True, blank=True, related_name="+", on_delete=models.CASCADE)
    assignment_id = models.CharField(max_length=64)
    worker_id = models.CharField(max_length=64)
    answers = models.JSONField(help_text="{acu id: present}")
    comment = models.TextField(blank=True)
    active_seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    @staticmethod
    def attempt_id(assignment_id: str) -> str:
        """The external id of the qualification attempt graded from an assignment's answers (once)."""
        return f"mturk:{assignment_id}"

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hit", "assignment_id", "worker_id", "kind"], name="mturk_held_unique_assignment"
            )
        ]


class MTurkBonus(models.Model):
    """A bonus of `review.send_bonus` on MTurk, marked (committed) before its SendBonus call, so money
    that left always has a trace: `sent` until MTurk answers (a call whose answer was lost stays so:
    it may have paid), `paid` once MTurk answered or lists it paid (ListBonusPayments), `not_paid` when
    MTurk refused it. Until its ledger row (keyed by its form, `hits.ledger.bonus_key`) is written, the
    budget check counts it as spent (`MTurkProvider.unsettled_spend`); the sync writes a paid one's
    row, once (`hits.providers.mturk.bonuses.record_paid_bonuses`)."""

    class State(models.TextChoices):
        SENT = "sent", "Pay call sent, outcome unknown"
        PAID = "paid", "Paid"
        NOT_PAID = "not_paid", "Refused by MTurk, not paid"

    token = models.CharField(max_length=60, unique=True, help_text="The bonus form's one-time token.")
    batch = models.ForeignKey(Batch, related_name="mturk_bonuses", on_delete=models.PROTECT)
    assignment = models.ForeignKey(Assignment, related_name="+", on_delete=models.PROTECT)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    reason = models.TextField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.SENT)
    error = models.TextField(blank=True)
    # True once the ledger holds its row (written by the request that paid it, or by the sync).
    recorded = models.BooleanField(default=False)
    # When the sync found a bonus of unknown outcome (sent) paid at MTurk: `paid` is final, so this
    # settlement happens at most once (a `sent` bonus MTurk does not list stays sent, counted as spent).
    settled_at = models.DateTimeField(null=True, blank=True)
    # When MTurk was last asked about it (ListBonusPayments: the sync, or the lead's re-check) and
    # answered: a `sent` bonus it did not list then stays sent, counted as spent, with this date.
    checked_at = models.DateTimeField(null=True, blank=True)
    # The lead who sent it: the ledger row the sync writes names them, as the request's would.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, related_name="+", on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
