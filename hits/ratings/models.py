"""A worker's 1-5 rating of one summary in a rating batch's assignment (hits.ratings): the answers
of the submission, as a Judgment is of an ACU batch's. It belongs to the hits app (registered by
hits.apps); its counted ratings are projected to the rating round (hits.services.ratings)."""

from django.db import models

from annotation.models import Summary
from hits.models import Assignment


class Rating(models.Model):
    assignment = models.ForeignKey(Assignment, related_name="ratings", on_delete=models.CASCADE)
    summary = models.ForeignKey(Summary, related_name="+", on_delete=models.PROTECT)
    score = models.PositiveSmallIntegerField()

    class Meta:
        app_label = "hits"
        constraints = [
            models.UniqueConstraint(fields=["assignment", "summary"], name="rating_unique_summary"),
            models.CheckConstraint(condition=models.Q(score__gte=1, score__lte=5), name="rating_1_to_5"),
        ]
