"""Signals other apps listen to (scoring recomputes after changed judgments, refits after submissions)."""

from django.dispatch import Signal

submission_stored = Signal()  # kwargs: batch_id, dataset_id, adaptive (the batch's allocation policy is adaptive)
# Sent after the commit of every write that changed the counted judgments of a dataset (and,
# with batch_id, of that round): `hits.versions.bump`. kwargs: dataset_id, batch_id, rating (whether
# the batch is a rating batch; None when the writer did not know).
judgments_changed = Signal()
