"""Machine judges: a judge run (a machine batch) and its judgment of every pair."""

from django.conf import settings
from django.db import models

from annotation.models import ACU, Summary
from hits.models.batches import Batch


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
    # The llm judge's spending and progress by summary (scoring/machine/answers.py): calls,
    # retries, replies, replies_without_usage, prompt/completion/total_tokens (null: the endpoint
    # reported none, unknown), summaries, answered, reused, resumed; empty for other judges.
    llm_usage = models.JSONField(default=dict, blank=True)

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


class LLMAnswer(models.Model):
    """What the llm judge's endpoint answered for one summary of a run, stored as it arrives (a
    chunk at a time) so that a run interrupted by a crash, a stopped worker, Ctrl-C or an endpoint
    outage resumes without asking again. `key` is a digest of everything that determines the
    answer (model, endpoint, temperature, prompt version, the messages with the summary and its
    ACUs' texts): an answer is reused only for the very same question. A new run reuses the
    answer an earlier run (of any dataset) got for the same key by copying it into its own rows
    (`from_run` set; scoring.machine.answers.RunAnswers.borrow), so deleting that earlier run
    takes nothing from it."""

    run = models.ForeignKey(JudgeRun, related_name="llm_answers", on_delete=models.CASCADE)
    key = models.CharField(max_length=64, db_index=True)
    # P(present) per fact, in the order the prompt numbers them.
    probabilities = models.JSONField()
    # The usage the endpoint reported for this answer (null: none reported) and the requests it took
    # (a copy: null and 0, this run paid nothing for it).
    usage = models.JSONField(null=True, blank=True)
    requests = models.PositiveIntegerField(default=1)
    # A copy of an earlier run's answer: the id of the run that asked (a plain number, not a key:
    # that run may have been deleted since); null: this run asked the endpoint itself.
    from_run = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "key"], name="llm_answer_unique")]
