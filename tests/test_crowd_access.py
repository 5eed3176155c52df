"""Who may open and use the crowd pages: every view for every role."""

import pytest
from django.urls import reverse

from hits.models import Assignment, Batch, LedgerEntry
from hits.services import handout
from hits.services.qualification import build_test
from hits.services.submission import submit_assignment

from .crowd_data import all_answers, demo_dataset, published_batch
from .test_access import ROLES

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def world(worker):
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="q", items=2)
    batch = published_batch(dataset)
    from hits.views.worker import inhouse_worker

    w = inhouse_worker(worker)
    assignment = handout.next_assignment(w, batch)
    submit_assignment(assignment_id=assignment.pk, worker_id=w.pk, answers=all_answers(assignment))
    Batch.objects.filter(pk=batch.pk).update(qualification_test=test)  # the test is offered to in-house workers
    return {"dataset": dataset, "batch": batch, "test": test, "assignment": assignment, "hit": assignment.hit}


def login(client, request, role):
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    return client


LEAD_PAGES = [
    "batch_list",
    "batch_new",
    "qualification_new",
    "batch_detail",
    "batch_ledger",
    "batch_ledger_csv",
    "ledger_csv_all",
    "hit_preview",
    "assignment_review",
    "batch_estimate",
    "people",
]


def lead_url(name, world):
    args = {
        "batch_list": [world["dataset"].pk],
        "batch_new": [world["dataset"].pk],
        "qualification_new": [world["dataset"].pk],
        "batch_detail": [world["batch"].pk],
        "batch_ledger": [world["batch"].pk],
        "batch_ledger_csv": [world["batch"].pk],
        "ledger_csv_all": [],
        "hit_preview": [world["hit"].pk],
        "assignment_review": [world["assignment"].pk],
        "batch_estimate": [world["dataset"].pk],
        "people": [],
    }[name]
    return reverse(name, args=args)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("page", LEAD_PAGES)
def test_lead_pages(role, page, world, client, request):
    response = login(client, request, role).get(lead_url(page, world))
    if role == "lead":
        assert response.status_code == 200
    elif role == "anonymous":
        assert response.status_code == 302 and "login" in response["Location"]
    else:
        assert response.status_code == 403


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("page", ["work", "take_test"])
def test_worker_pages(role, page, world, client, request):
    url = reverse(page, args=[world["test"].pk] if page == "take_test" else [])
    response = login(client, request, role).get(url)
    if role == "worker":
        assert response.status_code == 200
    elif role == "anonymous":
        assert response.status_code == 302
    else:
        assert response.status_code == 403


@pytest.mark.parametrize("role", ["author", "worker", "outsider", "anonymous"])
def test_only_leads_can_pay_review_block_or_publish(role, world, client, request, make_user):
    client = login(client, request, role)
    batch, assignment = world["batch"], world["assignment"]
    posts = [
        (reverse("batch_review", args=[batch.pk]), {"assignment": assignment.pk, "action": "approve"}),
        (
            reverse("batch_bonus", args=[batch.pk]),
            {"assignment": assignment.pk, "amount": "1", "reason": "x", "token": "t"},
        ),
        (reverse("batch_worker_action", args=[batch.pk, "block"]), {"worker": assignment.worker_id, "reason": "x"}),
        (reverse("batch_action", args=[batch.pk, "stop"]), {}),
    ]
    for url, data in posts:
        assert client.post(url, data).status_code in (302, 403)
    assignment.refresh_from_db()
    batch.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED and not LedgerEntry.objects.exists()
    assert not assignment.worker.__class__.objects.filter(blocked_at__isnull=False).exists()
    assert batch.status == "published"


def test_lead_review_bonus_and_block_through_the_pages(world, client, lead):
    client.force_login(lead)
    batch, assignment = world["batch"], world["assignment"]
    client.post(reverse("batch_review", args=[batch.pk]), {"assignment": [assignment.pk], "action": "approve"})
    for _ in range(2):  # a double click sends the same form twice
        client.post(
            reverse("batch_bonus", args=[batch.pk]),
            {"assignment": assignment.pk, "amount": "0.40", "reason": "thanks", "token": "form-1"},
        )
    kinds = list(LedgerEntry.objects.values_list("kind", flat=True))
    assert kinds.count("reward") == 1 and kinds.count("bonus") == 1
    page = client.get(reverse("batch_ledger", args=[batch.pk])).content.decode()
    assert page.count("Bonus</td>") == 1 and page.count("Reward</td>") == 1
    client.post(
        reverse("batch_worker_action", args=[batch.pk, "block"]), {"worker": assignment.worker_id, "reason": "spam"}
    )
    assignment.worker.refresh_from_db()
    assert assignment.worker.blocked


def test_worker_cannot_open_someone_elses_task_by_guessing(world, client, make_user):
    other = make_user("other-worker", "worker")
    client.force_login(other)
    assert client.get(reverse("task", args=["not-a-token"])).status_code == 404


def test_batch_page_title_is_just_the_batch_name(world, client, lead):
    import re

    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[world["batch"].pk])).content.decode()
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert world["batch"].name in title and "<table" not in title
