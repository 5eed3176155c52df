"""A rating batch on MTurk (issue 46), against botocore's Stubber: published like an ACU batch (one
HIT per example, paid by its summaries), its task page in MTurk's frame shows the example's
summaries with 1-5 choices, the posted ratings are held until ListAssignmentsForHIT reports the
worker's submission, then count in the rating round; MTurk's approval reaches the ledger once."""

import json
import re

import pytest
from botocore.stub import ANY

from annotation.models import ProtocolRating
from hits.models import Assignment, LedgerEntry
from hits.providers.mturk import provider as mturk
from hits.providers.mturk.models import MTurkHeldSubmission
from hits.ratings.models import Rating
from hits.services import batches

from .crowd_data import batch_of, demo_dataset
from .test_mturk import HIT_IDS, expect_balance, expect_hits, stub, sync_one  # noqa: F401 - the Stubber fixture

pytestmark = pytest.mark.django_db
SUBMIT_TO = "https://workersandbox.mturk.com"


def published_ratings(stub):  # noqa: F811
    dataset = demo_dataset()
    batch = batch_of(dataset, provider="mturk", protocol="ref_free", rating_round="mturk study")
    hits = list(batch.hits.order_by("pk"))
    expect_balance(stub)
    stub.add_response(
        "create_hit_type",
        {"HITTypeId": "TYPE0"},
        {
            "Title": batch.title,
            "Description": batch.description,
            "Keywords": ANY,
            "Reward": "1.00",  # 4 summaries: the first rating bucket
            "AssignmentDurationInSeconds": 3600,
            "AutoApprovalDelayInSeconds": 72 * 3600,
            "QualificationRequirements": mturk.requirements(batch, None),
        },
    )
    expect_hits(stub, hits, HIT_IDS)
    return batches.publish_batch(batch)


def test_a_rating_batch_on_mturk_holds_counts_and_pays_once(stub, client, django_capture_on_commit_callbacks):  # noqa: F811
    batch = published_ratings(stub)
    assert batch.hits.count() == 10 and batch.hits.exclude(external_id="").count() == 10
    hit = batch.hits.order_by("pk").first()
    page = client.get(
        "/mturk/task/",
        {"hitId": hit.external_id, "assignmentId": "ASSIGNR1", "workerId": "WRATER1", "turkSubmitTo": SUBMIT_TO},
    )
    html = page.content.decode()
    assert page.status_code == 200 and 'id="rating-document"' in html
    ids = [int(x) for x in re.findall(r'class="acu-row rate-row"[^>]*data-acu="(\d+)"', html)]
    assert len(ids) == 4
    ratings = {str(i): n % 5 + 1 for n, i in enumerate(ids)}
    bad = client.post(
        page.context["submit_url"], json.dumps({"answers": {str(ids[0]): 9}}), content_type="application/json"
    )
    assert bad.status_code == 409 and "from 1 to 5" in bad.json()["error"]
    held = client.post(page.context["submit_url"], json.dumps({"answers": ratings}), content_type="application/json")
    assert held.status_code == 200 and held.json()["ok"]
    assert MTurkHeldSubmission.objects.filter(hit=hit).count() == 1 and not Rating.objects.exists()

    record = {
        "AssignmentId": "ASSIGNR1",
        "WorkerId": "WRATER1",
        "HITId": hit.external_id,
        "AssignmentStatus": "Submitted",
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert sync_one(stub, batch, hit, [record])["confirmed"] == 1
    mine = Assignment.objects.get(hit=hit)
    assert mine.confirmed and dict(Rating.objects.filter(assignment=mine).values_list("summary_id", "score")) == {
        int(k): v for k, v in ratings.items()
    }
    counted = ProtocolRating.objects.filter(round=batch.rating_round, protocol="ref_free")
    assert sorted(counted.values_list("rater", "score")) == sorted(("mturk:WRATER1", v) for v in ratings.values())

    approved = {**record, "AssignmentStatus": "Approved"}
    for _ in range(2):  # MTurk's approval mirrored, twice: paid once
        with django_capture_on_commit_callbacks(execute=True):
            sync_one(stub, batch, hit, [approved])
    rows = LedgerEntry.objects.filter(assignment=mine)
    assert sorted(rows.values_list("kind", flat=True)) == ["fee", "reward"]
    assert rows.get(kind="reward").amount == hit.reward == 1
    assert counted.count() == 4  # approved work still counts
