"""Numbers typed into a query or a form: "²" (a superscript two) is a digit to `str.isdigit` but
no number to `int`, so a check by isdigit let it through to `int()` and the page answered 500.
Every such check reads `str.isdecimal`, which accepts exactly what `int` reads."""

import pytest
from django.urls import reverse

from hits.services import batches

from .crowd_data import demo_dataset

pytestmark = [pytest.mark.django_db]


@pytest.mark.parametrize(
    "route, query",
    [
        ("dashboard", {"round": "²"}),
        ("dashboard_workers", {"round": "²", "page": "²"}),
        ("dashboard_protocols", {"rating_round": "²"}),
    ],
)
def test_a_superscript_in_a_query_is_no_server_error(client, lead, route, query):
    dataset = demo_dataset()
    client.force_login(lead)
    response = client.get(reverse(route, args=[dataset.pk]), query)
    assert response.status_code in (200, 404), response.status_code


def test_a_superscript_ticked_as_an_assignment_is_no_server_error(client, lead):
    batch = batches.create_batch(dataset=demo_dataset())
    client.force_login(lead)
    response = client.post(reverse("batch_review", args=[batch.pk]), {"assignment": ["²"], "action": "approve"})
    assert response.status_code == 302  # back to the batch: "Tick at least one assignment."


def test_the_list_filter_a_review_returns_to_is_quoted(client, lead):
    """The bulk review sent the lead back to `?status=` + the posted filter as typed: a line break in it
    made the redirect a 500 (found by the security review); now it is URL-encoded."""
    batch = batches.create_batch(dataset=demo_dataset())
    client.force_login(lead)
    response = client.post(
        reverse("batch_review", args=[batch.pk]),
        {"assignment": ["1"], "action": "approve", "status_filter": "submitted\r\nX-Injected: 1"},
    )
    assert response.status_code == 302
    assert response["Location"].endswith("?status=submitted%0D%0AX-Injected%3A+1")
    assert "X-Injected" not in response.headers
