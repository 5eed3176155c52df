"""The Prolific provider's models: a batch's studies, participants' sessions, group members and bulk bonuses."""

from django.conf import settings
from django.db import models

from hits.models import Assignment, Batch, Worker


class ProlificStudy(models.Model):
    """A batch's study at Prolific: the main study whose places are work sessions, or the
    short screening study whose passers join the participant group the main study requires."""

    class Kind(models.TextChoices):
        MAIN = "main", "Work sessions"
        SCREENING = "screening", "Screening test"

    batch = models.ForeignKey(Batch, related_name="prolific_studies", on_delete=models.CASCADE)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # Empty until Prolific created the draft; the row (and its completion code) exists first,
    # so a resumed publication reuses the same code.
    study_id = models.CharField(max_length=64, blank=True, db_index=True)
    status = models.CharField(max_length=30, blank=True, help_text="Prolific's study status as last seen.")
    completion_code = models.CharField(max_length=40)
    hits_per_session = models.PositiveSmallIntegerField(default=1)
    estimated_minutes = models.PositiveIntegerField(default=1)
    reward_cents = models.PositiveIntegerField(default=0, help_text="Per place, in the account currency's minor unit.")
    places = models.PositiveIntegerField(default=0)
    # Screening: the group passers join. Main: the group it allow-lists (or block-lists).
    participant_group_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["batch", "kind"], name="prolific_study_unique_kind")]
        verbose_name_plural = "Prolific studies"

    def __str__(self):
        return f"{self.get_kind_display()} {self.study_id or '(not created)'} of {self.batch}"


class ProlificSession(models.Model):
    """One participant's place in the main study: K HITs worked through in a row.

    `session_id` is Prolific's SESSION_ID, i.e. the submission id; every assignment of the
    session carries it as its external_id.
    """

    class Status(models.TextChoices):
        ACTIVE = "active", "Working"
        COMPLETED = "completed", "Completed here"
        ABANDONED = "abandoned", "Abandoned"

    class Decision(models.TextChoices):
        NONE = "", "Not reviewed"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    batch = models.ForeignKey(Batch, related_name="prolific_sessions", on_delete=models.CASCADE)
    worker = models.ForeignKey(Worker, related_name="prolific_sessions", on_delete=models.PROTECT)
    session_id = models.CharField(max_length=64)
    study_id = models.CharField(max_length=64)
    size = models.PositiveSmallIntegerField(help_text="HITs handed out to this session.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    deadline = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    # Prolific's view of the submission (from the sync or a hook), e.g. "AWAITING REVIEW".
    submission_status = models.CharField(max_length=30, blank=True)
    # True once Prolific reported this submission for this participant.
    confirmed = models.BooleanField(default=False)
    decision = models.CharField(max_length=10, choices=Decision.choices, blank=True, default="")
    decided_at = models.DateTimeField(null=True, blank=True)
    flag = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["batch", "session_id"], name="prolific_session_unique_id")]
        indexes = [models.Index(fields=["status", "deadline"])]

    def assignments(self):
        return Assignment.objects.filter(
            hit__batch_id=self.batch_id, worker_id=self.worker_id, external_id=self.session_id
        )

    def __str__(self):
        return f"Prolific session {self.session_id} of {self.worker}"


class ProlificGroupMember(models.Model):
    """A participant to be in a Prolific participant group (a screening passer); the sync
    retries until Prolific accepted them."""

    group_id = models.CharField(max_length=64)
    worker = models.ForeignKey(Worker, related_name="prolific_groups", on_delete=models.CASCADE)
    batch = models.ForeignKey(Batch, null=True, blank=True, related_name="+", on_delete=models.SET_NULL)
    # The screening submission that earned the place, checked with Prolific before adding.
    submission_id = models.CharField(max_length=64, blank=True)
    added_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["group_id", "worker"], name="prolific_group_unique_member")]


class ProlificBonus(models.Model):
    """One bulk bonus at Prolific, recorded once by its key: set up, then paid at most once, and its
    ledger rows written once it is paid (by the request that paid it, or else by the sync)."""

    class State(models.TextChoices):
        NEW = "new", "Not sent"
        SET_UP = "set_up", "Set up at Prolific"
        SENT = "sent", "Pay call sent, outcome unknown"
        PAID = "paid", "Paid"

    key = models.CharField(max_length=100, unique=True)
    batch = models.ForeignKey(Batch, related_name="prolific_bonuses", on_delete=models.PROTECT)
    lines = models.JSONField(default=list, help_text='[{"session": pk, "submission": id, "amount": "0.50"}]')
    reason = models.TextField(blank=True)
    bulk_id = models.CharField(max_length=64, blank=True)
    total_cents = models.PositiveIntegerField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.NEW)
    error = models.TextField(blank=True)
    # The one HIT a bonus of `review.send_bonus` pays for: that service writes its ledger row (keyed
    # by its form), so the sync writes that same row when it is missing. Empty for a bulk bonus.
    assignment = models.ForeignKey(Assignment, null=True, blank=True, related_name="+", on_delete=models.PROTECT)
    # True once the ledger holds every row of this paid bonus (written or found by `record_paid`).
    recorded = models.BooleanField(default=False)
    # The lead who settled a bonus of unknown outcome (SENT) after checking at Prolific, and when:
    # Prolific's API has no call that reads a bulk bonus back (`bonuses.settle_unknown_bonus`).
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, related_name="+", on_delete=models.SET_NULL
    )
    settled_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)


class ProlificBonusSettlement(models.Model):
    """One settlement of a bonus of unknown outcome (`bonuses.settle_unknown_bonus`): who found it paid
    or not paid at Prolific, and when. A bonus may be settled more than once (not paid, its form sent
    again, its answer lost again, then paid), so each is a row of its own; the bonus's `settled_by`
    and `settled_at` are the latest."""

    bonus = models.ForeignKey(ProlificBonus, related_name="settlements", on_delete=models.CASCADE)
    paid = models.BooleanField()
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, related_name="+", on_delete=models.SET_NULL
    )
    settled_at = models.DateTimeField()

    class Meta:
        ordering = ["settled_at", "pk"]
