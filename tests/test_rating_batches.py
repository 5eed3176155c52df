"""Rating batches (issue 46, RoSE §5) through the pages, as a lead and three workers use them: the
lead creates a Ref-free and a Prior batch on the same examples, workers take them from the one
handout and rate every summary of an example on one page, the lead approves, the ledger pays each
assignment once, and the Protocols page and API show the round's agreement and case study."""

import json
import re

import numpy as np
import pytest
from django.urls import reverse
from django.utils.html import escape
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import ProtocolRating, RatingRound, Summary
from hits.batch_fields import BatchError, BatchSpec
from hits.models import Assignment, Batch, LedgerEntry
from hits.ratings.models import Rating
from hits.services import review
from hits.services.submission import SubmissionRefused, submit_assignment

from .crowd_data import demo_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

WORKERS = ("rita-rater", "ravi-rater", "rosa-rater")


def create(client, dataset, protocol, **extra):
    form = {
        "name": f"{protocol} ratings",
        "protocol": protocol,
        "provider": "inhouse",
        "assignments": 3,
        "lifetime_hours": 24,
        "assignment_minutes": 30,
        "auto_approve_hours": 72,
        "gold_share": 0,
        "allocation": "fixed",
        **extra,
    }
    response = client.post(reverse("batch_new", args=[dataset.pk]), form)
    assert response.status_code == 302, response.content.decode()[:3000]
    batch = Batch.objects.get(name=form["name"])
    assert client.post(reverse("batch_action", args=[batch.pk, "publish"])).status_code == 302
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED
    return batch


def score_of(summary_id: int, worker: int, protocol: str) -> int:
    """A rater who follows the summary's length (longer is better), with a small personal offset."""
    words = Summary.objects.get(pk=summary_id).word_count
    base = 1 + min(4, words // 15)
    return int(np.clip(base + (worker % 2 if protocol == "prior" else 0), 1, 5))


def rate_everything(client, worker_index: int, capture) -> list[str]:
    """Take tasks until none is left, rating each page's summaries; returns the pages seen."""
    pages = []
    while True:
        response = client.post(reverse("work_next"))
        if response.url == reverse("work"):
            return pages
        token = response.url.rstrip("/").split("/")[-1]
        page = client.get(response.url)
        assert page.status_code == 200
        html = page.content.decode()
        pages.append(html)
        ids = [int(x) for x in re.findall(r'class="acu-row rate-row"[^>]*data-acu="(\d+)"', html)]
        protocol = page.context["rating"].name
        answers = {str(i): score_of(i, worker_index, protocol) for i in ids}
        with capture(execute=True):
            stored = client.post(
                reverse("task_submit", args=[token]), json.dumps({"answers": answers}), content_type="application/json"
            )
        assert stored.status_code == 200 and stored.json()["ok"], stored.content


def test_lead_creates_rating_batches_workers_rate_lead_pays_once_protocols_show_alpha(
    client, lead, make_user, django_capture_on_commit_callbacks, eager_celery
):
    dataset = demo_dataset()
    client.force_login(lead)
    free = create(client, dataset, "ref_free", rating_round="study")
    prior = create(client, dataset, "prior", rating_round="study")
    assert free.rating_round_id == prior.rating_round_id
    # One HIT per example, every summary of it on the page, paid by the number of summaries (RoSE: $1 to $3).
    assert free.hits.count() == dataset.documents.count() == 10
    assert set(free.hits.values_list("acu_count", flat=True)) == {4}
    assert set(free.hits.values_list("reward", flat=True)) == {free.buckets.get(min_acus=1).reward}

    pages = {}
    for index, name in enumerate(WORKERS):
        user = make_user(name, "worker")
        client.force_login(user)
        pages[name] = rate_everything(client, index, django_capture_on_commit_callbacks)
        assert len(pages[name]) == 20  # each example once per batch
    # What each protocol shows: the article for Ref-free, nothing but the summaries for Prior.
    shown = pages[WORKERS[0]]
    free_page = next(p for p in shown if "How well does each summary capture the article?" in p)
    prior_page = next(p for p in shown if "How good is each summary?" in p)
    assert 'id="rating-document"' in free_page and 'id="rating-reference"' not in free_page
    assert 'id="rating-document"' not in prior_page and 'id="rating-reference"' not in prior_page
    assert "Imagine each of the candidate summaries" in prior_page  # RoSE's wording by default
    # The order is shuffled per worker: the same example's rows in another order for someone.
    orders = {
        name: [re.findall(r'data-acu="(\d+)"', p) for p in pages[name] if "How good is each summary?" in p]
        for name in WORKERS
    }
    assert any(orders[a] != orders[WORKERS[0]] for a in WORKERS[1:])
    assert all(sorted(x) == sorted(y) for x, y in zip(orders[WORKERS[0]], orders[WORKERS[1]], strict=True))

    round_ = RatingRound.objects.get(dataset=dataset, name="study")
    assert round_.kind == RatingRound.Kind.CROWD
    assert ProtocolRating.objects.filter(round=round_, protocol="ref_free").count() == 3 * 40
    assert ProtocolRating.objects.filter(round=round_, protocol="prior").count() == 3 * 40
    raters = set(ProtocolRating.objects.filter(round=round_).values_list("rater", flat=True))
    assert raters == {f"inhouse:{name}" for name in WORKERS}  # the same rater in both batches

    # The lead approves everything, twice: each assignment's reward is in the ledger once.
    client.force_login(lead)
    for batch in (free, prior):
        ids = list(Assignment.objects.filter(hit__batch=batch).values_list("pk", flat=True))
        assert len(ids) == 30
        for _ in range(2):
            response = client.post(reverse("batch_review", args=[batch.pk]), {"assignment": ids, "action": "approve"})
            assert response.status_code == 302
        rewards = LedgerEntry.objects.filter(batch=batch, kind=LedgerEntry.Kind.REWARD)
        assert rewards.count() == 30 and set(rewards.values_list("assignment_id", flat=True)) == set(ids)
        assert sum(r.amount for r in rewards) == 30 * batch.hits.first().reward

    # The Protocols page and API read the round: alpha of both protocols and the case study.
    page = client.get(reverse("dashboard_protocols", args=[dataset.pk]), {"rating_round": round_.pk})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="protocol-alpha"' in html and 'id="protocol-case-study"' in html
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=lead).key}")
    report = api.get(f"/api/datasets/{dataset.pk}/protocols/", {"rating_round": round_.pk}).json()
    assert report["alpha"]["ref_free"]["ratings"] == 120 and report["alpha"]["prior"]["ratings"] == 120
    # the three raters agree on the length-following part: alpha well above zero, computed from the rows
    assert report["alpha"]["ref_free"]["interval"] > 0.5
    assert len(report["case_study"]["raters"]) == 3


def test_a_rejection_takes_the_ratings_out_and_the_place_reopens(
    client, lead, worker, django_capture_on_commit_callbacks, eager_celery
):
    dataset = demo_dataset()
    client.force_login(lead)
    batch = create(client, dataset, "ref_based", documents=2)
    assert batch.hits.count() == 2
    client.force_login(worker)
    pages = rate_everything(client, 0, django_capture_on_commit_callbacks)
    assert len(pages) == 2 and all('id="rating-reference"' in p and 'id="rating-document"' not in p for p in pages)
    ratings = ProtocolRating.objects.filter(round=batch.rating_round, protocol="ref_based")
    assert ratings.count() == 8
    first = Assignment.objects.filter(hit__batch=batch).order_by("pk").first()
    client.force_login(lead)
    detail = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert 'id="rating-note"' in detail and 'id="make-expert"' not in detail
    # its pay buckets count the summaries a HIT asks to rate, not ACUs
    assert "<thead><tr><th>Summaries</th>" in detail and "<th>ACUs</th>" not in detail
    shown = client.get(reverse("assignment_review", args=[first.pk])).content.decode()
    mine = dict(Rating.objects.filter(assignment=first).values_list("summary_id", "score"))
    assert 'id="ratings"' in shown and "4</b> of 4 summaries rated" in shown
    for summary in Summary.objects.filter(pk__in=mine):
        assert escape(summary.text) in shown
    with django_capture_on_commit_callbacks(execute=True):
        review.reject(assignment_id=first.pk, feedback="Rated without reading.")
    assert ratings.count() == 4  # the rejected assignment's four ratings left the round
    assert Rating.objects.filter(assignment=first).count() == 4  # its answers are kept, not counted
    first.hit.refresh_from_db()
    assert first.hit.open_places == 3  # the place went back to other workers
    assert not LedgerEntry.objects.filter(assignment=first).exists()
    # Excluding the worker takes their other ratings out too; counting them again brings them back.
    with django_capture_on_commit_callbacks(execute=True):
        review.set_excluded(worker_id=first.worker_id, excluded=True)
    assert ratings.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        review.set_excluded(worker_id=first.worker_id, excluded=False)
    assert ratings.count() == 4


def test_bad_ratings_are_refused_with_a_message_and_repeats_are_idempotent(lead, worker):
    from hits.services.batches import create_batch, publish_batch
    from hits.services.handout import next_assignment
    from hits.views.worker import inhouse_worker

    dataset = demo_dataset()
    batch = publish_batch(create_batch(dataset=dataset, spec=BatchSpec(protocol="prior")))
    assignment = next_assignment(inhouse_worker(worker))
    ids = list(Summary.objects.filter(document=assignment.hit.summary.document).values_list("pk", flat=True))
    assert assignment.hit.batch_id == batch.pk and len(ids) == 4

    def submit(answers):
        return submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=answers)

    for answers, message in (
        ({str(i): 6 for i in ids}, "must be a whole number from 1 to 5"),
        ({str(i): True for i in ids}, "must be a whole number from 1 to 5"),
        ({str(i): 3 for i in ids[:3]}, "1 of 4 summaries have no rating yet"),
        ({**{str(i): 3 for i in ids}, "999999": 2}, "not part of this task"),
        ({"x": 3}, "Unknown summary 'x'"),
    ):
        with pytest.raises(SubmissionRefused, match=message):
            submit(answers)
    assert not Rating.objects.exists()
    good = {str(i): n + 1 for n, i in enumerate(ids)}
    assert submit(good).created and not submit(good).created
    with pytest.raises(SubmissionRefused, match="already submitted with other answers"):
        submit({str(i): 1 for i in ids})
    assert dict(Rating.objects.values_list("summary_id", "score")) == {i: n + 1 for n, i in enumerate(ids)}


def test_rating_batch_settings_are_checked(lead):
    from hits.services.batches import create_batch

    dataset = demo_dataset()
    with pytest.raises(BatchError, match="fixed allocation"):
        BatchSpec(protocol="prior", allocation="adaptive")
    with pytest.raises(BatchError, match="no gold HITs"):
        BatchSpec(protocol="prior", gold_share=0.1)
    with pytest.raises(BatchError, match="is one of: acu, prior, ref_free, ref_based"):
        BatchSpec(protocol="likert")
    create_batch(dataset=dataset, spec=BatchSpec(protocol="prior", rating_round="r1"))
    with pytest.raises(BatchError, match="has a Prior batch already"):
        create_batch(dataset=dataset, spec=BatchSpec(protocol="prior", rating_round="r1"))
    imported = RatingRound.objects.create(dataset=dataset, name="old", kind=RatingRound.Kind.IMPORTED)
    with pytest.raises(BatchError, match="holds imported ratings"):
        create_batch(dataset=dataset, spec=BatchSpec(protocol="ref_free", rating_round=imported.name))
    # the ACU default stays: no protocol, the RoSE ACU buckets
    acu = create_batch(dataset=dataset)
    assert acu.protocol == "" and acu.rating_round is None and acu.buckets.first().reward < 1


def test_the_command_creates_a_rating_batch_and_the_simulated_crowd_refuses_it():
    import io

    from django.core.management import call_command

    from hits.services.batches import publish_batch
    from hits.services.simulate import simulate_crowd

    dataset = demo_dataset()
    out, err = io.StringIO(), io.StringIO()
    call_command("create_batch", "demo", "--protocol", "ref_free", "--rating-round", "study", stdout=out, stderr=err)
    batch = Batch.objects.get(pk=int(out.getvalue().strip()))
    assert batch.protocol == "ref_free" and batch.rating_round.name == "study"
    assert "10 HITs, 30 assignments, $30.00 rewards" in err.getvalue()  # 4 summaries each: $1.00
    assert batch.hits.count() == dataset.documents.count()
    with pytest.raises(ValueError, match="rating batch"):
        simulate_crowd(publish_batch(batch), workers=3, accuracy=0.9)
