"""The one batch field spec (hits.batch_fields): the lead's form and the API take their limits
from it, and a bad value gets the same message on the page and in the API."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hits.api.batches import BatchCreateInput
from hits.batch_fields import FIELDS
from hits.forms import BatchForm
from hits.models import Batch

from .crowd_data import BATCH_FORM, demo_dataset

pytestmark = pytest.mark.django_db

BAD = [
    ("assignments", 0),
    ("assignments", 10),
    ("assignments", "two"),
    ("assignments", 2.5),
    ("lifetime_hours", 0.05),
    ("lifetime_hours", 24 * 366),
    ("lifetime_hours", "nan"),
    ("assignment_minutes", 0),
    ("auto_approve_hours", -1),
    ("auto_approve_hours", 24 * 31),
    ("gold_share", 0.9),
    ("gold_share", "inf"),
    ("budget", -1),
    ("budget", "1.234"),
    ("budget", "123456789"),
    ("budget", "lots"),
    ("name", "x" * 201),
    ("allocation", "random"),
    ("allocation_min", 0),
    ("allocation_max", 10),
    ("allocation_threshold", 0.5),
    ("allocation_threshold", 1),
]


def _page_form(field, value) -> dict:
    """What the batch page's form would accept otherwise, with `field` set to `value`."""
    data = {
        "name": "",
        **BATCH_FORM,
        "gold_share": 0,
    }
    return {**data, field: value}


@pytest.mark.parametrize("field, value", BAD)
def test_page_and_api_give_the_same_message_for_the_same_bad_value(field, value, lead):
    dataset = demo_dataset()
    page = _page_and_errors(lead, dataset, field, value)
    api_client = APIClient()
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    response = api_client.post("/api/batches/", {"dataset": dataset.pk, field: value}, format="json")
    assert response.status_code == 400
    api = response.json()["fields"][field]
    assert page and page == api
    assert not Batch.objects.filter(kind=Batch.Kind.CROWD).exists()


def _page_and_errors(user, dataset, field, value) -> list[str]:
    client = Client()
    client.force_login(user)
    response = client.post(reverse("batch_new", args=[dataset.pk]), _page_form(field, value))
    assert response.status_code == 400
    return list(response.context["form"].errors[field])


def test_limits_and_defaults_come_from_the_spec():
    dataset = demo_dataset()
    form, api = BatchForm(dataset=dataset).fields, BatchCreateInput().fields
    for name, spec in FIELDS.items():
        assert form[name].label == spec.label
        assert form[name].required is not spec.optional
        assert api[name].default == spec.default
        if spec.kind == "choice":
            assert [c for c, _ in form[name].choices] == list(spec.choices) == list(api[name].choices)
        elif spec.kind == "bool":  # a tick box, unticked by default
            assert form[name].initial is api[name].default is spec.default is False
        elif name == "allocation_judge_run":  # the form lists the dataset's runs (test_pairs_triage)
            assert (api[name].min_value, api[name].max_value) == (spec.min, spec.max)
        elif spec.kind != "text":
            assert (form[name].min_value, form[name].max_value) == (spec.min, spec.max)
            assert (api[name].min_value, api[name].max_value) == (spec.min, spec.max)
            assert form[name].initial == spec.default
