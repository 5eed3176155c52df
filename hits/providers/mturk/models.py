"""The MTurk provider's model: answers posted from MTurk's task page, held until a sync confirms them."""

from django.db import models

from hits.models import HIT, QualificationTest


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
