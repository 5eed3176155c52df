"""A blocked worker gets no more work of any kind: no task and no qualification test (a test
they passed would tell them "You can now take tasks", and their failures would spend the test's
failure budget, redrawing its gold and alerting the lead)."""

import pytest
from django.urls import reverse
from django.utils import timezone

from hits.models import QualificationAttempt, Worker
from hits.providers.prolific.models import ProlificGroupMember
from hits.services import qualification
from hits.views.worker import inhouse_worker

from .crowd_data import demo_dataset, published_batch
from .test_qualification import perfect
from .test_qualification_mining import ids, screening  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


def test_a_blocked_worker_cannot_take_a_qualification_test(client, worker):
    dataset = demo_dataset()
    test = qualification.build_test(dataset=dataset, name="q", items=2)
    published_batch(dataset, qualification_test=test)
    me = inhouse_worker(worker)
    me.blocked_at, me.block_reason = timezone.now(), "copied answers"
    me.save(update_fields=["blocked_at", "block_reason"])
    client.force_login(worker)

    page = client.get(reverse("work"))
    assert reverse("take_test", args=[test.pk]) not in page.content.decode()
    assert not qualification.attempt_status(me, test)["can_try"]
    opened = client.get(reverse("take_test", args=[test.pk]), follow=True)
    assert "blocked" in opened.content.decode() and 'name="ans-' not in opened.content.decode()
    posted = client.post(reverse("take_test", args=[test.pk]), {f"ans-{k}": "1" for k in perfect(test)}, follow=True)
    assert "You can now take tasks" not in posted.content.decode()
    assert not QualificationAttempt.objects.filter(worker=me).exists()
    with pytest.raises(qualification.QualificationError, match="blocked"):
        qualification.submit_attempt(test=test, worker=me, answers=perfect(test))


def test_a_blocked_prolific_participant_is_not_screened_into_the_study(client, screening):  # noqa: F811
    batch, test = screening
    Worker.objects.create(provider="prolific", external_id="BLOCKED1", blocked_at=timezone.now(), block_reason="bot")
    url = f"/prolific/screening/{batch.pk}/"
    shown = client.get(url, ids("BLOCKED1", 1)).content.decode()
    assert "blocked" in shown and "You have taken this test" not in shown and 'name="ans-' not in shown
    right = {f"ans-{k}": "1" if v else "0" for k, v in perfect(test).items()}
    posted = client.post(url, {**ids("BLOCKED1", 1), **right}).content.decode()
    assert "Passed" not in posted
    assert not QualificationAttempt.objects.filter(test=test).exists()
    assert not ProlificGroupMember.objects.exists()


def test_a_task_taken_back_from_a_blocked_worker_does_not_say_its_time_ran_out(client):
    """Blocking a worker gives their held task back at once, long before its deadline: its page
    and a submission say it was taken back, not that its time ran out (at a time still to come)."""
    import json

    from hits.services import handout, review
    from hits.services.submission import task_token

    from .crowd_data import all_answers
    from .test_handout import make_workers

    batch = published_batch(gold_share=0.0)
    (me,) = make_workers(1)
    assignment = handout.next_assignment(me, batch)
    token = task_token(assignment)
    review.block_worker(worker_id=me.pk, reason="copied answers")

    page = client.get(reverse("task", args=[token])).content.decode()
    assert 'id="task-expired"' in page and "ran out at" not in page and "taken back" in page
    assert 'data-done="withdrawn"' in page  # the page offers no Submit, as for an expired task; it reads "Taken back"
    sent = client.post(
        reverse("task_submit", args=[token]), json.dumps({"answers": all_answers(assignment)}), "application/json"
    ).json()
    assert not sent["ok"] and sent["final"] and "ran out at" not in sent["error"] and "taken back" in sent["error"]
