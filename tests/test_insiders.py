"""Issue 42, item 6: nothing kept an author from also working as a participant. A dataset's
insiders (the lead who made it, the authors who write or proofread its references, the experts
who labelled its gold) take none of its crowd work: the one handout (`take_place`, under the
in-house Start next task and the Prolific and panel sessions) leaves its batches out for their
accounts, and the worker page says why. Other datasets' batches stay open to them."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from annotation.models import Dataset, Reference
from config.roles import WORKER
from hits.models import Assignment
from hits.services import expert
from hits.services.submission import submit_assignment

from .authoring_data import unlabelled_dataset
from .crowd_data import demo_dataset, published_batch
from .test_expert_labels import truth

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def also_worker(user):
    user.groups.add(Group.objects.get(name=WORKER))
    return user


def start(client, user):
    client.force_login(user)
    response = client.post(reverse("work_next"), follow=True)
    return response, " ".join(str(m) for m in response.context["messages"])


def test_a_datasets_authors_lead_and_experts_get_none_of_its_crowd_work(client, make_user, tmp_path):
    own, other = unlabelled_dataset(tmp_path, name="own", documents=2), demo_dataset("other")
    batch = published_batch(own, assignments=3)
    writer = also_worker(make_user("wren-writer", "author"))
    proofreader = also_worker(make_user("pia-proofreader", "author"))
    maker = also_worker(make_user("lou-lead", "lead"))
    labeller = also_worker(make_user("eli-expert", "author"))
    outsider = make_user("olga-outsider", "worker")
    Reference.objects.filter(
        document__dataset=own, pk=Reference.objects.filter(document__dataset=own).first().pk
    ).update(writer=writer, reviewer=proofreader)
    Dataset.objects.filter(pk=own.pk).update(created_by=maker)
    round_ = expert.create_round(own, count=1, experts=1, seed=0)
    a = expert.next_task(labeller, round_)
    submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=truth(a.hit.summary_id), expert=labeller)

    for insider, why in (
        (writer, "you write or proofread its references"),
        (proofreader, "you write or proofread its references"),
        (maker, "you lead it"),
        (labeller, "you labelled its gold"),
    ):
        response, said = start(client, insider)
        assert "The open batches of own are not offered to you" in said, insider.username
        # The page says which datasets are closed to them and why (their own reason only).
        notice = response.content.decode().split('id="insider-batches"')[1].split("</div>")[0]
        assert f"<li><b>own</b>: {why}.</li>" in notice, (insider.username, notice)
        assert notice.count("<li>") == 1
        assert not Assignment.objects.filter(worker__user=insider).exists()
    # The same batch is open to a worker from outside.
    response, _ = start(client, outsider)
    assert Assignment.objects.get(worker__user=outsider).hit.batch == batch
    assert "not offered to you" not in response.content.decode()

    # Another dataset's batch stays open to them.
    elsewhere = published_batch(other, assignments=3)
    response, _ = start(client, writer)
    assert Assignment.objects.get(worker__user=writer).hit.batch == elsewhere
