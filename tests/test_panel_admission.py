"""Issue 45 item 5: with the study link alone anyone could act as any participant id. A study that
asks for the panel's signature, or for the lead's list of ids, lets an attacker holding the study
link act as no other id: not at the link, not with a session link made before the list."""

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from hits.models import Assignment, Batch, Worker
from hits.providers.panel import admission
from hits.providers.panel.models import PanelSession

from .test_panel import link_parts, open_panel, start, study_link

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

SECRET = "the-panel-secret"


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


def _signed(batch, pid, sig=None):
    return study_link(batch, pid) + f"&sig={admission.signature(SECRET, pid) if sig is None else sig}"


def _nothing_for(pid):
    assert not Worker.objects.filter(provider="panel", external_id=pid).exists()
    assert not PanelSession.objects.filter(worker__external_id=pid).exists()


def test_without_either_anyone_with_the_link_names_any_id(client):
    """What the issue found (kept so the options' effect is measured against it)."""
    batch = open_panel()
    assert client.get(study_link(batch, "SOMEONE-ELSE")).status_code == 302


def test_with_the_panels_secret_only_the_panels_signed_redirect_is_let_in(client):
    batch = open_panel(signature_secret=SECRET)
    signed = client.get(_signed(batch, "P1"))
    assert signed.status_code == 302
    assert start(client, batch, "P1").status_code == 302
    # The attacker holds the study link but not the secret: no other id, neither bare nor forged,
    # nor the signature of their own id reused for another.
    for url in (
        study_link(batch, "VICTIM"),
        _signed(batch, "VICTIM", sig="0" * 64),
        _signed(batch, "VICTIM", sig=admission.signature(SECRET, "P1")),
        _signed(batch, "VICTIM", sig=admission.signature("a-guessed-secret", "VICTIM")),
    ):
        refused = client.get(url)
        assert refused.status_code == 403 and "not signed by the panel" in refused.content.decode()
    _nothing_for("VICTIM")


def test_the_signature_parameter_is_the_leads_choice(client):
    batch = open_panel(signature_secret=SECRET, signature_parameter="hash")
    pid = "P2"
    url = study_link(batch, pid) + f"&hash={admission.signature(SECRET, pid).upper()}"
    assert client.get(url).status_code == 302
    assert client.get(_signed(batch, pid)).status_code == 403  # under `sig`, not the study's parameter


def test_with_a_list_only_listed_ids_start_and_an_earlier_link_stops_working(client, lead):
    batch = open_panel(k=2, assignments=3)
    # Before the list: the attacker takes a session link for a real participant's id.
    assert client.get(study_link(batch, "VICTIM")).status_code == 302
    client.force_login(lead)
    saved = client.post(reverse("panel_participants", args=[batch.pk]), {"ids": "P1\nP2, P3\nP1"})
    assert saved.status_code == 302
    client.logout()
    assert Batch.objects.get(pk=batch.pk).provider_config["allowed_ids"] == ["P1", "P2", "P3"]
    assert client.get(study_link(batch, "P2")).status_code == 302
    assert start(client, batch, "P2").status_code == 302
    refused = client.get(study_link(batch, "ATTACKER"))
    assert refused.status_code == 403 and "is not on this study" in refused.content.decode()
    # The session link taken before the list: refused for the page and for Start.
    assert start(client, batch, "VICTIM").status_code == 403
    from hits.providers.panel.views import session_url

    assert client.get(session_url(batch, "VICTIM")).status_code == 403
    _nothing_for("ATTACKER")
    _nothing_for("VICTIM")
    assert Assignment.objects.filter(worker__provider="panel").count() == 1  # P2's one task


def test_the_leads_test_id_is_always_let_in(client):
    batch = open_panel(signature_secret=SECRET, allowed_ids=["P1"])
    assert client.get(study_link(batch, f"TEST-{batch.pk}")).status_code == 302


def test_the_list_comes_as_a_file_and_a_bad_one_is_refused_with_its_line(client, lead):
    batch = open_panel()
    client.force_login(lead)
    url = reverse("panel_participants", args=[batch.pk])
    upload = SimpleUploadedFile("ids.txt", "\ufeffA1\r\nA2\r\n".encode())
    page = client.post(url, {"file": upload, "ids": ""}, follow=True)
    assert "Only the 2 listed participant id(s)" in page.content.decode()
    assert Batch.objects.get(pk=batch.pk).provider_config["allowed_ids"] == ["A1", "A2"]
    bad = client.post(url, {"ids": "A1\n=CMD()\n"}, follow=True)
    assert "Id 2 (&#x27;=CMD()&#x27;) is not a participant id" in bad.content.decode()
    latin = client.post(url, {"file": SimpleUploadedFile("ids.txt", "Jos\xe9".encode("latin-1"))}, follow=True)
    assert "not UTF-8 text" in latin.content.decode()
    assert Batch.objects.get(pk=batch.pk).provider_config["allowed_ids"] == ["A1", "A2"]  # unchanged
    # The batch page says who may start.
    assert 'id="panel-listed">2<' in client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    client.post(url, {"ids": ""})
    assert Batch.objects.get(pk=batch.pk).provider_config["allowed_ids"] == []


def test_a_panels_csv_export_lists_its_participant_id_column_only(client, lead):
    """Every cell of an export was listed before (its header words, dates, statuses): anyone who
    named themselves "Status" at the study link passed the list."""
    batch = open_panel()
    client.force_login(lead)
    export = (
        "\ufeffSubmission id,Participant id,Status,Started at\r\n"
        "64ab01,5f1c2d,APPROVED,2026-01-01T10:00:00Z\r\n"
        "64ab02,5f1c2e,RETURNED,2026-01-01T10:05:00Z\r\n"
    )
    upload = SimpleUploadedFile("prolific_export.csv", export.encode())
    page = client.post(reverse("panel_participants", args=[batch.pk]), {"file": upload}, follow=True)
    assert "Only the 2 listed participant id(s)" in page.content.decode()
    assert Batch.objects.get(pk=batch.pk).provider_config["allowed_ids"] == ["5f1c2d", "5f1c2e"]
    client.logout()
    refused = client.get(study_link(batch, "Status"))
    assert refused.status_code == 403 and "is not on this study" in refused.content.decode()


def test_only_leads_store_a_list(client, make_user):
    batch = open_panel()
    client.force_login(make_user("w", "worker"))
    response = client.post(reverse("panel_participants", args=[batch.pk]), {"ids": "X1"})
    assert response.status_code in (302, 403)
    assert "allowed_ids" not in Batch.objects.get(pk=batch.pk).provider_config


def test_link_parts_carry_no_signature():
    """The participant's own link never needs the panel's signature again (it is ours)."""
    batch = open_panel(signature_secret=SECRET)
    from hits.providers.panel.views import session_url

    assert set(link_parts(session_url(batch, "P1"))) == {"pid", "t"}
