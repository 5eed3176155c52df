"""The lead's human-unit budget, posted from the authoring page.

Security behavior: leads only; a POST that ranks the sentences, assigns references and
writes machine units, then returns to the dataset's authoring page with a message.
"""
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation.authoring import AuthoringError
from annotation.drafting import DrafterError
from annotation.models import Dataset
from annotation.roles import LEAD, role_required

from .budget_service import BudgetError, apply_budget
from .judges import JudgeUnavailable


@role_required(LEAD)
@require_POST
def budget(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    try:
        share = float(request.POST.get("percent", "")) / 100
        result = apply_budget(
            dataset=dataset, share=share, drafter=request.POST.get("drafter", "rules"),
            author_ids=[int(x) for x in request.POST.getlist("authors")] or None,
        )
    except ValueError:
        messages.error(request, "Give the budget as a percentage of sentences, e.g. 40.")
    except (BudgetError, DrafterError, JudgeUnavailable, AuthoringError) as exc:
        messages.error(request, str(exc))
    else:
        given = ", ".join(f"{u} {n}" for u, n in result["assigned"].items())
        messages.success(
            request,
            f"Budget {share:.0%}: {result['human']} sentences for authors, {result['machine']} filled with "
            f"{result['machine_units']} machine units ({result['method']})." + (f" Assigned: {given}." if given else ""),
        )
    return redirect("authoring_overview", dataset_id=dataset.pk)
