"""Batches (or imported label rounds), their pay buckets, their HITs and the versions of a dataset's rounds."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models.functions import Cast

from annotation.models import ACU, Dataset, RatingRound, Summary, System
from hits.models.workers import QualificationTest, Worker


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
    # A `pairs` batch's triage: "always" (at creation; stored too for a batch with no held-back triage) or
    # "spammers" (the form's and the API's default with a triage and gold HITs: held back until its gold round is bought,
    # then on only if the gold shows workers at chance: hits.services.triage_when). The decision's record:
    # `triage_state` (empty: no decision to take; pending, on or off), when, and what it read (shares and counts).
    triage_when = models.CharField(
        max_length=10, choices=[("always", "always"), ("spammers", "spammers")], default="always"
    )

    class TriageState(models.TextChoices):
        NONE = "", "none"
        PENDING = "pending", "pending"
        ON = "on", "on"
        OFF = "off", "off"

    triage_state = models.CharField(max_length=8, blank=True, default="", choices=TriageState.choices)
    triage_decided_at = models.DateTimeField(null=True, blank=True)
    triage_decision = models.JSONField(null=True, blank=True)
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
    # An adaptive batch's gold guard (hits/allocation/guard.py, issue 43): when its rule, replayed on its gold
    # answers, agreed with the experts less than fixed places' majority (a one-sided 95% bound), when it
    # stopped saving (every pair or HIT left settles after at least the fixed places) and the figures
    # (hits.allocation.gold_guard.GoldCheck.as_dict with the sentence the batch page shows). Empty: saving.
    gold_guard_at = models.DateTimeField(null=True, blank=True)
    gold_guard = models.JSONField(null=True, blank=True)
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
    def machine_decides(self) -> bool:
        """Whether the triage run's labels count for the pairs no HIT carries (scoring/runs/triage.py): a
        triage decided at creation, or one held back and turned on; not while pending, nor once off."""
        return self.triage_run_id is not None and self.triage_state in (self.TriageState.NONE, self.TriageState.ON)

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

    @property
    def label(self) -> str:
        """'1–5' ('21+' without an upper bound), as `hits.money.Bucket.label`."""
        return f"{self.min_acus}–{self.max_acus}" if self.max_acus is not None else f"{self.min_acus}+"

    def __str__(self):
        # No currency sign: the batch's currency is its provider's (`money_currency`, above the
        # models); the admin's Reward column shows the amount in it.
        return f"{self.label} ACUs: {self.reward}"


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


class BatchRequest(models.Model):
    """A `POST /api/batches/` sent with an `Idempotency-Key`: the key (per lead), a digest of the
    body it came with and the batch it made, so a retried request is answered with that batch
    instead of making a second draft (hits.services.batches.create_batch_once). Written in the
    transaction that makes the batch: a request that fails leaves no key behind."""

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="+", on_delete=models.CASCADE)
    key = models.CharField(max_length=255)
    body_digest = models.CharField(max_length=64)
    batch = models.ForeignKey(Batch, null=True, related_name="+", on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["created_by", "key"], name="batch_request_key_unique")]
