"""The lead's decisions on a reference in review (assign a reviewer, approve, send back).

Security behavior: leads only (never on a reference they wrote); every action is a POST and
returns to the review page (a GET, the sign-in page's way back after a session ended, decides nothing).
"""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect

from annotation import lead_review
from annotation.models import Reference
from annotation.services.authoring import AlreadyDone, AuthoringError
from annotation.views.after_sign_in import get_goes_back
from config.roles import LEAD, role_required


@role_required(LEAD)
@get_goes_back("authoring_review", "Nothing was decided yet: do it again.")
def lead_action(request, reference_id: int, action: str):
    seen = _int(request.POST.get("version"))  # the version the page showed: a decision on it only
    try:
        if action == "assign":
            reference = lead_review.assign_reviewer(
                reference_id=reference_id, reviewer_id=_int(request.POST.get("reviewer")), by=request.user
            )
            messages.success(request, f"{reference.reviewer.username} now reviews this reference.")
        elif action == "approve":
            lead_review.lead_approve(reference_id=reference_id, by=request.user, base_version=seen)
            messages.success(request, "Approved: its ACUs can now be used in crowd tasks.")
        elif action == "changes":
            lead_review.lead_send_back(
                reference_id=reference_id, by=request.user, text=request.POST.get("text", ""), base_version=seen
            )
            messages.success(request, "Sent back to the writer with your comment.")
        else:
            messages.error(request, "Unknown action.")
    except AlreadyDone as exc:  # the same decision again: not an error
        messages.info(request, str(exc))
    except AuthoringError as exc:
        messages.error(request, str(exc))
    except Reference.DoesNotExist:
        raise Http404("No such reference.") from None
    return redirect("authoring_review", reference_id=reference_id)


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
