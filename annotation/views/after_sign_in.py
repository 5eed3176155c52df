"""The GET that an authoring button's URL gets after sign-in: written once for every such button.

A session that ended while the page was open sends the person to the sign-in page with the button's
URL as `next`; signed in again, they arrive there with a GET. That GET sends and decides nothing:
it says so and goes back to the reference's page, where they press the button again.
"""

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.shortcuts import redirect


def get_goes_back(page: str, message: str) -> Callable:
    """Decorate a POST action on one reference (`reference_id`): a request that is not a POST shows
    `message` and goes back to the URL named `page` of the same reference, changing nothing. Put it
    under `role_required`, so the person is signed in and allowed first."""

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(request, reference_id: int, *args, **kwargs):
            if request.method != "POST":
                messages.info(request, message)
                return redirect(page, reference_id=reference_id)
            return view(request, reference_id, *args, **kwargs)

        wrapper.get_goes_back_to = page  # type: ignore[attr-defined]  # which page a GET returns to (tests)
        return wrapper

    return decorate
