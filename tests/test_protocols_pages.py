"""The Protocols page, its import and export, the API route and the commands, on RoSE's protocol file."""

import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Dataset, ProtocolRating, RatingRound

from .conftest import SHARED

ROSE = SHARED / "data" / "rose-protocols" / "protocol-comparison.json"

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def rose(db):
    out = io.StringIO()
    call_command("import_dataset", str(ROSE), "--name", "rose-protocols", "--format", "rose-protocols", stdout=out)
    assert "100 documents, 12 systems, 1200 summaries" in out.getvalue()
    return Dataset.objects.get(name="rose-protocols")


def test_the_page_shows_alpha_matrices_rankings_and_case_study(client, lead, rose):
    client.force_login(lead)
    response = client.get(reverse("dashboard_protocols", args=[rose.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    for section in (
        "protocol-alpha",
        "protocol-summary-matrix",
        "protocol-system-matrix",
        "protocol-length",
        "protocol-mix",
        "protocol-rankings",
        "protocol-case-study",
        "compute-power",
    ):
        assert f'id="{section}"' in page, section
    system = response.context["matrices"][1][1]
    prior_row = next(r for r in system["rows"] if r["label"] == "Prior")
    assert round(prior_row["cells"][1]["value"], 3) == 0.926  # Prior vs Ref-free, RoSE §5
    assert "0.926" in page and "0.831" in page and "0.861" in page and "-0.247" in page and "0.764" in page
    # Means without rater ids: no alpha, no case study, said so
    assert "Needs each rater's own Prior and Ref-free ratings" in page
    assert 'id="protocol-small-sample"' not in page  # 100 documents


def test_power_is_computed_on_a_leads_post_and_shown(client, lead, rose):
    client.force_login(lead)
    url = reverse("dashboard_protocols", args=[rose.pk])
    assert client.get(reverse("protocols_power", args=[rose.pk])).status_code == 405  # GET computes nothing
    response = client.post(reverse("protocols_power", args=[rose.pk]), {"rating_round": pick(rose).pk})
    assert response.status_code == 302
    page = client.get(url).content.decode()
    assert 'id="protocol-power-table"' in page and 'data-chart="power-ref_based"' in page
    # Stored beside the other figures: once the cache is gone, the page and the API read the stored run.
    from django.core.cache import cache

    from scoring.models import ScoringRun

    run = ScoringRun.objects.get(dataset=rose, kind=ScoringRun.Kind.PROTOCOL_POWER)
    assert run.status == "done" and run.parameters["rating_round"] == pick(rose).pk
    cache.clear()
    page = client.get(url).content.decode()
    assert 'id="protocol-power-table"' in page and 'data-chart="power-ref_based"' in page
    cache.clear()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=lead).key}")
    report = api.get(f"/api/datasets/{rose.pk}/protocols/").json()
    assert report["power"] == run.outputs["power"]
    assert ScoringRun.objects.filter(kind=ScoringRun.Kind.PROTOCOL_POWER).count() == 1  # reads wrote no run


def pick(dataset):
    return RatingRound.objects.filter(dataset=dataset).latest("pk")


def test_import_upload_refuses_a_bad_file_and_stores_a_good_one(client, lead, rose):
    client.force_login(lead)
    url = reverse("protocols_import", args=[rose.pk])
    data = json.loads(ROSE.read_text())
    data[7]["annotations"]["brio"]["ref_free"] = 0
    bad = SimpleUploadedFile("bad.json", json.dumps(data).encode())
    response = client.post(url, {"file": bad, "name": "second"}, follow=True)
    assert "Nothing was imported" in response.content.decode() and "outside 1 to 5" in response.content.decode()
    assert not RatingRound.objects.filter(name="second").exists()
    exported = client.get(reverse("protocols_export", args=[rose.pk, pick(rose).pk]))
    assert exported.status_code == 200 and exported["Content-Disposition"].endswith('ratings.json"')
    good = SimpleUploadedFile("ratings.json", exported.content)
    response = client.post(url, {"file": good, "name": "second"}, follow=True)
    shown = [str(m) for m in response.context["messages"]]
    assert shown == ["Imported rating round 'second': 3600 ratings of 1200 summaries and 1200 ACU scores"]
    assert ProtocolRating.objects.filter(round__name="second").count() == 3600


def test_only_leads(client, worker, author, rose):
    for user in (worker, author):
        client.force_login(user)
        assert client.get(reverse("dashboard_protocols", args=[rose.pk])).status_code == 403
        assert client.post(reverse("protocols_power", args=[rose.pk])).status_code == 403


def test_api_route(lead, rose):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    body = api.get(f"/api/datasets/{rose.pk}/protocols/").json()
    assert body["documents"] == 100 and body["power"] is None
    system = {(e["a"], e["b"]): e["value"] for e in body["correlations"]["system"]}
    assert round(system[("ref_based", "acu")], 3) == 0.764
    assert api.get(f"/api/datasets/{rose.pk}/protocols/?rating_round=999999").status_code == 404
    assert api.get(f"/api/datasets/{rose.pk}/protocols/?rating_round=x").status_code == 400


def test_commands(rose, tmp_path):
    out = io.StringIO()
    call_command("protocol_report", "rose-protocols", "--json", "--resamples", "100", stdout=out)
    report = json.loads(out.getvalue())
    assert round(report["length"]["system"]["prior"]["value"], 3) == 0.831
    text = io.StringIO()
    call_command("protocol_report", "rose-protocols", "--resamples", "100", stdout=text)
    assert "Prior vs Ref-free: +0.926" in text.getvalue()
    path = tmp_path / "out.json"
    call_command("export_ratings", "rose-protocols", "--output", str(path))
    call_command("import_ratings", "rose-protocols", str(path), "--round-name", "again", stdout=io.StringIO())
    assert RatingRound.objects.filter(dataset=rose).count() == 2
    with pytest.raises(CommandError, match="has a rating round named 'again'"):
        call_command("import_ratings", "rose-protocols", str(path), "--round-name", "again")
    with pytest.raises(CommandError, match="No dataset named"):
        call_command("protocol_report", "nosuch")


def test_the_import_page_and_api_take_the_protocol_format(client, lead):
    client.force_login(lead)
    upload = SimpleUploadedFile("protocol-comparison.json", ROSE.read_bytes())
    response = client.post(
        reverse("dataset_import"), {"name": "from-page", "format": "rose-protocols", "file": upload}, follow=True
    )
    assert response.status_code == 200
    dataset = Dataset.objects.get(name="from-page")
    assert ProtocolRating.objects.filter(round__dataset=dataset).count() == 3600
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    upload = SimpleUploadedFile("protocol-comparison.json", ROSE.read_bytes())
    created = api.post(
        "/api/datasets/import/", {"name": "from-api", "format": "rose-protocols", "file": upload}, format="multipart"
    )
    assert created.status_code == 201, created.content[:300]
    assert ProtocolRating.objects.filter(round__dataset__name="from-api").count() == 3600


def test_power_on_too_few_documents_is_refused_and_said(client, lead, tmp_path):
    """Five examples: the page names each protocol's n and gives no power (the dashboards' rule),
    where it showed power near 1 at 200 documents from resampling five."""
    few = tmp_path / "five.json"
    few.write_text(json.dumps(json.loads(ROSE.read_text())[:5]))
    call_command("import_dataset", str(few), "--name", "five", "--format", "rose-protocols", stdout=io.StringIO())
    dataset = Dataset.objects.get(name="five")
    client.force_login(lead)
    client.post(reverse("protocols_power", args=[dataset.pk]), {"rating_round": pick(dataset).pk})
    response = client.get(reverse("dashboard_protocols", args=[dataset.pk]))
    page = response.content.decode()
    assert response.context["power_charts"] == [] and 'data-chart="power-' not in page
    assert "Prior: no power, 5 documents rated for every system, fewer than the 10" in page
    # the dashboards' small-sample warning, which the protocols page did not give
    assert 'id="protocol-small-sample"' in page and "fewer than 30 documents (5)" in page


def test_a_figure_on_fewer_documents_than_the_round_says_its_n(client, lead, tmp_path):
    """Prior rated on 20 of the 100 examples: its correlations, its length correlation and its
    ranking rest on 20 documents while the page's header says 100; each now names its n."""
    data = json.loads(ROSE.read_text())
    for example in data[20:]:
        for ratings in example["annotations"].values():
            ratings["prior"] = []
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(data))
    call_command("import_dataset", str(path), "--name", "partial", "--format", "rose-protocols", stdout=io.StringIO())
    dataset = Dataset.objects.get(name="partial")
    client.force_login(lead)
    response = client.get(reverse("dashboard_protocols", args=[dataset.pk]))
    report = response.context["report"]
    assert report["documents"] == 100
    entry = next(e for e in report["correlations"]["system"] if {e["a"], e["b"]} == {"prior", "ref_free"})
    assert entry["documents"] == 20
    assert all(row["documents"] == 20 for row in report["rankings"]["prior"])
    page = response.content.decode()
    shown = re.findall(r'<small class="n"[^>]*>n = (\d+)</small>', page)
    # Prior against 3 measures at 2 levels (both cells of the square tables), against length at 2
    # levels, what Prior follows and the Prior ranking.
    assert shown.count("20") == 2 * 2 * 3 + 2 + 1 + 1 and set(shown) == {"20"}


def test_replacing_a_metrics_scores_refreshes_the_protocols_figures(rose, tmp_path):
    """A file of the same metrics replaces their scores with as many rows: the cache key counted
    the rows only, so the page kept the replaced scores' correlations for a day."""
    import numpy as np
    from django.core.cache import cache

    from scoring.protocols import cached
    from scoring.protocols.report import Settings, build_report
    from scoring.protocols.selectors import protocol_data
    from scoring.runs.metrics import import_metric_scores

    cache.clear()
    data = json.loads(ROSE.read_text())
    rng = np.random.default_rng(0)

    def metric_file(name, score):
        lines = [
            json.dumps({"example_id": ex["example_id"], "m": {s: score(ex, s) for s in ex["annotations"]}})
            for ex in data
        ]
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        return path

    import_metric_scores(rose, metric_file("noise.jsonl", lambda ex, s: float(rng.random())))
    round_ = pick(rose)
    first = cached.figures(round_)["metrics"]["m"]["system"]["prior"]["value"]
    import_metric_scores(rose, metric_file("length.jsonl", lambda ex, s: len(ex["system_outputs"][s].split())))
    fresh = build_report(protocol_data(round_), Settings(), with_power=False)["metrics"]["m"]["system"]["prior"]
    assert fresh["value"] != first
    assert cached.figures(round_)["metrics"]["m"]["system"]["prior"] == fresh
