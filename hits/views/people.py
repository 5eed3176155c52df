"""The lead's People page: add authors, workers and leads with their role (no admin groups needed).

Security behavior: leads only; adding is a POST; a generated password is shown once, to the lead who made it.
"""

from django.contrib import messages
from django.shortcuts import redirect, render

from config.roles import LEAD, ROLES, role_required
from hits.services.people import PeopleError, add_person, people_by_role


@role_required(LEAD)
def people(request):
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
        else:
            shown = "" if request.POST.get("password") else f" Password (shown once): {password}"
            messages.success(request, f"{user.username} can now log in as {request.POST.get('role')}.{shown}")
        return redirect("people")
    rows = people_by_role()
    counts = {role: sum(role in r["roles"] for r in rows) for role in ROLES}
    return render(request, "hits/people.html", {"rows": rows, "roles": ROLES, "counts": counts})
