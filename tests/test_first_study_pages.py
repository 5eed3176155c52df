"""Issue 27, items 6-9, 13 and 14: what the pages of a first study say is true, and nothing needs /admin/."""

from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Reference
from hits.batch_fields import BatchSpec
from hits.models import Assignment, Batch, Worker
from hits.selectors import figures
from hits.services import handout, review
from hits.services.submission import submit_assignment, task_token
from hits.stages import batch_stage
from hits.views.worker import inhouse_worker
from scoring.results import onboarding
from scoring.runs.services import compute_scores

from .conftest import DEMO_ROSE, PASSWORD
from .crowd_data import all_answers, demo_dataset, published_batch, simulated_round
from .test_handout import make_workers

pytestmark = pytest.mark.django_db


def submitted_task(worker_user, batch=None):
    assignment = handout.next_assignment(inhouse_worker(worker_user), batch)
    submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment))
    return assignment


# 6 ----------------------------------------------------------------------------------------------


def test_back_to_a_submitted_task_says_so_at_once_and_the_pages_are_never_cached(client, worker):
    batch = published_batch()
    client.force_login(worker)
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    work = client.get(reverse("work"))
    assert "Continue my task" in work.content.decode()
    assert "no-store" in work["Cache-Control"]
    open_page = client.get(reverse("task", args=[task_token(assignment)]))
    assert "no-store" in open_page["Cache-Control"]
    assert '<p class="notice ok" id="already-submitted" role="status" hidden></p>' in open_page.content.decode()

    submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment))
    again = client.get(reverse("task", args=[task_token(assignment)])).content.decode()
    assert 'id="already-submitted" role="status">This task is already submitted.' in again
    assert 'data-done="true"' in again and 'id="submit-task"' not in again
    assert "Continue my task" not in client.get(reverse("work")).content.decode()


# 7 ----------------------------------------------------------------------------------------------


def test_the_bonus_reason_is_shown_to_the_worker(client, worker, lead):
    assignment = submitted_task(worker, published_batch())
    review.send_bonus(
        assignment_id=assignment.pk, amount="0.40", reason="Careful answers on hard facts", token="t1", by=lead
    )
    client.force_login(worker)
    page = client.get(reverse("work")).content.decode()
    assert 'id="bonuses"' in page and "Careful answers on hard facts" in page and "$0.40" in page


# 8 ----------------------------------------------------------------------------------------------


def test_imported_expert_labels_are_not_a_worker_with_buttons(client, lead):
    dataset, batch = simulated_round()
    expert = (
        Worker.objects.filter(provider=Worker.Provider.EXPERT, assignments__hit__batch__dataset=dataset)
        .distinct()
        .get()
    )
    compute_scores(dataset, None, trigger="test")
    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk])).content.decode()
    assert f'<tr data-worker="{expert.external_id}"' not in page
    assert 'id="expert-labels"' in page and "They are not a worker" in page
    assert page.count("<tr data-worker=") == Worker.objects.filter(assignments__hit__batch=batch).distinct().count()
    response = client.post(
        reverse("dashboard_worker_action", args=[dataset.pk, expert.pk, "block"]), {"reason": "x"}, follow=True
    )
    assert "not a worker: they cannot be excluded, blocked or paid" in response.content.decode()
    expert.refresh_from_db()
    assert expert.blocked_at is None and not expert.excluded


# 9 ----------------------------------------------------------------------------------------------


def test_a_published_batch_with_every_place_taken_does_not_say_workers_are_taking_it(worker):
    batch = published_batch(assignments=1)
    batch.hits.exclude(pk=batch.hits.order_by("pk").first().pk).delete()
    assert batch_stage(batch).explanation == "Workers are taking its HITs."
    submitted_task(worker, batch)
    stage = batch_stage(batch)
    assert stage.code == "published"
    assert stage.explanation == "Every place is taken: 1 submitted, waiting for your review."


def test_the_budget_hint_says_what_is_true(client, lead):
    dataset = demo_dataset()
    from hits.services.batches import create_batch

    batch = create_batch(dataset=dataset, spec=BatchSpec(budget=Decimal("1000.00")))
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "is within the budget" in page and "Publishing is refused" not in page
    Batch.objects.filter(pk=batch.pk).update(budget=Decimal("0.01"))
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "Publishing is refused while the estimate" in page
    Batch.objects.filter(pk=batch.pk).update(budget=None)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "No budget: publishing is not limited" in page


def test_a_stopped_batch_has_no_estimated_finish(worker):
    batch = published_batch()
    make_workers(2, prefix="also")  # three workers for three places a HIT: the batch can finish
    submitted_task(worker, batch)
    assert figures.progress(figures.scope_batches(batch.dataset, batch))["eta"] is not None
    Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.STOPPED)
    batch.refresh_from_db()
    assert figures.progress(figures.scope_batches(batch.dataset, batch))["eta"] is None


def test_every_step_done_is_not_said_while_references_wait(client, lead, worker):
    dataset = demo_dataset()
    submitted_task(worker, published_batch(dataset))  # every step of the loop done once
    client.force_login(lead)
    assert "Every step is done: the results are on" in client.get(reverse("home")).content.decode()
    waiting = Reference.objects.filter(document__dataset=dataset).order_by("pk")[:3]
    Reference.objects.filter(pk__in=[r.pk for r in waiting]).update(status=Reference.Status.CHANGES)
    assert onboarding.lead_steps()["unwritten"] == 3
    page = client.get(reverse("home")).content.decode()
    assert "Every step is done" not in page
    assert "Every step has been done once; 3 references still have no approved ACUs" in page


def test_the_work_page_texts(client, worker, lead):
    from hits.services.qualification import build_test

    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="Check", items=2, pass_score=0.8)
    batch = published_batch(dataset)
    Batch.objects.filter(pk=batch.pk).update(qualification_test=test)
    client.force_login(worker)
    page = client.get(reverse("work")).content.decode()
    assert (
        "pass with 80% (the mean of the shares right on present and on not-present facts)" in page
        and "0.80" not in page
    )
    me = inhouse_worker(worker)
    Assignment.objects.create(hit=batch.hits.first(), worker=me, status=Assignment.Status.SUBMITTED)
    page = client.get(reverse("work")).content.decode()
    assert "<b>1</b> recent task<" in page
    review.block_worker(worker_id=me.pk, reason="Too fast", by=lead)
    page = client.get(reverse("work")).content.decode()
    assert "blocked from new tasks: Too fast" in page and 'id="start-next"' not in page


def test_bucket_errors_have_no_backticks():
    from hits.forms import BucketsForm

    form = BucketsForm({"buckets": "six to ten 0.25"})
    assert not form.is_valid()
    assert "write it as “6-10 0.25” or “21+ 0.55”" in form.errors["buckets"][0] and "`" not in form.errors["buckets"][0]


# 13 ---------------------------------------------------------------------------------------------


def test_people_form_keeps_what_was_typed_after_an_error(client, lead):
    client.force_login(lead)
    response = client.post(reverse("people"), {"username": "new worker!", "role": "worker", "email": "w@example.org"})
    page = response.content.decode()
    assert response.status_code == 400 and "A username is 1 to 150" in page
    assert 'value="new worker!"' in page and '<option value="worker" selected>' in page
    assert 'value="w@example.org"' in page and '<option value="author" selected>' not in page


def test_lead_deactivates_reactivates_and_resets_a_password_without_the_admin(client, lead, worker):
    client.force_login(lead)
    page = client.post(reverse("person_action", args=[worker.pk, "reset"]), follow=True).content.decode()
    assert f"New password for {worker.username} (shown once): " in page
    new_password = page.split("(shown once): ")[1].split("<")[0].strip()
    other = Client()
    assert not other.login(username=worker.username, password=PASSWORD)
    assert other.login(username=worker.username, password=new_password)
    assert other.get(reverse("work")).status_code == 200

    client.force_login(lead)
    page = client.post(reverse("person_action", args=[worker.pk, "deactivate"]), follow=True).content.decode()
    assert f"{worker.username} can no longer sign in" in page and 'id="people-inactive"' in page
    assert other.get(reverse("work")).status_code == 302  # signed out: to the login page
    assert not Client().login(username=worker.username, password=new_password)
    client.post(reverse("person_action", args=[worker.pk, "reactivate"]))
    assert Client().login(username=worker.username, password=new_password)

    page = client.post(reverse("person_action", args=[lead.pk, "deactivate"]), follow=True).content.decode()
    assert "You cannot do that to your own account here." in page
    lead.refresh_from_db()
    assert lead.is_active


# 14 ---------------------------------------------------------------------------------------------


def test_favicon(client, lead):
    client.force_login(lead)
    assert '<link rel="icon" href="/static/img/favicon.svg"' in client.get(reverse("people")).content.decode()
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("img/favicon.svg")


def test_a_duplicate_name_on_the_import_page_says_what_to_do_on_the_page(client, lead):
    demo_dataset("taken")
    client.force_login(lead)
    upload = SimpleUploadedFile("d.jsonl", DEMO_ROSE.read_bytes())
    page = client.post(reverse("dataset_import"), {"name": "taken", "format": "rose", "file": upload}).content.decode()
    assert "a dataset named &#x27;taken&#x27; exists. Choose another name, or tick “Replace”" in page
    assert "--replace" not in page
    with pytest.raises(CommandError, match="pass --replace to overwrite it"):
        call_command("import_dataset", str(DEMO_ROSE), "--name", "taken")
