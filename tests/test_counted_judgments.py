"""The one "which judgments count" selector (hits.selectors.counted_judgments): submitted or
approved, confirmed by the provider, not of excluded workers; scoped to a dataset, round or HIT."""

import pytest

from hits.assignment_answers import assignment_answers
from hits.models import Assignment, Judgment, Worker
from hits.selectors import counted_assignments, counted_judgments

from .crowd_data import demo_dataset, published_batch

pytestmark = pytest.mark.django_db

S = Assignment.Status
# (worker, status, confirmed, excluded worker) -> counts?
CASES = {
    "submitted": (S.SUBMITTED, True, False, True),
    "approved": (S.APPROVED, True, False, True),
    "assigned": (S.ASSIGNED, True, False, False),
    "rejected": (S.REJECTED, True, False, False),
    "expired": (S.EXPIRED, True, False, False),
    "unconfirmed": (S.SUBMITTED, False, False, False),
    "excluded": (S.APPROVED, True, True, False),
}


@pytest.fixture
def world():
    dataset = demo_dataset()
    batch = published_batch(dataset, assignments=9)
    other = published_batch(dataset, assignments=1)
    hit, second = batch.hits.order_by("pk")[:2]
    acu = hit.summary.document.reference.acus.order_by("pk").first()
    made = {}
    for name, (status, confirmed, excluded, _) in CASES.items():
        worker = Worker.objects.create(provider="inhouse", external_id=name, excluded=excluded)
        assignment = Assignment.objects.create(hit=hit, worker=worker, status=status, confirmed=confirmed)
        made[name] = Judgment.objects.create(assignment=assignment, acu=acu, present=True)
    # The same kind of judgment on another HIT of the round and in another round.
    on_second = Assignment.objects.create(
        hit=second, worker=Worker.objects.get(external_id="submitted"), status=S.SUBMITTED
    )
    second_acu = second.summary.document.reference.acus.order_by("pk").first()
    elsewhere = Assignment.objects.create(
        hit=other.hits.order_by("pk").first(), worker=Worker.objects.get(external_id="approved"), status=S.APPROVED
    )
    extra = {
        "second_hit": Judgment.objects.create(assignment=on_second, acu=second_acu, present=False),
        "other_round": Judgment.objects.create(assignment=elsewhere, acu=acu, present=False),
    }
    return dataset, batch, hit, made, extra


def ids(qs) -> set[int]:
    return set(qs.values_list("pk", flat=True))


@pytest.mark.parametrize("name", list(CASES))
def test_each_rule_decides_whether_a_judgment_counts(name, world):
    dataset, batch, hit, made, _ = world
    counts = CASES[name][3]
    assert (made[name].pk in ids(counted_judgments(hit=hit))) is counts
    assert (made[name].pk in ids(counted_judgments(dataset, batch))) is counts
    assert (made[name].pk in ids(counted_judgments(dataset))) is counts
    assert (made[name].assignment_id in ids(counted_assignments(dataset, batch))) is counts


def test_excluded_workers_count_only_when_asked(world):
    dataset, batch, hit, made, _ = world
    with_excluded = ids(counted_judgments(dataset, batch, include_excluded=True))
    assert made["excluded"].pk in with_excluded
    assert {made["unconfirmed"].pk, made["rejected"].pk, made["assigned"].pk}.isdisjoint(with_excluded)
    assert made["excluded"].assignment_id in ids(counted_assignments(dataset, batch, include_excluded=True))


def test_scope_is_the_dataset_the_round_or_the_hit(world):
    dataset, batch, hit, made, extra = world
    assert ids(counted_judgments(hit=hit)) == {made["submitted"].pk, made["approved"].pk}
    in_round = ids(counted_judgments(dataset, batch))
    assert extra["second_hit"].pk in in_round and extra["other_round"].pk not in in_round
    in_dataset = ids(counted_judgments(dataset))
    assert {extra["second_hit"].pk, extra["other_round"].pk} <= in_dataset
    assert in_dataset > in_round  # the imported expert rounds count in the dataset too


def test_the_lead_sees_the_majority_of_the_counted_judgments_only(world):
    _, _, hit, made, _ = world
    acu_id = made["submitted"].acu_id
    row = next(r for r in assignment_answers(made["submitted"].assignment)["rows"] if r["acu"].pk == acu_id)
    assert row["votes"] == "1/1"  # the other counted worker ("approved"), none of the five that do not count
