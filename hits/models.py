"""Crowd work: batches (or imported label rounds), pay buckets, HITs, workers, assignments,
judgments, the qualification test and the money ledger. A crowd provider's own models live in
its package (hits/providers/<name>/models.py) and belong to this app too (hits.apps).

A judgment always belongs to an assignment of a worker on a HIT of a batch, whether it came
from the crowd or from an imported label file, so scoring treats both alike.
"""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models.functions import Cast

from annotation.models import ACU, Dataset, RatingRound, Summary, System


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
    score = models.FloatField(default=0)
    passed = models.BooleanField(default=False)
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
                condition=~models.Q(external_id=""),
                name="qualification_attempt_once_per_submission",
            )
        ]


class Batch(models.Model):
    """A round of judgments: a crowd batch, or a read-only set of imported labels."""

    class Kind(models.TextChoices):
        CROWD = "crowd", "Crowd batch"
        # Expert labels imported with a dataset (their workers' provider is `expert`).
        IMPORTED = "imported", "Imported labels"
        # Crowd labels imported from an export of ours, each under its worker and provider: read-only,
        # never gold (hits.services.dataset_import).
        IMPORTED_CROWD = "imported_crowd", "Imported crowd labels"
        MACHINE = "machine", "Machine judge"
        # Authors and leads label summaries on the task page: no pay, no provider (hits.services.expert).
        EXPERT = "expert", "Expert labels (made here)"

    # The rounds whose labels are the gold: known answers of qualification tests and gold HITs,
    # worker quality and the judges' expert target (hits.gold). One rule, read everywhere.
    EXPERT_KINDS = (Kind.IMPORTED, Kind.EXPERT)
    # The rounds of crowd labels: batches made here and crowd labels imported from an export of ours.
    CROWD_KINDS = (Kind.CROWD, Kind.IMPORTED_CROWD)

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        PUBLISHING = "publishing", "Publishing"
        PUBLISHED = "published", "Published"
        STOPPED = "stopped", "Stopped"
        COMPLETE = "complete", "Complete"

    dataset = models.ForeignKey(Dataset, related_name="batches", on_delete=models.CASCADE)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.CROWD)
    provider = models.CharField(max_length=20, choices=Worker.Provider.choices, default=Worker.Provider.INHOUSE)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    systems = models.ManyToManyField(System, blank=True, related_name="batches")
    assignments_per_hit = models.PositiveSmallIntegerField(default=3)
    lifetime_seconds = models.PositiveIntegerField(default=7 * 24 * 3600)
    assignment_duration_seconds = models.PositiveIntegerField(default=3600)
    auto_approve_seconds = models.PositiveIntegerField(default=3 * 24 * 3600)
    qualification_test = models.ForeignKey(
        QualificationTest, null=True, blank=True, related_name="batches", on_delete=models.PROTECT
    )
    gold_share = models.FloatField(default=0.0, help_text="Share of HITs with known answers, scored per worker.")
    target_hourly_rate = models.DecimalField(max_digits=6, decimal_places=2, default=Decimal("12.00"))
    budget = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    title = models.CharField(max_length=200, default="Check which facts a summary contains")
    description = models.TextField(
        default="Read a short summary and decide, for each listed fact, whether the summary states it."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    published_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    # Provider settings (MTurk: sandbox, requirements, qualification mode); no credentials.
    provider_config = models.JSONField(default=dict, blank=True)
    # The last provider failure, shown to the lead until a later call succeeds.
    last_error = models.TextField(blank=True)
    # A triage batch: HITs carry only the ACUs this judge run was unsure of at this confidence;
    # the others are labelled by the machine (hits/triage.py).
    triage_run = models.ForeignKey(
        "JudgeRun", null=True, blank=True, related_name="triage_batches", on_delete=models.PROTECT
    )
    triage_confidence = models.FloatField(null=True, blank=True)
    # The lead allowed a triage run marked "not for ranking" (hits.triage.check_triage_source).
    triage_allow_not_for_ranking = models.BooleanField(default=False)
    # Summaries the triage decided wholly, HITs not made (hits.selectors.covered_summaries reads them).
    decided_summaries = models.ManyToManyField("annotation.Summary", related_name="+", blank=True)
    # How many places a HIT gets (hits/allocation/policy.py): `fixed` (assignments_per_hit each) or
    # `adaptive` (allocation_min first, one more per decision while an ACU of the HIT is
    # unsettled at allocation_threshold, up to allocation_max; hits/places.py opens them). The
    # labels are the values, as in the batch field spec (one enum in the API schema).
    # `pairs` (adaptive by ACU, hits/allocation/service.py decide_pairs): follow-up HITs ask new workers only a summary's open ACUs.
    allocation = models.CharField(
        max_length=10, choices=[("fixed", "fixed"), ("adaptive", "adaptive"), ("pairs", "pairs")], default="fixed"
    )
    allocation_min = models.PositiveSmallIntegerField(default=2)
    allocation_max = models.PositiveSmallIntegerField(default=5)
    allocation_threshold = models.FloatField(default=0.9)
    # Set: the summary-level rule (a HIT is settled when the sd of its ACU share is at most this);
    # empty: the per-ACU rule at allocation_threshold (hits/allocation/policy.py).
    allocation_max_sd = models.FloatField(null=True, blank=True)
    # The lead's opt-in (adaptive batches): a worker at chance (hits.allocation.policy.at_chance) after at
    # least this many judgments on ACUs judged twice gets no more of this batch's work and is
    # excluded (as the lead's Exclude); the lead can lift it. Empty: off.
    stop_after = models.PositiveIntegerField(null=True, blank=True)
    # The class prior of the batch's latest Dawid-Skene fit (empty: not fitted yet, 0.5 is used).
    allocation_prior = models.FloatField(null=True, blank=True)
    # `pairs`: the judge run whose calibrated probability is each pair's prior (empty: allocation_prior).
    allocation_judge_run = models.ForeignKey(
        "JudgeRun", null=True, blank=True, related_name="prior_batches", on_delete=models.PROTECT
    )
    # Set by the lead: the handout serves published batches of one provider with a higher
    # priority first; batches of equal priority take turns (hits.services.handout).
    priority = models.SmallIntegerField(default=0, db_default=0)
    # A rating batch (RoSE §5, hits/ratings): one HIT per example, every summary of it rated 1-5 under
    # this protocol (prior, ref_free, ref_based) with these instructions (empty: the protocol's own);
    # its counted ratings are its rating round's (annotation.ProtocolRating). Empty: an ACU batch.
    protocol = models.CharField(max_length=10, blank=True, default="", db_default="")
    instructions = models.TextField(blank=True, default="", db_default="")
    rating_round = models.ForeignKey(
        RatingRound, null=True, blank=True, related_name="batches", on_delete=models.PROTECT
    )
    # None listed: every worker of the provider; else only these take its places (the demo's open batch).
    reserved_for = models.ManyToManyField(Worker, blank=True, related_name="reserved_batches")

    class Meta:
        ordering = ["dataset", "created_at"]
        verbose_name_plural = "batches"

    @property
    def read_only(self) -> bool:
        return self.kind in (self.Kind.IMPORTED, self.Kind.IMPORTED_CROWD, self.Kind.MACHINE)

    def __str__(self):
        return self.name


class PayBucket(models.Model):
    """HITs with min_acus..max_acus ACUs pay `reward` (max_acus empty: no upper bound)."""

    batch = models.ForeignKey(Batch, related_name="buckets", on_delete=models.CASCADE)
    min_acus = models.PositiveIntegerField()
    max_acus = models.PositiveIntegerField(null=True, blank=True)
    reward = models.DecimalField(max_digits=6, decimal_places=2)
    external_type_id = models.CharField(max_length=100, blank=True, help_text="MTurk HITTypeId")

    class Meta:
        ordering = ["batch", "min_acus"]

    def hits(self):
        """The batch's HITs whose ACU count falls in this bucket."""
        hits = self.batch.hits.filter(acu_count__gte=self.min_acus)
        return hits if self.max_acus is None else hits.filter(acu_count__lte=self.max_acus)

    def __str__(self):
        top = self.max_acus if self.max_acus is not None else "∞"
        return f"{self.min_acus}–{top} ACUs: ${self.reward}"


# The share of a HIT's places still open (the handout's fair order and its index).
OPEN_SHARE = Cast("open_places", models.FloatField()) / models.F("max_assignments")


class HIT(models.Model):
    """One system summary with all ACUs of its reference (as in RoSE)."""

    batch = models.ForeignKey(Batch, related_name="hits", on_delete=models.CASCADE)
    summary = models.ForeignKey(Summary, related_name="hits", on_delete=models.CASCADE)
    max_assignments = models.PositiveSmallIntegerField(default=3)
    acu_count = models.PositiveIntegerField(default=0)
    reward = models.DecimalField(max_digits=6, decimal_places=2, default=Decimal("0.00"))
    # Known answers {acu id: bool} when this is a gold HIT, scored per worker.
    gold_answers = models.JSONField(null=True, blank=True)
    # The provider's id of this HIT (MTurk's HITId), set once it is published there.
    external_id = models.CharField(max_length=100, blank=True, db_index=True)
    # The ACU ids this HIT asks about, in order, when it carries only some (a triage batch);
    # empty: every ACU of the summary's reference.
    acu_ids = models.JSONField(null=True, blank=True)
    # Places not held by an active assignment: max_assignments - active assignments, kept in
    # the transaction that changes them (hits.places), so a handout reads one row, not a count.
    open_places = models.PositiveSmallIntegerField(default=0)
    # An adaptive batch's HIT: whether the last decision found every ACU settled, and the
    # places opened beyond the batch's minimum (hits/places.py, in the deciding submission's transaction).
    # db_default too: rows inserted outside the ORM (benchmarks, bulk loads) get them as well
    settled = models.BooleanField(default=False, db_default=False)
    extra_places = models.PositiveSmallIntegerField(default=0, db_default=0)
    # The places the provider was last told this HIT has (MTurk's MaxAssignments); empty for
    # in-house work. Below max_assignments: an opened place still to push (hits/allocation/service.py).
    provider_places = models.PositiveSmallIntegerField(null=True, blank=True)
    # Where the HIT falls in its batch's order, as a share of the batch (0 <= turn < 1): among
    # batches of equal priority the handout picks the emptiest HIT with the lowest turn, so
    # the batches take turns instead of the oldest going first.
    turn = models.FloatField(default=0.0, db_default=0.0)
    # The batch's priority doubled, plus 1 on a `pairs` batch's gold HIT (hits.services.batches.hit_priority),
    # so the handout's fair order is one partial index of HIT columns (`hit_fair_pick`).
    priority = models.SmallIntegerField(default=0, db_default=0)
    # 0: the summary's HIT in its batch; k > 0: its k-th follow-up (`pairs` allocation: one place asking
    # only the summary's open ACUs, hits/allocation/service.py decide_pairs).
    follow_up = models.PositiveSmallIntegerField(default=0, db_default=0)

    class Meta:
        verbose_name = "HIT"
        constraints = [
            models.UniqueConstraint(fields=["batch", "summary", "follow_up"], name="hit_unique_summary_follow_up")
        ]
        indexes = [
            # Only HITs with a free place, per batch, fullest-last: the handout's pick.
            models.Index(
                "batch",
                models.F("open_places").desc(),
                "id",
                name="hit_open_places",
                condition=models.Q(open_places__gt=0),
            ),
            # The handout's fair order across batches (hits.services.handout.FAIR_ORDER), so
            # the pick reads the first matching HITs instead of sorting every open one.
            models.Index(
                models.F("priority").desc(),
                OPEN_SHARE.desc(),
                "turn",
                "id",
                name="hit_fair_pick",
                condition=models.Q(open_places__gt=0),
            ),
        ]

    def task_acus(self):
        """The ACUs this HIT asks about, in reference order (a triage HIT: only its uncertain ones)."""
        acus = ACU.objects.filter(reference__document_id=self.summary.document_id).order_by(
            "sentence__position", "position"
        )
        return acus.filter(pk__in=self.acu_ids) if self.acu_ids else acus

    def __str__(self):
        return f"HIT {self.pk} ({self.summary})"


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


class JudgeRun(models.Model):
    """A machine round: one judge (lexical, learned, embedding, nli, llm) with its model and parameters
    judging every (summary, ACU) pair of a dataset. Its batch (kind `machine`) makes it a round
    beside the crowd's, but its judgments live in MachineJudgment, never among the human
    Judgment rows, so they can never enter the human majority or the human alpha."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    batch = models.OneToOneField(Batch, related_name="judge_run", on_delete=models.CASCADE)
    judge = models.CharField(max_length=20)
    model = models.CharField(max_length=500, blank=True)
    params = models.JSONField(default=dict, blank=True)
    # The judge code's version and this run's number among the dataset's runs of that judge.
    judge_version = models.CharField(max_length=40, blank=True)
    version = models.PositiveIntegerField(default=1)
    # Options given when starting it (device, model directory, ...).
    options = models.JSONField(default=dict, blank=True)
    # The human round it is calibrated against and compared with (empty: all human judgments).
    label_round = models.ForeignKey(Batch, null=True, blank=True, related_name="+", on_delete=models.SET_NULL)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    pairs_total = models.PositiveIntegerField(default=0)
    pairs_done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # Logistic calibration (per fold and on all labels) and the figures of scoring/machine/runs.py.
    calibration = models.JSONField(default=dict, blank=True)
    figures = models.JSONField(default=dict, blank=True)
    # The learned judge's fitted model (scoring/stats/learned.py: format, version, feature names,
    # standardisation, coefficients, training set and its out-of-fold figures); empty for others.
    fitted = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    # Started from a page or the API of the embedded server, on its background thread
    # (config/dispatch.dispatch_long): if that server stops mid-run the run never ends by itself.
    in_background = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"{self.judge} v{self.version} ({self.model or 'no model'})"

    @property
    def has_probabilities(self) -> bool:
        """Finished and calibrated on human labels: its scores are probabilities (a prior, a triage)."""
        return self.status == self.Status.DONE and bool(self.calibration.get("target"))


class MachineJudgment(models.Model):
    """A judge's answer for one (summary, ACU) pair: its raw score and, once calibrated, the
    probability that the ACU is present (out-of-fold where the pair had a label)."""

    run = models.ForeignKey(JudgeRun, related_name="judgments", on_delete=models.CASCADE)
    summary = models.ForeignKey(Summary, related_name="+", on_delete=models.CASCADE)
    # CASCADE, unlike human judgments: a machine run is reproducible, so it never freezes an ACU
    # (an author may still delete or edit it; rerun the judge for figures about the new text).
    acu = models.ForeignKey(ACU, related_name="machine_judgments", on_delete=models.CASCADE)
    raw = models.FloatField()
    # Further raw scores of the judge (nli: p2c, l2c, p3c, l3c).
    scores = models.JSONField(null=True, blank=True)
    probability = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "summary", "acu"], name="machine_judgment_unique")]


class RoundVersion(models.Model):
    """A counter per dataset and round (round_id 0: the whole dataset), bumped in the same
    transaction as anything that changes which judgments count (a submission, a rejection, an
    exclusion, a provider confirmation, an import), so a scoring run is stale exactly when the
    version it recorded is not the current one: one indexed row read (hits.versions)."""

    dataset = models.ForeignKey(Dataset, related_name="round_versions", on_delete=models.CASCADE)
    round_id = models.PositiveIntegerField(default=0, help_text="The round's batch id; 0 for the whole dataset.")
    # The version is the sum over a few stripes, so concurrent submissions bump different rows
    # instead of queueing on one row lock until they commit.
    stripe = models.PositiveSmallIntegerField(default=0)
    version = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["dataset", "round_id", "stripe"], name="round_version_unique")]
