"""The lead's dashboards say what is true (a walkthrough of the demo's pages):

1. a batch no worker left can finish gets no estimated finish on the dashboard, which names it and
   links its page, and the batch page's count is every place nobody may take (with three places
   per HIT and one worker, two of each untouched HIT's places);
2. "being recomputed" only while a recompute is queued or running; with no judgments, nothing to
   compute; a draft round says it is a draft;
4. an upload refused before scores were stored is no longer shown as the state of things;
7. the Protocols page's power hint gives the round's own size, and the agreement table says what
   its counts count.
"""

import json
from datetime import timedelta

import pytest
from django.core.cache import caches
from django.urls import reverse
from django.utils import timezone

from hits import versions
from hits.selectors.waiting import waiting_places
from scoring.models import RecomputeRequest, ScoringRun
from scoring.runs import metric_uploads
from scoring.runs.metrics import import_metric_bytes

from .authoring_data import unauthored_dataset
from .crowd_data import batch_of, demo_dataset, published_batch, scored, simulated_round
from .test_handout import make_workers
from .test_waiting_places import work

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def one_worker_round():
    """Ten HITs of three places; the one worker who may take them did two: 28 open places, of
    which the worker may take 8 (one on each HIT they never had), so 20 nobody can take."""
    dataset = demo_dataset()
    batch = published_batch(dataset, assignments=3)
    keep = list(batch.hits.order_by("pk").values_list("pk", flat=True)[:10])
    batch.hits.exclude(pk__in=keep).delete()
    (only,) = make_workers(1, prefix="solo")
    work(only, batch)
    work(only, batch)
    return dataset, batch


def test_the_waiting_count_is_every_place_nobody_can_take():
    dataset, batch = one_worker_round()
    waiting = waiting_places(batch)
    assert waiting is not None
    # 2 HITs the worker did (2 open places each) and 8 they never had (3 each, one of them theirs)
    assert (waiting["places"], waiting["hits"], waiting["able"], waiting["done"]) == (20, 10, 1, 1)
    assert waiting["places_per_hit"] == 3  # more places per HIT than workers who may take them
    make_workers(1, prefix="duo")
    assert (waiting_places(batch)["places"], waiting_places(batch)["hits"]) == (10, 10)  # 2 x 1 + 8 x 1
    make_workers(1, prefix="trio")
    assert waiting_places(batch) is None  # three workers: each open place has someone left


def test_the_dashboard_gives_no_finish_for_a_batch_that_cannot_finish(client, lead):
    dataset, batch = one_worker_round()
    client.force_login(lead)
    for query in (f"?round={batch.pk}", ""):
        page = client.get(reverse("dashboard", args=[dataset.pk]) + query).content.decode()
        assert 'estimated finish: <b id="eta">none</b>' in page, query
        assert 'id="cannot-finish"' in page and "cannot finish by itself" in page
        assert "no worker left may take 20 of its open places (on 10 HITs)" in page
        assert f'href="{reverse("batch_detail", args=[batch.pk])}"' in page
        live = client.get(reverse("dashboard_live", args=[dataset.pk]) + query).json()
        assert live["progress"]["eta"] is None
        assert live["progress"]["cannot_finish"] == [{"batch": batch.pk, "name": batch.name, "places": 20, "hits": 10}]
    batch_page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "20 places on 10 HITs wait for a worker" in batch_page
    assert "each HIT has 3 places while only 1 worker is allowed to work on this batch" in batch_page
    assert "Short of workers" in batch_page  # the stage every page names, not "Workers are taking its HITs"

    make_workers(2, prefix="more")  # every open place has a worker left who may take it
    caches["pages"].clear()  # a minute later: the dashboards read waiting places once a minute (WAITING_SECONDS)
    page = client.get(reverse("dashboard", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    assert 'id="cannot-finish"' not in page and 'estimated finish: <b id="eta">20' in page
    assert client.get(reverse("dashboard_live", args=[dataset.pk])).json()["progress"]["eta"] is not None


def test_a_draft_round_has_nothing_to_compute_and_says_it_is_a_draft(client, lead):
    dataset = demo_dataset()
    draft = batch_of(dataset, assignments=3)
    client.force_login(lead)
    page = client.get(reverse("dashboard", args=[dataset.pk]) + f"?round={draft.pk}").content.decode()
    assert "being recomputed" not in page and 'id="stale-note"' not in page
    assert 'id="no-judgments-note"' in page and "No judgments in this round yet: nothing to compute" in page
    assert 'id="draft-round"' in page and "A draft, not published" in page
    places = draft.hits.count() * 3
    assert f"nobody can take its {places} places on {draft.hits.count()} HITs yet" in page
    assert "0 of <span" not in page and " left · " not in page
    for section in ("dashboard_systems", "dashboard_workers"):
        page = client.get(reverse(section, args=[dataset.pk]) + f"?round={draft.pk}").content.decode()
        assert "being recomputed" not in page and "nothing to compute" in page, section
    response = client.post(reverse("dashboard_recompute", args=[dataset.pk]), {"round": draft.pk}, follow=True)
    assert "No judgments yet: nothing to compute." in response.content.decode()
    assert not RecomputeRequest.objects.filter(queued=True).exists()


def test_a_dataset_without_judgments_has_nothing_to_compute(client, lead, tmp_path):
    dataset = unauthored_dataset(tmp_path)
    client.force_login(lead)
    page = client.get(reverse("dashboard", args=[dataset.pk])).content.decode()
    assert "being recomputed" not in page and "No judgments yet: nothing to compute" in page


def test_being_recomputed_only_while_a_recompute_is_queued_or_running(client, lead):
    dataset, batch = simulated_round()
    scored(dataset, batch)
    client.force_login(lead)
    url = reverse("dashboard", args=[dataset.pk]) + f"?round={batch.pk}"
    assert 'id="stale-note"' not in client.get(url).content.decode()
    versions.bump(dataset.pk, batch.pk)  # new judgments whose recompute was never queued (a lost task)
    page = client.get(url).content.decode()
    assert 'id="stale-note"' in page and "being recomputed" not in page
    assert "New judgments since these figures, and no recompute is queued." in page
    request = RecomputeRequest.objects.create(
        dataset=dataset, round_id=batch.pk, task=RecomputeRequest.Task.SCORES, queued=True, queued_at=timezone.now()
    )
    assert "New judgments since these figures: they are being recomputed." in client.get(url).content.decode()
    RecomputeRequest.objects.filter(pk=request.pk).update(queued_at=timezone.now() - timedelta(hours=1))
    assert "being recomputed" not in client.get(url).content.decode()  # its task was lost: the flag expired
    RecomputeRequest.objects.filter(pk=request.pk).update(queued=False)
    ScoringRun.objects.create(dataset=dataset, batch=batch, kind=ScoringRun.Kind.SCORES, trigger="test")  # running
    assert "being recomputed" in client.get(url).content.decode()
    assert client.get(reverse("dashboard_live", args=[dataset.pk]) + f"?round={batch.pk}").json()["freshness"] == (
        "recomputing"
    )


def _jsonl(dataset, value=0.4) -> bytes:
    system = dataset.systems.order_by("name").values_list("name", flat=True).first()
    lines = [
        json.dumps({"example_id": doc, "m1": {system: value}})
        for doc in dataset.documents.values_list("external_id", flat=True)
    ]
    return "\n".join(lines).encode()


def test_an_upload_refused_before_scores_were_stored_is_not_shown_as_an_error(client, lead):
    dataset = demo_dataset()
    client.force_login(lead)
    url = reverse("dashboard_metrics", args=[dataset.pk])
    refused = metric_uploads.start(dataset, b'{"example_id": "nope", "m1": {"x": 1}}\n{"exam', "truncated.jsonl")
    assert metric_uploads.run(refused.pk).startswith("Nothing was imported")
    page = client.get(url).content.decode()
    assert 'class="notice error" id="metric-upload-state">Last upload, truncated.jsonl: Nothing was imported' in page

    import_metric_bytes(dataset, _jsonl(dataset), "other.jsonl")  # scores stored since (the command, ROUGE)
    page = client.get(url).content.decode()
    assert "Stored: m1." in page
    assert 'class="notice error" id="metric-upload-state"' not in page and "Nothing was imported" not in page
    assert "Last upload, truncated.jsonl" in page and "was refused; scores were stored since" in page

    again = metric_uploads.start(dataset, b"garbage", "bad.jsonl")  # a refusal after the stored scores shows
    metric_uploads.run(again.pk)
    page = client.get(url).content.decode()
    assert 'class="notice error" id="metric-upload-state">Last upload, bad.jsonl: Nothing was imported' in page


def test_the_protocols_page_gives_its_own_size_and_says_what_it_counts(client, lead, tmp_path):
    from annotation.models import Dataset
    from hits.services.dataset_import import import_dataset

    from .test_protocols_pages import ROSE

    rows = json.loads(ROSE.read_text(encoding="utf-8"))[:30]
    for example in rows:  # 5 systems of 12, as the walkthrough's dataset
        keep = sorted(example["system_outputs"])[:5]
        example["system_outputs"] = {k: v for k, v in example["system_outputs"].items() if k in keep}
        example["annotations"] = {k: v for k, v in example["annotations"].items() if k in keep}
    path = tmp_path / "five.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    import_dataset(path, name="five", fmt="rose-protocols")
    dataset = Dataset.objects.get(name="five")
    client.force_login(lead)
    page = client.get(reverse("dashboard_protocols", args=[dataset.pk])).content.decode()
    assert "100 examples × 12 systems" not in page
    assert 'id="power-size">for 30 examples × 5 systems' in page
    assert '<th class="num">Raters\' own ratings</th><th class="num">Rated summaries</th>' in page
    # RoSE's file holds means without rater ids: no rater's own ratings, 150 rated summaries each
    table = page[page.index('id="protocol-alpha"') : page.index('id="protocol-alpha-counts"')]
    assert table.count('<td class="num">0</td><td class="num">150</td>') == 3
