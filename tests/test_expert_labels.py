"""Issue 27, item 1: expert labelling in the browser. Authors and leads label summaries on the
crowd's task page in an expert round; the labels land where imported expert labels are, so they
are the gold of qualification tests, gold HITs, worker quality and the judges; no money moves;
a test of one dataset is offered to another's batches only when its lead chooses."""

import re

import pytest
from django.urls import reverse

from annotation.models import Summary
from hits import gold
from hits.batch_fields import BatchSpec
from hits.forms import BatchForm
from hits.models import Assignment, Batch, LedgerEntry, QualificationTest, Worker
from hits.services import expert, handout, qualification, review
from hits.services.batches import BatchError, create_batch, publish_batch
from hits.services.submission import submit_assignment, task_token
from scoring.machine.data import label_sources

from .authoring_data import unauthored_dataset, unlabelled_dataset
from .test_handout import make_workers

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def truth(summary_id: int) -> dict[str, bool]:
    """The answers an expert gives in these tests: a fact is present on every other position."""
    acus = Summary.objects.get(pk=summary_id).document.reference.acus.order_by("sentence__position", "position")
    return {str(a.pk): i % 2 == 0 for i, a in enumerate(acus)}


def label_all(batch, user) -> dict[int, dict[str, bool]]:
    """The user labels every summary of the round through the round's handout; their answers."""
    given = {}
    while True:
        try:
            assignment = expert.next_task(user, batch)
        except handout.NoWork:
            return given
        answers = truth(assignment.hit.summary_id)
        submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=answers, expert=user)
        given[assignment.hit.summary_id] = answers


def messages_of(response) -> str:
    return " ".join(str(m) for m in response.context["messages"])


def test_expert_labels_made_in_the_browser_become_the_gold(client, lead, author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=3)
    assert gold.gold_summary_count(dataset) == 0
    client.force_login(lead)
    page = client.get(reverse("dataset_detail", args=[dataset.pk]))
    assert "Open the expert round" in page.content.decode() and re.search(
        r"<b>0</b> of 12 summaries", page.content.decode()
    )

    response = client.post(reverse("expert_new", args=[dataset.pk]), {"count": 6, "experts": 1}, follow=True)
    batch = Batch.objects.get(dataset=dataset, kind=Batch.Kind.EXPERT)
    assert response.redirect_chain[-1][0] == reverse("expert_round", args=[batch.pk])
    # Spread: 6 of 3 documents x 4 systems, two per document and at most two per system.
    chosen = Summary.objects.filter(hits__batch=batch)
    assert sorted(chosen.values_list("document", flat=True).order_by("document")) == sorted(
        [d for d in dataset.documents.values_list("pk", flat=True) for _ in range(2)]
    )
    per_system = [chosen.filter(system=s).count() for s in dataset.systems.all()]
    assert max(per_system) == 2 and min(per_system) == 1

    # An author labels one summary on the task page the crowd uses, submitting in their session.
    client.force_login(author)
    round_page = client.get(reverse("expert_round", args=[batch.pk]))
    assert "0</b> of 6 summaries labelled" in round_page.content.decode()
    opened = client.post(reverse("expert_next", args=[batch.pk]))
    assert opened.status_code == 302 and "/expert/task/" in opened.url
    task = client.get(opened.url)
    assert task.status_code == 200 and 'id="task-form"' in task.content.decode()
    assert reverse("expert_next", args=[batch.pk]) in task.content.decode()  # "Next summary" stays in the round
    assignment = Assignment.objects.get(hit__batch=batch)
    answers = truth(assignment.hit.summary_id)
    # The page's own signed submit link (a link signed now may differ from it by a clock second).
    submit = re.search(r'"(/expert/task/[^"]+/submit)"', task.content.decode())
    assert submit, "the task page carries its submit link"
    stored = client.post(
        submit.group(1),
        {"answers": answers, "active_seconds": 30},
        content_type="application/json",
    )
    assert stored.json()["ok"] is True

    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.APPROVED  # like an imported label: nothing to review
    assert assignment.worker.provider == Worker.Provider.EXPERT
    assert assignment.worker.external_id == f"{dataset.name}/{author.username}"
    known = gold.known_answers(dataset)
    assert known == {assignment.hit.summary_id: {int(a): v for a, v in answers.items()}}
    assert gold.gold_summary_count(dataset) == 1
    # The judges' expert target reads them too.
    assert "expert" in label_sources(dataset)
    page = client.get(reverse("dataset_detail", args=[dataset.pk]))
    assert re.search(r"<b>1</b> of 12 summaries are gold", page.content.decode())
    assert "5 of 6 summaries left" in page.content.decode()


def test_a_qualification_test_and_gold_hits_are_built_from_browser_labels(author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=3)
    with pytest.raises(qualification.QualificationError, match="Label some as gold in the browser"):
        qualification.build_test(dataset=dataset, name="q", items=3)
    batch = expert.create_round(dataset, count=6, experts=1, seed=1)
    given = label_all(batch, author)
    assert len(given) == 6

    test = qualification.build_test(dataset=dataset, name="q", items=3, seed=5)
    assert test.items.count() == 6 and test.sheet_items == 3  # a pool of all six (three sheets wanted)
    for item in test.items.all():
        assert item.answers == given[item.summary_id]
    # A crowd batch gets gold HITs from them, and a worker's gold accuracy follows.
    crowd = publish_batch(create_batch(dataset=dataset, spec=BatchSpec(assignments=1, gold_share=0.5), seed=2))
    gold_hits = list(crowd.hits.filter(gold_answers__isnull=False))
    assert len(gold_hits) == 6
    assert all(h.gold_answers == given[h.summary_id] for h in gold_hits)
    (worker,) = make_workers(1)
    while True:
        try:
            a = handout.next_assignment(worker, crowd)
        except handout.NoWork:
            break
        submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=truth(a.hit.summary_id))
    counted = Assignment.objects.filter(hit__batch=crowd, worker=worker, gold_total__isnull=False)
    assert counted.count() == 6 and all(a.gold_correct == a.gold_total for a in counted)


def test_expert_work_moves_no_money(author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=2)
    batch = expert.create_round(dataset, count=4, experts=2, seed=0)
    label_all(batch, author)
    assert not batch.buckets.exists() and set(batch.hits.values_list("reward", flat=True)) == {0}
    done = Assignment.objects.filter(hit__batch=batch)
    assert done.count() == 4 and set(done.values_list("status", flat=True)) == {Assignment.Status.APPROVED}
    # Approval (by hand or automatic) has nothing to do: no reward, no fee.
    for a in done:
        review.approve(assignment_id=a.pk)
    assert review.auto_approve_due() == 0
    assert not LedgerEntry.objects.filter(batch=batch).exists()
    # The crowd never gets expert work: an in-house worker finds nothing.
    (worker,) = make_workers(1)
    with pytest.raises(handout.NoWork):
        handout.next_assignment(worker)
    # A second expert takes the second place of each summary, never the first expert's own.
    with pytest.raises(handout.NoWork, match="labelled or being labelled"):
        expert.next_task(author, batch)


def test_a_test_of_another_dataset_is_offered_only_when_its_lead_shares_it(client, lead, author, tmp_path):
    a = unlabelled_dataset(tmp_path, name="study-a", documents=3)
    label_all(expert.create_round(a, count=5, experts=1, seed=0), author)
    b = unlabelled_dataset(tmp_path, name="study-b", documents=2)
    test = qualification.build_test(dataset=a, name="A's test", items=3)

    assert test not in BatchForm(dataset=b).fields["qualification_test"].queryset
    with pytest.raises(BatchError, match="belongs to another dataset and is not offered"):
        create_batch(dataset=b, qualification_test=test)
    client.force_login(lead)
    refused = client.post(
        "/api/batches/", {"dataset": b.pk, "qualification_test": test.pk}, content_type="application/json"
    )
    assert refused.status_code == 422 and "qualification_test" in refused.json()["fields"]
    assert not Batch.objects.filter(dataset=b).exists()

    client.post(reverse("qualification_shared", args=[test.pk]), {"shared": "1"})
    assert QualificationTest.objects.get(pk=test.pk).shared
    form = BatchForm(dataset=b)
    assert test in form.fields["qualification_test"].queryset
    assert form.fields["qualification_test"].label_from_instance(test) == "A's test (from study-a)"
    batch = publish_batch(create_batch(dataset=b, qualification_test=test))
    (worker,) = make_workers(1)
    with pytest.raises(handout.NoWork, match="qualification"):
        handout.next_assignment(worker, batch)
    perfect = {
        qualification.answer_key(item.pk, acu): value
        for item in test.items.all()
        for acu, value in item.answers.items()
    }
    assert qualification.submit_attempt(test=test, worker=worker, answers=perfect).passed
    assert handout.next_assignment(worker, batch).hit.batch == batch


def test_bad_input_gets_a_clear_message_and_changes_nothing(client, lead, author, worker, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=2)
    client.force_login(lead)
    for data, said in (
        ({"count": "0", "experts": "1"}, "Summaries: Ensure this value is greater than or equal to 1."),
        ({"count": "ten", "experts": "1"}, "Summaries: Enter a whole number."),
        ({"count": "3", "experts": "9"}, "Experts per summary: Ensure this value is less than or equal to 3."),
    ):
        response = client.post(reverse("expert_new", args=[dataset.pk]), data, follow=True)
        assert response.status_code == 200 and f"No expert round was made. {said}" in messages_of(response)
    assert not Batch.objects.filter(kind=Batch.Kind.EXPERT).exists()
    with pytest.raises(expert.ExpertError, match="between 1 and 200"):
        expert.create_round(dataset, count=201)

    # Nothing left to label: every reference is still to be written.
    todo = unauthored_dataset(tmp_path, name="to-write", documents=2)
    response = client.post(reverse("expert_new", args=[todo.pk]), {"count": "5", "experts": "1"}, follow=True)
    assert "has no summary left to label" in messages_of(response) and "write and proofread" in messages_of(response)
    page = client.get(reverse("qualification_new", args=[todo.pk]))
    assert "Label more as gold" in page.content.decode()
    made = client.post(
        reverse("qualification_new", args=[todo.pk]),
        {"name": "q", "items": 3, "pass_score": 0.8, "max_attempts": 2, "retry_after_hours": 24},
    )
    assert "Label some as gold in the browser" in made.content.decode()
    assert "import expert labels first" not in made.content.decode()

    # Only leads open rounds; workers never see expert work; a task link opens only for its expert.
    batch = expert.create_round(dataset, count=2, seed=0)
    client.force_login(author)
    assert client.post(reverse("expert_new", args=[dataset.pk]), {"count": "2", "experts": "1"}).status_code == 403
    assignment = expert.next_task(author, batch)
    client.force_login(worker)
    assert client.get(reverse("expert_round", args=[batch.pk])).status_code == 403
    assert client.post(reverse("expert_next", args=[batch.pk])).status_code == 403
    client.force_login(lead)
    assert client.get(reverse("expert_task", args=[task_token(assignment)])).status_code == 404
    assert client.get(reverse("expert_task", args=["not-a-token"])).status_code == 404
    # A crowd batch is not an expert round.
    crowd = create_batch(dataset=dataset)
    assert client.get(reverse("expert_round", args=[crowd.pk])).status_code == 404


def test_the_expert_labels_are_never_a_flagged_worker(author, tmp_path):
    """The gold is compared with no one: even when the crowd's majority disagrees with every
    expert label, the experts are not flagged, so "without the flagged workers" keeps them."""
    from scoring.results.dashboard import workers_table
    from scoring.runs.services import compute_scores

    dataset = unlabelled_dataset(tmp_path, documents=3)
    label_all(expert.create_round(dataset, count=8, experts=1, seed=0), author)
    crowd = publish_batch(create_batch(dataset=dataset, spec=BatchSpec(assignments=2)))
    for worker in make_workers(2):
        while True:
            try:
                a = handout.next_assignment(worker, crowd)
            except handout.NoWork:
                break
            opposite = {k: not v for k, v in truth(a.hit.summary_id).items()}
            submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=opposite)
    run = compute_scores(dataset, None, trigger="test")
    rows = workers_table(run)["rows"]
    experts = [r for r in rows if r["provider"] == Worker.Provider.EXPERT]
    assert len(experts) == 1 and experts[0]["agreement"] < 0.6 and experts[0]["flags"] == []
    assert workers_table(run)["flagged"] == 0


def test_a_draft_batch_marked_as_expert_is_labelled_unpaid(client, lead, author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=3)
    chosen = list(dataset.systems.order_by("name")[:2])
    draft = create_batch(
        dataset=dataset, spec=BatchSpec(assignments=5), systems=chosen
    )  # the lead's choice of summaries
    client.force_login(lead)
    response = client.post(reverse("expert_from_batch", args=[draft.pk]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("expert_round", args=[draft.pk])
    batch = Batch.objects.get(pk=draft.pk)
    assert (batch.kind, batch.status, batch.provider) == ("expert", "published", Worker.Provider.EXPERT)
    assert batch.assignments_per_hit == 3 and not batch.buckets.exists()  # at most 3 experts, nothing to pay
    assert set(batch.hits.values_list("reward", "open_places")) == {(0, 3)}
    given = label_all(batch, author)
    assert set(Summary.objects.filter(pk__in=given).values_list("system", flat=True)) == {s.pk for s in chosen}
    assert gold.known_answers(dataset) == {}  # one expert of three so far: no gold while the round is open
    expert.stop_round(batch)  # closed: the labels made are the gold
    assert gold.known_answers(dataset) == {sid: {int(a): v for a, v in ans.items()} for sid, ans in given.items()}
    assert not LedgerEntry.objects.exists()
    # Only a draft crowd batch: a published one (or the round itself) is refused with a message.
    again = client.post(reverse("expert_from_batch", args=[batch.pk]), follow=True)
    assert "Only a draft crowd batch can become an expert round" in messages_of(again)
    published = publish_batch(create_batch(dataset=dataset))
    with pytest.raises(expert.ExpertError, match="not a draft"):
        expert.mark_expert(published)
    assert Batch.objects.get(pk=published.pk).kind == Batch.Kind.CROWD


def test_every_page_that_names_a_round_opens_for_an_expert_round(client, lead, author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=2)
    batch = expert.create_round(dataset, count=3, experts=1, seed=0)
    label_all(batch, author)
    client.force_login(lead)
    detail = client.get(reverse("batch_detail", args=[batch.pk]))
    assert detail.status_code == 302 and detail.url == reverse("expert_round", args=[batch.pk])
    for name in ("dashboard", "dashboard_systems", "dashboard_workers"):
        page = client.get(reverse(name, args=[dataset.pk]), {"round": batch.pk})
        assert page.status_code == 200, name
    assert client.get(f"/api/batches/{batch.pk}/").status_code == 200
    assert client.get(reverse("dataset_detail", args=[dataset.pk])).status_code == 200
    cost = client.get(f"/api/batches/{batch.pk}/cost/")
    assert cost.status_code == 409 and "this round is not a crowd batch" in cost.json()["error"]
    refused = client.post(f"/api/batches/{batch.pk}/publish/")
    assert refused.status_code == 409 and refused.json()["code"] == "conflict"
    assert refused.json()["error"] == "Only a crowd batch is published; this round holds Expert labels (made here)."


def test_a_dataset_with_labels_made_here_is_not_replaced_and_the_refusal_names_them(author, tmp_path):
    from hits.services.dataset_import import DatasetImportError, delete_dataset

    dataset = unlabelled_dataset(tmp_path, documents=2)
    batch = expert.create_round(dataset, count=2, experts=1, seed=0)
    label_all(batch, author)
    with pytest.raises(DatasetImportError) as refused:
        delete_dataset(dataset)
    assert f"has expert rounds ({batch.name})" in str(refused.value) and "crowd" not in str(refused.value)
    assert Assignment.objects.filter(hit__batch=batch).count() == 2  # nothing deleted
