"""Adaptive allocation on MTurk (issue 29) against botocore's Stubber: confirmed answers decide,
an opened place becomes CreateAdditionalAssignmentsForHIT with a token of its own, a retry
(after a failure or a lost answer) opens nothing twice, and a HIT stays under 10 assignments."""

from datetime import UTC, datetime

import pytest
from botocore.stub import ANY

from hits.allocation import service as allocation
from hits.allocation.policy import ADAPTIVE
from hits.models import HIT, Assignment, Batch, ProviderCall, Worker
from hits.provider_interface import ProviderError
from hits.providers.mturk import provider as mturk
from hits.providers.mturk import questions as mturk_xml
from hits.providers.mturk.sync import sync_batch
from hits.services import batches
from hits.services.submission import submit_assignment

from .crowd_data import all_answers
from .test_mturk import expect_balance, expect_types, mturk_batch, stub  # noqa: F401 - stub is a fixture

pytestmark = pytest.mark.django_db
HIT_ID = "3" + "H" * 29
STATUSES = ["Submitted", "Approved", "Rejected"]


def published_adaptive(stub):  # noqa: F811 - the fixture's value
    batch = mturk_batch(allocation=ADAPTIVE, allocation_min=2, allocation_max=3)
    keep = batch.hits.order_by("pk").first()
    batch.hits.exclude(pk=keep.pk).delete()
    expect_balance(stub)
    expect_types(stub, batch)
    stub.add_response(
        "create_hit_with_hit_type",
        {"HIT": {"HITId": HIT_ID, "HITTypeId": "TYPE0"}},
        {
            "HITTypeId": ANY,
            "MaxAssignments": 2,  # the adaptive minimum
            "LifetimeInSeconds": 7 * 24 * 3600,
            "Question": mturk_xml.external_question("https://acu.example.org/mturk/task/"),
            "RequesterAnnotation": f"acu-batch:{batch.pk};hit:{keep.pk}",
            "UniqueRequestToken": mturk.request_token("hit", keep.pk),
        },
    )
    batch = batches.publish_batch(batch)
    return batch, HIT.objects.get(batch=batch)


def expect_get_hit(stub, hit, max_assignments):  # noqa: F811
    stub.add_response(
        "get_hit", {"HIT": {"HITId": HIT_ID, "MaxAssignments": max_assignments}}, {"HITId": hit.external_id}
    )


def expect_more(stub, hit, n):  # noqa: F811
    stub.add_response(
        "create_additional_assignments_for_hit",
        {},
        {
            "HITId": hit.external_id,
            "NumberOfAdditionalAssignments": 1,
            "UniqueRequestToken": mturk.request_token("place", f"{hit.pk}-{n}"),
        },
    )


def test_confirmed_disagreement_opens_a_place_at_mturk_and_retries_open_nothing_twice(
    stub,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    batch, hit = published_adaptive(stub)
    assert (hit.max_assignments, hit.provider_places) == (2, 2)
    records = []
    for i, present in enumerate((True, False)):  # two workers disagree on every ACU
        worker = Worker.objects.create(provider=Worker.Provider.MTURK, external_id=f"A{i}WORKER")
        mine = Assignment.objects.create(hit=hit, worker=worker, external_id=f"ASSIGN{i}", confirmed=False)
        submit_assignment(assignment_id=mine.pk, worker_id=worker.pk, answers=all_answers(mine, present))
        records.append(
            {
                "AssignmentId": f"ASSIGN{i}",
                "WorkerId": worker.external_id,
                "HITId": HIT_ID,
                "AssignmentStatus": "Submitted",
                "SubmitTime": datetime(2026, 12, 3, tzinfo=UTC),
            }
        )
    hit.refresh_from_db()
    assert hit.max_assignments == 2  # unconfirmed answers decide nothing
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": records, "NumResults": 2},
        {"HITId": HIT_ID, "MaxResults": 100, "AssignmentStatuses": STATUSES},
    )
    expect_get_hit(stub, hit, 2)
    expect_more(stub, hit, 3)
    with django_capture_on_commit_callbacks(execute=True):
        assert sync_batch(batch)["confirmed"] == 2
    hit.refresh_from_db()
    assert (hit.max_assignments, hit.extra_places, hit.provider_places) == (3, 1, 3)

    # the answer to that call was lost: the retry asks MTurk first and calls nothing more
    HIT.objects.filter(pk=hit.pk).update(provider_places=2)
    expect_get_hit(stub, hit, 3)
    assert allocation.push_pending(batch) == 0
    hit.refresh_from_db()
    assert hit.provider_places == 3


def test_a_failed_call_is_retried_with_the_same_token_and_a_hit_stays_under_ten(stub):  # noqa: F811
    batch, hit = published_adaptive(stub)
    HIT.objects.filter(pk=hit.pk).update(max_assignments=3, open_places=3, extra_places=1)
    expect_get_hit(stub, hit, 2)
    stub.add_client_error(
        "create_additional_assignments_for_hit",
        service_error_code="ServiceFault",
        service_message="Try again later.",
        http_status_code=500,
    )
    assert allocation.push_places(hit.pk) is False
    hit.refresh_from_db()
    assert hit.provider_places == 2
    assert "opening a place" in Batch.objects.get(pk=batch.pk).last_error
    assert ProviderCall.objects.filter(action="create_additional_assignments_for_hit", ok=False).count() == 1
    expect_get_hit(stub, hit, 2)
    expect_more(stub, hit, 3)  # the same token as the failed call: MTurk extends at most once
    assert allocation.push_pending(batch) == 0
    hit.refresh_from_db()
    assert hit.provider_places == 3
    with pytest.raises(ProviderError, match="under 10"):
        mturk.MTurkProvider().open_places(hit, 10)
