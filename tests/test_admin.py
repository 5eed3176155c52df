"""Every admin list and add page opens for a lead (catches broken list_display and friends)."""

import re

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


def test_crowd_work_money_and_runs_are_read_only_in_the_admin(client, lead):
    from hits.models import Assignment, Batch, LedgerEntry

    dataset = demo_dataset()
    batch = published_batch(dataset)
    client.force_login(lead)
    for model in ("batch", "hit", "assignment", "judgment", "ledgerentry"):
        page = client.get(reverse(f"admin:hits_{model}_changelist"))
        assert page.status_code == 200
        assert client.get(reverse(f"admin:hits_{model}_add")).status_code == 403
    assert client.get(reverse("admin:scoring_scoringrun_add")).status_code == 403
    # Posting a changed status to the change form is refused: statuses move through the services only.
    url = reverse("admin:hits_batch_change", args=[batch.pk])
    response = client.post(
        url, {"name": batch.name, "status": Batch.Status.COMPLETE if hasattr(Batch.Status, "COMPLETE") else "stopped"}
    )
    assert response.status_code == 403
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.PUBLISHED
    assert not LedgerEntry.objects.exists() and Assignment.objects.filter(hit__batch=batch).count() >= 0


def test_the_stop_action_goes_through_the_service(client, lead):
    from hits.models import Batch

    batch = published_batch(demo_dataset())
    client.force_login(lead)
    response = client.post(
        reverse("admin:hits_batch_changelist"), {"action": "stop_batches", "_selected_action": [batch.pk]}, follow=True
    )
    assert response.status_code == 200 and "stopped" in response.content.decode()
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.STOPPED


def test_a_lead_cannot_grant_superuser_or_take_over_a_superuser(client, lead):
    from django.contrib.auth import get_user_model

    User = get_user_model()
    root = User.objects.create_superuser("root", "root@example.org", "root-password-123")
    client.force_login(lead)
    # Ticking "Superuser status" on their own account changes nothing.
    own = reverse("admin:auth_user_change", args=[lead.pk])
    form = client.get(own).content.decode()
    assert 'name="is_superuser"' not in form and 'name="is_staff"' not in form
    client.post(
        own,
        {
            "username": lead.username,
            "is_superuser": "on",
            "is_staff": "on",
            "is_active": "on",
            "groups": list(lead.groups.values_list("pk", flat=True)),
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    lead.refresh_from_db()
    assert not lead.is_superuser
    # A superuser's account and password are out of reach.
    view = client.get(reverse("admin:auth_user_change", args=[root.pk]))
    assert view.status_code == 200 and 'name="_save"' not in view.content.decode()  # view only
    assert (
        client.post(
            reverse("admin:auth_user_change", args=[root.pk]), {"username": "root", "is_active": ""}
        ).status_code
        == 403
    )
    password_url = reverse("admin:auth_user_password_change", args=[root.pk])
    response = client.post(password_url, {"password1": "taken-over-123!", "password2": "taken-over-123!"})
    assert response.status_code == 403
    root.refresh_from_db()
    assert root.check_password("root-password-123")
    # A superuser may grant it.
    client.force_login(root)
    assert 'name="is_superuser"' in client.get(own).content.decode()


def test_pay_buckets_and_ledger_amounts_are_in_the_batchs_currency(client, lead):
    """Code review: the admin said a pay bucket's reward in dollars ("1–5 ACUs: $0.15") whatever the
    batch's currency; a Prolific batch in GBP pays £0.15. Its columns now say the batch's money."""
    from decimal import Decimal

    from hits.models import LedgerEntry, PayBucket, Worker

    from .crowd_data import batch_of

    dataset = demo_dataset()
    pounds = batch_of(dataset, provider="prolific", provider_config={"currency": "GBP"})
    dollars = batch_of(dataset)
    worker = Worker.objects.create(provider="prolific", external_id="5ab000000000000000000009")
    LedgerEntry.objects.create(key="t-1", kind="bonus", worker=worker, batch=pounds, amount=Decimal("1.50"))
    client.force_login(lead)
    bucket = PayBucket.objects.filter(batch=pounds).order_by("min_acus").first()
    assert "$" not in str(bucket)

    def cells(url, column):
        page = client.get(url).content.decode()
        return re.findall(rf'<td class="field-{column}">([^<]*)</td>', page)

    changelist = reverse("admin:hits_paybucket_changelist")
    assert cells(f"{changelist}?batch__id__exact={pounds.pk}", "reward_shown") == [
        f"£{b.reward}" for b in PayBucket.objects.filter(batch=pounds).order_by("min_acus")
    ]
    assert cells(f"{changelist}?batch__id__exact={dollars.pk}", "reward_shown")[0] == "$0.15"
    change = client.get(reverse("admin:hits_paybucket_change", args=[bucket.pk])).content.decode()
    assert f"£{bucket.reward}" in change and f"${bucket.reward}" not in change
    inline = client.get(reverse("admin:hits_batch_change", args=[pounds.pk])).content.decode()
    assert f"£{bucket.reward}" in inline and "$" not in re.sub(r"<script.*?</script>", "", inline, flags=re.S)
    # the batch's own money too: its budget and target hourly rate read "1.00" and "12.00"
    Batch = type(pounds)
    Batch.objects.filter(pk=pounds.pk).update(budget=Decimal("30.00"))
    shown = client.get(reverse("admin:hits_batch_change", args=[pounds.pk])).content.decode()
    readonly = dict(re.findall(r'<label>([^<]+):</label>\s*<div class="readonly">([^<]*)</div>', shown))
    assert readonly["Budget"] == "£30.00" and readonly["Target hourly rate"] == f"£{pounds.target_hourly_rate}"
    assert cells(reverse("admin:hits_ledgerentry_changelist"), "amount_shown") == ["£1.50"]
