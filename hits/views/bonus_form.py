"""A bonus form refused a moment ago comes back as it was typed.

The session's note of the refused form: the page it goes back to (the batch page, an assignment's
page, the workers dashboard) shows the form again with the amount and reason as the lead typed them,
once, within REFUSED_BONUS_SECONDS, under a fresh one-time token like any page's (a refused bonus
recorded nothing under the old one). The note names what the form was for (an assignment, or a
worker on the workers dashboard), so only the form of that assignment or worker is filled.
"""

import time
from collections.abc import Callable

REFUSED_BONUS = "refused_bonus"
REFUSED_BONUS_SECONDS = 600


def keep_refused_bonus(request, *, assignment: int | None = None, worker: int | None = None) -> None:
    """Note the bonus form of `request` (a POST just refused) for the page it goes back to: the
    form of `assignment` (the batch page's and an assignment's) or of `worker` (the workers page's)."""
    request.session[REFUSED_BONUS] = {
        "assignment": assignment,
        "worker": worker,
        "amount": request.POST.get("amount", "")[:40],
        "reason": request.POST.get("reason", "")[:1000],
        "at": time.time(),
    }


def refused_bonus(request, kind: str, shown: Callable[[int], bool]) -> dict:
    """The values of the bonus form refused a moment ago when it was for a `kind` ("assignment" or
    "worker") whose id `shown` says the page shows, taken from the session (and dropped from it:
    shown once); {} otherwise."""
    kept = request.session.get(REFUSED_BONUS)
    if not isinstance(kept, dict) or not isinstance(kept.get(kind), int) or not shown(kept[kind]):
        return {}
    del request.session[REFUSED_BONUS]
    return kept if time.time() - kept.get("at", 0) <= REFUSED_BONUS_SECONDS else {}
