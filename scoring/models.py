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
    outputs = models.JSONField(default=dict)
    # NOTE: a copy of outputs["alpha"] (scores runs): the agreement trend and the live poll read
    # this small column and never the outputs (up to 1 MB, read whole for any key of it).
    alpha = models.JSONField(null=True, blank=True, help_text="Both alphas of a scores run (outputs['alpha']).")
    # NOTE: the outputs without their per-summary values ("summaries", 0.9 MB of a RoSE-scale
    # round): what the pages read, so that showing a table never unpacks the whole outputs.
    # None for runs stored before it (read from the outputs).
    digest = models.JSONField(null=True, blank=True, help_text="The outputs but 'summaries' (scores runs).")
    # NOTE: the parts of the outputs the systems and the workers page show (and the systems page's
    # scatter as Chart.js JSON), as JSON text written once when the run is stored (scoring.results.page_data):
    # read as stored, where the same parts of the digest are unpacked and converted on every request.
    # Empty for runs stored before them (read from the digest).
    systems_page = models.TextField(blank=True, default="", help_text="The systems page's parts (JSON text).")
    workers_page = models.TextField(blank=True, default="", help_text="The workers page's parts (JSON text).")
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


class RecomputeRequest(models.Model):
    """Coalesces recomputes of a dataset (round_id 0) or one round: a burst of asks sets
    `queued` once and enqueues one task; the flag expires (see scoring.runs.recompute)."""

    dataset = models.ForeignKey(Dataset, related_name="recompute_requests", on_delete=models.CASCADE)
    round_id = models.PositiveIntegerField(default=0, help_text="The round's batch id; 0 for the whole dataset.")
    queued = models.BooleanField(default=False)
    queued_at = models.DateTimeField(null=True, blank=True)
    requested_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["dataset", "round_id"], name="one_recompute_request_per_round")]


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
