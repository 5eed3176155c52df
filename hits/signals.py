"""Signals other apps listen to (scoring recomputes after submissions)."""

from django.dispatch import Signal

submission_stored = Signal()  # kwargs: batch_id, dataset_id, adaptive (the batch's allocation policy is adaptive)
