"""Every admin list and add page opens for a lead (catches broken list_display and friends)."""
import pytest
from django.contrib import admin
from django.urls import reverse

from .crowd_data import demo_dataset, published_batch

pytestmark = pytest.mark.django_db


def test_every_admin_page_opens_for_a_lead(client, lead, worker):
    dataset = demo_dataset()
    published_batch(dataset)
    client.force_login(lead)
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        request = client.get(reverse("admin:index")).wsgi_request
        if not model_admin.has_view_permission(request):
            continue
        changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        assert client.get(changelist).status_code == 200, changelist
        first = model.objects.first()
        if first is not None:
            change = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[first.pk])
            assert client.get(change).status_code == 200, change
    assert client.get(reverse("admin:auth_user_add")).status_code == 200  # leads add people
    client.force_login(worker)
    assert client.get(reverse("admin:index")).status_code == 302
