"""The model of collusion flags (adaptive allocation, hits/allocation/service.py flag_collusion), beside
hits.models, which is at its size limit; it belongs to the hits app (hits.apps imports it)."""

from django.db import models

from hits.models import Batch, Worker


class CollusionFlag(models.Model):
    """Two workers of an adaptive batch who agree with each other far above what their gold
    accuracy explains (scoring.stats.gold_evidence.collusion): shown to the lead, who decides;
    nothing is stopped or excluded by a flag. Lifted by the lead: not flagged again in this batch."""

    batch = models.ForeignKey(Batch, related_name="collusion_flags", on_delete=models.CASCADE)
    first = models.ForeignKey(Worker, related_name="+", on_delete=models.CASCADE)
    second = models.ForeignKey(Worker, related_name="+", on_delete=models.CASCADE)
    common = models.PositiveIntegerField()  # ACUs both judged
    agreed = models.PositiveIntegerField()  # ... with the same answer
    explained = models.FloatField()  # the most agreement their gold accuracy explains
    p_value = models.FloatField()
    flagged_at = models.DateTimeField(auto_now_add=True)
    lifted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["batch", "first", "second"], name="collusion_flag_unique")]
