"""Adaptive allocation on Prolific (issue 29) against the HTTP contract of tests/test_prolific_contract.py:
confirmed disagreement opens places within the study, the study's places are raised once by an
absolute total (a retry opens nothing twice), and a retried push after a lost answer sends the
same total again."""

import pytest
from responses import matchers

from hits.allocation import service as allocation
from hits.allocation.policy import ADAPTIVE
from hits.batch_fields import BatchSpec
from hits.models import HIT
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.models import ProlificStudy
from hits.services import batches

from .crowd_data import demo_dataset
from .test_prolific_contract import (  # noqa: F401 - api is a fixture
    API,
    api,
    expect_create,
    expect_transition,
    study_json,
    submission,
    worked_session,
)

pytestmark = pytest.mark.django_db
SUB_A, SUB_B = "a1" * 12, "b2" * 12  # Prolific submission ids: 24 hexadecimal characters


def expect_places(api, total):  # noqa: F811 - the fixture's value
    api.patch(
        API + "studies/STUDY1/",
        json=study_json("STUDY1", "ACTIVE", total_available_places=total),
        match=[matchers.json_params_matcher({"total_available_places": total}, strict_match=True)],
    )


def expect_sync(api, *records):  # noqa: F811
    api.get(API + "studies/STUDY1/", json=study_json("STUDY1", "ACTIVE"))
    api.get(
        API + "submissions/",
        match=[matchers.query_param_matcher({"study": "STUDY1", "page_size": "100"})],
        json={"results": list(records), "_links": {"next": {"href": None}, "previous": {"href": None}}, "meta": {}},
    )


def test_disagreement_opens_places_within_the_study_and_raises_its_places_once(
    api,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    dataset = demo_dataset()
    batch = batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(
            provider="prolific",
            assignments=3,
            provider_config={"hits_per_session": 3},
            allocation=ADAPTIVE,
            allocation_min=2,
            allocation_max=3,
        ),
        systems=list(dataset.systems.filter(name="abs_bart_out")),
    )
    batch.hits.exclude(pk__in=list(batch.hits.order_by("pk").values_list("pk", flat=True)[:3])).delete()
    expect_create(api, total_available_places=2)  # 3 HITs x 2 first places, 3 HITs per session
    expect_transition(api, "STUDY1", "PUBLISH", "ACTIVE")
    batch = batches.publish_batch(batch)
    assert set(batch.hits.values_list("max_assignments", "provider_places")) == {(2, 2)}
    agree = worked_session(batch, "PID_A", SUB_A, answer=True)
    differ = worked_session(batch, "PID_B", SUB_B, answer=False)
    assert {a.hit_id for a in agree.assignments()} == {a.hit_id for a in differ.assignments()}
    assert set(batch.hits.values_list("max_assignments", flat=True)) == {2}  # nothing confirmed yet
    expect_sync(api, submission(SUB_A, "PID_A", "AWAITING REVIEW"), submission(SUB_B, "PID_B", "AWAITING REVIEW"))
    expect_places(api, 3)  # 9 places / 3 per session: one PATCH, whichever HIT's push comes first
    with django_capture_on_commit_callbacks(execute=True):
        assert prolific_sync.sync_batch(batch)["confirmed"] == 2
    assert set(batch.hits.values_list("max_assignments", "open_places", "provider_places")) == {(3, 1, 3)}
    assert ProlificStudy.objects.get(batch=batch, kind="main").places == 3
    assert allocation.push_pending(batch) == 0  # told already: no request

    # the PATCH's answer was lost: the retry sends the same absolute total, which adds nothing
    ProlificStudy.objects.filter(batch=batch, kind="main").update(places=2)
    HIT.objects.filter(pk=batch.hits.order_by("pk").first().pk).update(provider_places=2)
    expect_places(api, 3)
    assert allocation.push_pending(batch) == 0
    assert ProlificStudy.objects.get(batch=batch, kind="main").places == 3
