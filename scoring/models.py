"""Stored scoring runs and imported automatic metric scores.

Machine rounds are not here: `hits.models.JudgeRun` and `MachineJudgment` live in hits, because a
machine round is a round (a Batch of kind `machine`) and a triage batch points at its judge run;
hits sits below scoring, so the rows stay there and everything that computes or shows them is
`scoring/machine/`."""

from django.db import models

from annotation.models import Dataset, Document, System


class ScoringRun(models.Model):
    """One computation with its inputs, parameters, time and outputs, so every figure on a
    dashboard can be traced to the judgments behind it and agreement shown over time."""

    class Kind(models.TextChoices):
        SCORES = "scores", "Scores and agreement"
        POWER = "power", "Power analysis"
        METRICS = "metrics", "Metric correlations"
        # A rating round's power per protocol (scoring/protocols/cached.py), asked for by a lead.
        PROTOCOL_POWER = "protocol_power", "Power per rating protocol"

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    dataset = models.ForeignKey(Dataset, related_name="scoring_runs", on_delete=models.CASCADE)
    batch = models.ForeignKey(
        "hits.Batch", null=True, blank=True, related_name="scoring_runs", on_delete=models.SET_NULL
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.SCORES)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    trigger = models.CharField(max_length=40, blank=True, help_text="command, page, submissions, ...")
    parameters = models.JSONField(default=dict)
    inputs = models.JSONField(default=dict, help_text="What was read: counts, last judgment id, excluded workers.")
    # NOTE: a scores run's large parts (per-summary values, the workers table, the scatter sample:
    # ~1 MB of a RoSE-scale round) are in ScoringRunDetail, so the outputs stay small: PostgreSQL
    # reads a run's whole outputs for each JSON key looked up (the agreement trend reads 200 runs).
    outputs = models.JSONField(default=dict, help_text="The run's results (a scores run's large parts aside).")
    progress = models.FloatField(default=0.0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]
        indexes = [
            models.Index(fields=["dataset", "kind", "status"]),
            # The latest run of a scope and the trend's newest runs: one index range, in order.
            models.Index(fields=["dataset", "batch", "kind", "status", "-started_at", "-id"], name="scoringrun_latest"),
        ]


class ScoringRunDetail(models.Model):
    """The large parts of a scores run, each stored once and read only by the page or export that
    shows it (one row by primary key), so the run's own outputs stay small."""

    PARTS = ("summaries", "workers", "length_scatter")  # the keys of a scores run's outputs stored here

    run = models.OneToOneField(ScoringRun, primary_key=True, related_name="detail", on_delete=models.CASCADE)
    summaries = models.JSONField(
        default=dict, help_text="Per summary {ids, acu, normalized_acu, words}: lists in the same order (exports)."
    )
    workers = models.JSONField(default=dict, help_text="The workers table (workers page and API).")
    length_scatter = models.JSONField(
        default=dict, help_text="The summaries the systems page's scatter draws (sampled when stored)."
    )


class RecomputeRequest(models.Model):
    """Coalesces the recomputes of a scope, of its scores (a dataset, round_id 0, or one round) or
    of an adaptive batch's worker estimates (`task` "refit", round_id the batch): a burst of asks
    sets `queued` once and dispatches one task; the flag expires (see scoring.runs.recompute)."""

    class Task(models.TextChoices):
        SCORES = "scores", "Scores"
        REFIT = "refit", "Worker estimates of an adaptive batch"

    dataset = models.ForeignKey(Dataset, related_name="recompute_requests", on_delete=models.CASCADE)
    round_id = models.PositiveIntegerField(default=0, help_text="The round's batch id; 0 for the whole dataset.")
    task = models.CharField(max_length=10, choices=Task.choices, default=Task.SCORES, db_default=Task.SCORES)
    queued = models.BooleanField(default=False)
    queued_at = models.DateTimeField(null=True, blank=True)
    requested_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "round_id", "task"], name="one_recompute_request_per_task")
        ]


class MetricScore(models.Model):
    """An automatic metric's score of one system summary (imported)."""

    dataset = models.ForeignKey(Dataset, related_name="metric_scores", on_delete=models.CASCADE)
    document = models.ForeignKey(Document, on_delete=models.CASCADE)
    system = models.ForeignKey(System, on_delete=models.CASCADE)
    metric = models.CharField(max_length=100)
    value = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "system", "metric"], name="metric_score_unique"),
        ]


class MetricUpload(models.Model):
    """A metric file a lead uploaded, parsed by a task (scoring.runs.metric_uploads) with its
    progress; the file's bytes are kept only until the task has read them."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Importing"
        DONE = "done", "Imported"
        FAILED = "failed", "Refused"

    dataset = models.ForeignKey(Dataset, related_name="metric_uploads", on_delete=models.CASCADE)
    name = models.CharField(max_length=255)
    data = models.BinaryField(default=b"")
    size = models.PositiveBigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    lines = models.PositiveIntegerField(default=0, help_text="Lines in the file.")
    lines_read = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    superseded_at = models.DateTimeField(
        null=True, blank=True, help_text="A refused upload: when scores were stored after it (its error is old news)."
    )

    def percent(self) -> int:
        return min(100, round(100 * self.lines_read / self.lines)) if self.lines else 0
