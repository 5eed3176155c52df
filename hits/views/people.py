"""The lead's People page: add authors, workers and leads with their role (no admin groups needed),
change a person's role, deactivate or reactivate a person, reset a password.

Security behavior: leads only; every change is a POST; a generated password is shown once, to the lead who made it.
"""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from config.roles import LEAD, ROLES, role_required
from hits.services.people import PeopleError, add_person, people_by_role, reset_password, set_active, set_role


@role_required(LEAD)
def people(request):
    entered = {}
    if request.method == "POST":
        try:
            user, password = add_person(
                username=request.POST.get("username", ""),
                role=request.POST.get("role", ""),
                password=request.POST.get("password", ""),
                email=request.POST.get("email", ""),
                by=request.user,
            )
        except PeopleError as exc:
            messages.error(request, str(exc))
            # Shown again as typed (not the password), so the lead corrects and sends it again.
            entered = {k: request.POST.get(k, "").strip() for k in ("username", "role", "email")}
        else:
            shown = "" if request.POST.get("password") else f" Password (shown once): {password}"
            messages.success(request, f"{user.username} can now log in as {request.POST.get('role')}.{shown}")
            return redirect("people")
    rows = people_by_role()
    counts = {role: sum(role in r["roles"] for r in rows) for role in ROLES}
    return render(
        request,
        "hits/people.html",
        {
            "rows": rows,
            "inactive": people_by_role(active=False),
            "roles": ROLES,
            "counts": counts,
            "entered": entered,
            "chosen_role": entered.get("role") or "author",
        },
        status=400 if entered else 200,
    )


@role_required(LEAD)
@require_POST
def person_action(request, user_id: int, action: str):
    try:
        if action == "deactivate":
            user = set_active(user_id=user_id, active=False, by=request.user)
            messages.success(request, f"{user.username} can no longer sign in; their work stays.")
        elif action == "reactivate":
            user = set_active(user_id=user_id, active=True, by=request.user)
            messages.success(request, f"{user.username} can sign in again.")
        elif action == "role":
            user = set_role(user_id=user_id, role=request.POST.get("role", ""), by=request.user)
            messages.success(request, f"{user.username} is now {request.POST.get('role')}; their work stays.")
        elif action == "reset":
            user, password = reset_password(user_id=user_id, by=request.user)
            messages.success(request, f"New password for {user.username} (shown once): {password}")
        else:
            messages.error(request, "Unknown action.")
    except PeopleError as exc:
        messages.error(request, str(exc))
    return redirect("people")
