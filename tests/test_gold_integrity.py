"""Issue 42, items 5 and 6: gold that cannot be forged. An expert round's task opens and submits
only for its expert's signed-in session (the signed link alone stores nothing); rounds default
to two experts per summary and a disagreement waits for a lead's decision (or a third expert's,
an author of the dataset the lead names) before it is gold;
authors see no labels of gold summaries."""

import pytest
from django.test import Client
from django.urls import reverse

from hits import gold
from hits.models import Assignment, Batch, ExpertDecision, Judgment
from hits.services import expert, handout
from hits.services.submission import EXPERT_ONLY, SubmissionRefused, submit_assignment, task_token

from .authoring_data import unlabelled_dataset
from .test_expert_labels import truth

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def post_json(client, url, answers):
    return client.post(url, {"answers": answers, "active_seconds": 20}, content_type="application/json")


def test_an_expert_link_stores_nothing_for_anyone_but_its_signed_in_expert(make_user, lead, author, worker, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=2)
    batch = expert.create_round(dataset, count=2, experts=1, seed=0)
    assignment = expert.next_task(author, batch)
    token = task_token(assignment)
    answers = truth(assignment.hit.summary_id)
    crowd_page, crowd_submit = reverse("task", args=[token]), reverse("task_submit", args=[token])
    expert_page, expert_submit = reverse("expert_task", args=[token]), reverse("expert_task_submit", args=[token])
    other_author = make_user("other-author", "author")

    # Anonymous: the crowd's link neither opens nor stores an expert round's task.
    anonymous = Client()
    assert anonymous.get(crowd_page).status_code == 404
    refused = post_json(anonymous, crowd_submit, answers)
    assert refused.status_code == 409 and refused.json() == {"ok": False, "error": EXPERT_ONLY, "final": True}
    refused = post_json(anonymous, expert_submit, answers)
    assert refused.status_code == 403 and refused.json()["final"] is True
    assert anonymous.get(expert_page).status_code == 302  # to sign in

    # Signed in, but not the task's expert: another author, a lead, a worker.
    for user, page_status, submit_status in ((other_author, 404, 409), (lead, 404, 409), (worker, 403, 403)):
        client = Client()
        client.force_login(user)
        assert client.get(crowd_page).status_code == 404, user
        assert client.get(expert_page).status_code == page_status, user
        assert post_json(client, crowd_submit, answers).status_code == 409, user
        response = post_json(client, expert_submit, answers)
        assert response.status_code == submit_status and response.json()["ok"] is False, user

    # The service itself refuses without the owner, whoever calls it.
    with pytest.raises(SubmissionRefused, match="only its expert, signed in"):
        submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=answers)
    with pytest.raises(SubmissionRefused, match="only its expert, signed in"):
        submit_assignment(
            assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=answers, expert=other_author
        )
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED
    assert not Judgment.objects.filter(assignment__hit__batch=batch).exists()

    # Even the expert's own session cannot submit through the crowd's cookie-less link.
    owner = Client(enforce_csrf_checks=True)
    owner.force_login(author)
    assert post_json(owner, crowd_submit, answers).status_code == 409
    opened = owner.get(crowd_page)
    assert opened.status_code == 302 and opened.url == expert_page
    # The expert's page submits in the session, with its CSRF token: without it, refused.
    page = owner.get(expert_page)
    assert page.status_code == 200 and f'action="{expert_submit}"' in page.content.decode()
    assert 'data-session="true"' in page.content.decode()
    assert post_json(owner, expert_submit, answers).status_code == 403
    assert not Judgment.objects.filter(assignment__hit__batch=batch).exists()
    csrf = page.cookies["csrftoken"].value if "csrftoken" in page.cookies else owner.cookies["csrftoken"].value
    stored = owner.post(
        expert_submit, {"answers": answers}, content_type="application/json", headers={"X-CSRFToken": csrf}
    )
    assert stored.status_code == 200 and stored.json()["ok"] is True
    assert stored.json()["next_url"] == reverse("expert_round", args=[batch.pk])
    assert Judgment.objects.filter(assignment=assignment).count() == len(answers)


def test_an_authors_document_page_shows_no_gold_labels(client, lead, author, tmp_path):
    from scoring.runs.services import compute_scores

    dataset = unlabelled_dataset(tmp_path, documents=1)
    batch = expert.create_round(dataset, count=2, experts=1, seed=0)
    labelled = label_round(batch, author)
    compute_scores(dataset, None, trigger="test")
    document = dataset.documents.get()
    url = reverse("document_detail", args=[dataset.pk, document.pk])

    client.force_login(lead)
    page = client.get(url).content.decode()
    assert page.count('<ol class="marks">') == 2 and "A gold summary" not in page  # leads see the gold

    client.force_login(author)
    page = client.get(url).content.decode()
    assert page.count("A gold summary: its labels grade the crowd") == len(labelled) == 2
    assert '<ol class="marks">' not in page and "annotators marked it present" not in page


def label_round(batch, user) -> list[int]:
    """`user` labels every summary of the expert round; the summaries labelled."""
    done = []
    while True:
        try:
            a = expert.next_task(user, batch)
        except handout.NoWork:
            return done
        submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=truth(a.hit.summary_id), expert=user)
        done.append(a.hit.summary_id)


def second_expert_disagrees_on(split_summary, batch, second):
    """`second` labels every summary of the round as the truth, but for two facts of `split_summary`."""
    while True:
        try:
            a = expert.next_task(second, batch)
        except handout.NoWork:
            return
        answers = truth(a.hit.summary_id)
        if a.hit.summary_id == split_summary:
            flipped = sorted(answers, key=int)[:2]
            answers = {k: (not v if k in flipped else v) for k, v in answers.items()}
        submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=answers, expert=second)


def test_two_experts_disagreement_waits_for_a_leads_review(client, make_user, lead, author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=1)
    client.force_login(lead)
    client.post(reverse("expert_new", args=[dataset.pk]), {"count": 2, "experts": 2})
    batch = Batch.objects.get(dataset=dataset, kind=Batch.Kind.EXPERT)
    assert batch.assignments_per_hit == 2  # the form's default is two experts per summary
    assert expert.create_round(dataset, count=1, seed=0).assignments_per_hit == 2  # and the service's

    first = label_round(batch, author)
    assert len(first) == 2 and gold.known_answers(dataset) == {}  # one expert of two: no gold yet
    second = make_user("second-expert", "author")
    split_summary = first[0]
    second_expert_disagrees_on(split_summary, batch, second)
    agreed = next(s for s in first if s != split_summary)
    known = gold.known_answers(dataset)
    assert set(known) == {agreed}  # the split summary waits for review
    assert known[agreed] == {int(k): v for k, v in truth(agreed).items()}

    page = client.get(reverse("expert_round", args=[batch.pk])).content.decode()
    assert "<b>1</b> summary where the experts disagree" in page
    review = client.get(reverse("expert_review", args=[batch.pk])).content.decode()
    assert review.count('name="acu-') == 4 and "(1 of 2 experts: present)" in review
    client.force_login(author)  # an author neither sees nor decides the review
    assert client.get(reverse("expert_review", args=[batch.pk])).status_code == 403
    client.force_login(lead)
    split = gold.disagreements(dataset)[split_summary]
    assert len(split) == 2
    acu_one, acu_two = sorted(split)
    refused = client.post(reverse("expert_review", args=[batch.pk]), {"summary": split_summary}, follow=True)
    assert "Choose Present or Not present" in " ".join(str(m) for m in refused.context["messages"])
    client.post(reverse("expert_review", args=[batch.pk]), {"summary": split_summary, f"acu-{acu_one}": "1"})
    assert split_summary not in gold.known_answers(dataset)  # one of two decided: still waiting
    client.post(reverse("expert_review", args=[batch.pk]), {"summary": split_summary, f"acu-{acu_two}": "0"})
    known = gold.known_answers(dataset)
    assert known[split_summary][acu_one] is True and known[split_summary][acu_two] is False
    assert ExpertDecision.objects.filter(decided_by=lead).count() == 2
    assert "No disagreement waits" in client.get(reverse("expert_review", args=[batch.pk])).content.decode()


def test_a_third_expert_the_lead_names_decides_the_disagreements(client, make_user, lead, author, tmp_path):
    from annotation.models import Reference

    dataset = unlabelled_dataset(tmp_path, documents=1)
    third = make_user("third-expert", "author")
    # The dataset's own authors: `third` wrote its references, `author` proofread them.
    Reference.objects.filter(document__dataset=dataset).update(writer=third, reviewer=author)
    batch = expert.create_round(dataset, count=2, experts=2, seed=0)
    first = label_round(batch, author)
    second = make_user("second-expert", "author")
    split_summary = first[0]
    second_expert_disagrees_on(split_summary, batch, second)
    assert split_summary not in gold.known_answers(dataset)
    acu_one, acu_two = sorted(gold.disagreements(dataset)[split_summary])
    round_url, review_url = reverse("expert_round", args=[batch.pk]), reverse("expert_review", args=[batch.pk])
    referee_url = reverse("expert_referee", args=[batch.pk])

    client.force_login(lead)
    page = client.get(round_url).content.decode()
    assert f'<option value="{third.pk}">third-expert</option>' in page
    assert f'value="{second.pk}"' not in page  # not an author of this dataset
    refused = client.post(referee_url, {"referee": second.pk}, follow=True)
    assert "A third expert is one of the authors of" in " ".join(str(m) for m in refused.context["messages"])
    assert expert.referee(Batch.objects.get(pk=batch.pk)) is None

    # One of the disagreeing experts, named, cannot settle their own disagreement.
    client.post(referee_url, {"referee": author.pk})
    client.force_login(author)
    assert 'name="acu-' not in client.get(review_url).content.decode()
    client.post(review_url, {"summary": split_summary, f"acu-{acu_one}": "1", f"acu-{acu_two}": "0"})
    assert not ExpertDecision.objects.exists() and split_summary not in gold.known_answers(dataset)

    client.force_login(lead)
    named = client.post(referee_url, {"referee": third.pk}, follow=True)
    said = " ".join(str(m) for m in named.context["messages"])
    assert "third-expert decides where this round's experts disagree" in said
    client.force_login(author)  # no longer the third expert: the review is closed to them
    assert client.get(review_url).status_code == 403
    client.force_login(second)
    assert client.get(review_url).status_code == 403

    client.force_login(third)
    page = client.get(round_url).content.decode()
    assert "Third expert: <b>third-expert</b>" in page and f'href="{review_url}">decide them</a>' in page
    assert client.get(review_url).content.decode().count('name="acu-') == 4  # two facts, two choices each
    client.post(review_url, {"summary": split_summary, f"acu-{acu_one}": "1", f"acu-{acu_two}": "0"})
    known = gold.known_answers(dataset)
    assert known[split_summary][acu_one] is True and known[split_summary][acu_two] is False
    assert ExpertDecision.objects.filter(decided_by=third).count() == 2


def test_the_gold_count_counts_only_summaries_whose_answers_are_known(client, make_user, lead, author, tmp_path):
    """Lab review: the dataset page said "2 of 12 summaries have expert labels" and offered to build
    a qualification test while the round's second expert had labelled nothing (no gold yet)."""
    dataset = unlabelled_dataset(tmp_path, documents=1)
    batch = expert.create_round(dataset, count=2, experts=2, seed=0)
    first = label_round(batch, author)
    assert gold.gold_summary_count(dataset) == 0 == len(gold.known_answers(dataset))
    client.force_login(lead)
    page = client.get(reverse("dataset_detail", args=[dataset.pk])).content.decode()
    assert "<b>0</b> of" in page and "Build a qualification test from the gold" not in page
    second_expert_disagrees_on(first[0], batch, make_user("second-expert", "author"))
    assert gold.gold_summary_count(dataset) == 1 == len(gold.known_answers(dataset))  # the split one waits
    acus = gold.disagreements(dataset)[first[0]]
    expert.decide(batch, first[0], dict.fromkeys(acus, True), lead)
    assert gold.gold_summary_count(dataset) == 2 == len(gold.known_answers(dataset))


def test_a_disagreement_is_reviewed_only_once_every_expert_has_labelled(client, make_user, lead, author, tmp_path):
    """Lab review: in a round of three experts, two who split on a fact put the summary on the review
    page at once; the third expert the lead named decided it and was then handed the same summary
    to label, so they both reviewed and labelled it."""
    from annotation.models import Reference

    dataset = unlabelled_dataset(tmp_path, documents=1)
    third = make_user("third-expert", "author")
    Reference.objects.filter(document__dataset=dataset).update(writer=third)
    batch = expert.create_round(dataset, count=1, experts=3, seed=0)
    expert.name_referee(batch, third.pk)
    (summary,) = label_round(batch, author)
    second_expert_disagrees_on(summary, batch, make_user("second-expert", "author"))
    assert gold.disagreements(dataset) == {} and expert.review_count(batch) == 0  # the third expert's vote is missing
    assert expert.review_items(batch, third) == []
    with pytest.raises(expert.ExpertError, match="no disagreement left"):
        expert.decide(batch, summary, {int(k): True for k in truth(summary)}, third)
    assert not ExpertDecision.objects.exists()
    client.force_login(third)
    assert 'name="acu-' not in client.get(reverse("expert_review", args=[batch.pk])).content.decode()
    # The third expert labels it as one of its experts; now a lead (not they) decides.
    a = expert.next_task(third, batch)
    submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=truth(summary), expert=third)
    assert expert.review_count(batch) == 1 and expert.review_items(batch, third) == []
    assert len(expert.review_items(batch, lead)) == 1


def test_a_lead_does_not_decide_a_disagreement_they_are_a_side_of(client, make_user, lead, author, tmp_path):
    """Lab review: a lead who labelled a summary in an expert round decided its disagreement with the
    other expert, so the gold rested on one side of the split. A second person decides it (another
    lead, or a third expert); the lead decides alone only where nobody else could."""
    dataset = unlabelled_dataset(tmp_path, documents=1)
    batch = expert.create_round(dataset, count=1, experts=2, seed=0)
    (summary,) = label_round(batch, lead)
    second_expert_disagrees_on(summary, batch, author)
    acus = {int(k): True for k in gold.disagreements(dataset)[summary]}
    review_url = reverse("expert_review", args=[batch.pk])
    form = {"summary": summary, **{f"acu-{k}": "1" for k in acus}}
    other_lead = make_user("lead-two", "lead")

    client.force_login(lead)
    page = client.get(review_url).content.decode()
    assert 'name="acu-' not in page and 'id="left-to-others"' in page and "1 summary you labelled waits" in page
    said = " ".join(str(m) for m in client.post(review_url, form, follow=True).context["messages"])
    assert "a second person decides where its experts disagree" in said and "another lead" in said
    with pytest.raises(expert.ExpertError, match="a second person decides"):
        expert.decide(batch, summary, acus, lead)
    assert not ExpertDecision.objects.exists() and summary not in gold.known_answers(dataset)

    # An author who did not label it could be named the third expert: still not the lead's to decide.
    other_lead.is_active = False
    other_lead.save()
    spare = make_user("spare-author", "author")
    with pytest.raises(expert.ExpertError, match="a second person decides"):
        expert.decide(batch, summary, acus, lead)

    # Nobody else: every other lead or author is gone or a side. The lead decides, and is told so.
    spare.is_active = False
    spare.save()
    page = client.get(review_url).content.decode()
    assert 'name="acu-' in page and "your decision stands alone" in page and 'id="left-to-others"' not in page
    client.post(review_url, form)
    assert ExpertDecision.objects.filter(summary_id=summary, decided_by=lead).count() == len(acus)
    assert summary in gold.known_answers(dataset)


def test_another_lead_decides_what_the_labelling_lead_may_not(make_user, lead, author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=1)
    batch = expert.create_round(dataset, count=1, experts=2, seed=0)
    (summary,) = label_round(batch, lead)
    second_expert_disagrees_on(summary, batch, author)
    other_lead = make_user("lead-two", "lead")
    assert [it["summary"].pk for it in expert.review_items(batch, other_lead)] == [summary]
    acus = {int(k): False for k in gold.disagreements(dataset)[summary]}
    assert expert.decide(batch, summary, acus, other_lead) == len(acus)
    assert summary in gold.known_answers(dataset)
