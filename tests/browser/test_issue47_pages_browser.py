"""Issue 47's page fixes, seen at 1280 and 390 px: a batch that cannot finish, the authoring page
telling the lead a dataset has no second author, and an expired task."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Reference
from annotation.services import authoring
from hits.models import Assignment
from hits.services import handout, review
from hits.services.submission import task_token

from ..authoring_data import unauthored_dataset
from ..conftest import PASSWORD
from ..test_handout import make_workers
from ..test_waiting_places import two_place_hit, work
from .conftest import login

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_pages_say_what_waits_and_why(live_server, page, shoot, lead, author, tmp_path, width):
    page.set_viewport_size({"width": width, "height": 860})
    batch, _ = two_place_hit()
    careful, careless = make_workers(2, prefix=f"b{width}")
    work(careful, batch)
    review.reject(assignment_id=work(careless, batch).pk, feedback="Random.")
    dataset = unauthored_dataset(tmp_path, name=f"lone-{width}", documents=2)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    ref = Reference.objects.get(writer=author, document__dataset=dataset)
    sentences = [{"id": s.pk, "acus": []} for s in ref.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": "A fact."}]
    authoring.save_reference(reference_id=ref.pk, user=author, base_version=0, sentences=sentences)
    authoring.submit_for_review(reference_id=ref.pk, user=author)

    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    assert "cannot finish by itself" in page.inner_text("#waiting-places")
    shoot(page, f"i47-batch-waiting-{width}")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/authoring/")
    assert "nobody can review" in page.inner_text("#review-gap")
    shoot(page, f"i47-authoring-gap-{width}")

    (late,) = make_workers(1, prefix=f"late{width}")
    held = handout.next_assignment(late, batch)  # the rejected place
    Assignment.objects.filter(pk=held.pk).update(deadline=timezone.now() - timedelta(minutes=2))
    page.goto(f"{live_server.url}/task/{task_token(held)}/")
    assert "This task expired" in page.inner_text("#task-expired")
    assert page.inner_text("#progress") == "Expired"
    shoot(page, f"i47-task-expired-{width}")
