"""A lead sets a dataset's length-normalization strength alpha (RoSE: 2 CNN/DM, 5 XSum, 0.5 SamSum)."""

import logging

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from config.roles import LEAD, role_required

from ..importing import DatasetImportError
from ..importing.formats import check_alpha
from ..models import Dataset

logger = logging.getLogger(__name__)


@role_required(LEAD)
@require_POST
def set_alpha(request, dataset_id: int):
    """Store a new alpha; stored scores become stale and are recomputed with it."""
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    try:
        alpha = check_alpha(request.POST.get("length_alpha", "").strip())
    except DatasetImportError as exc:
        messages.error(request, str(exc))
        return redirect("dataset_detail", dataset.pk)
    old = dataset.length_alpha
    Dataset.objects.filter(pk=dataset.pk).update(length_alpha=alpha)
    logger.info("dataset %s: length alpha %s -> %s by %s", dataset.pk, old, alpha, request.user)
    messages.success(request, f"Length normalization α set to {alpha:g} (was {old:g}); scores are recomputed with it.")
    return redirect("dataset_detail", dataset.pk)
