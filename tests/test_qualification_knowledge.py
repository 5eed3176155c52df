"""Issue 42, item 4: a qualification that only knowledge passes. A sheet is scored by balanced
accuracy, so answering "Not present" everywhere fails even on sparse gold; the draw holds both
classes; the lead's form shows the class balance; the test page shows the reference summary as
the task page does; an incomplete sheet is refused (answers kept), not graded, no lockout."""

import pytest
from django.urls import reverse

from annotation.models import Summary
from hits.models import QualificationAttempt
from hits.services import expert, handout, qualification
from hits.services.submission import submit_assignment

from .authoring_data import unlabelled_dataset
from .crowd_data import published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def sparse(summary_id: int, every: int = 6) -> dict[str, bool]:
    """Expert answers of a sparse dataset: one fact in `every` present (0: none)."""
    acus = Summary.objects.get(pk=summary_id).document.reference.acus.order_by("sentence__position", "position")
    return {str(a.pk): every > 0 and i % every == 0 for i, a in enumerate(acus)}


def label(dataset, user, count: int, every: int = 6, rule=None) -> None:
    """An expert round of `count` summaries labelled by `user` (`rule`: the answers of a summary,
    `sparse` by default)."""
    rule = rule or (lambda sid: sparse(sid, every))
    batch = expert.create_round(dataset, count=count, experts=1, seed=0)
    while True:
        try:
            a = expert.next_task(user, batch)
        except handout.NoWork:
            return
        submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=rule(a.hit.summary_id), expert=user)


def sheet(test, answer=None, worker=None) -> dict[str, bool]:
    """Every fact of the test's pool (of `worker`'s sheet) answered `answer` (None: the true answer)."""
    items = test.items.all() if worker is None else qualification.worker_sheet(test, worker)
    return {
        qualification.answer_key(item.pk, acu): truth if answer is None else answer
        for item in items
        for acu, truth in item.answers.items()
    }


def test_an_all_absent_sheet_fails_a_sparse_test_that_accuracy_would_pass(author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=3)
    label(dataset, author, count=12)
    balance = qualification.class_balance(dataset)
    assert 0 < balance["share"] < 0.2  # sparse: fewer than one fact in five present
    test = qualification.build_test(dataset=dataset, name="sparse", items=3, pass_score=0.8, seed=3)
    present, absent = qualification.test_balance(test)
    assert present >= qualification.MIN_PER_CLASS and absent >= qualification.MIN_PER_CLASS
    lazy, honest = make_workers(2)
    attempt = qualification.submit_attempt(test=test, worker=lazy, answers=sheet(test, False))
    assert attempt.correct / attempt.total >= 0.8  # plain accuracy would have passed it
    assert attempt.score == pytest.approx(0.5) and not attempt.passed
    everything = qualification.submit_attempt(
        test=test, worker=make_workers(1, prefix="p")[0], answers=sheet(test, True)
    )
    assert everything.score == pytest.approx(0.5) and not everything.passed
    assert qualification.submit_attempt(test=test, worker=honest, answers=sheet(test)).score == 1.0


def test_the_stratified_draw_finds_the_rare_class_for_every_seed(author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=3)
    rare = Summary.objects.filter(document__dataset=dataset).order_by("pk").first()
    # Facts are present in one summary of twelve only: a plain draw of two items mostly misses it.
    label(dataset, author, count=12, rule=lambda sid: sparse(sid, 3 if sid == rare.pk else 0))
    for seed in range(8):
        test = qualification.build_test(dataset=dataset, name=f"q{seed}", items=2, seed=seed)
        present, absent = qualification.test_balance(test)
        assert present >= qualification.MIN_PER_CLASS and absent >= qualification.MIN_PER_CLASS, seed
        assert rare.pk in set(test.items.values_list("summary_id", flat=True))


def test_gold_of_one_class_builds_no_test(client, lead, author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=2)
    label(dataset, author, count=4, every=0)  # every fact "Not present"
    with pytest.raises(qualification.QualificationError, match="could be passed by answering one way"):
        qualification.build_test(dataset=dataset, name="q", items=2)
    client.force_login(lead)
    page = client.get(reverse("qualification_new", args=[dataset.pk])).content.decode()
    assert "With one class only no test can be built" in page


def test_the_form_tells_the_lead_the_class_balance(client, lead, author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=3)
    label(dataset, author, count=6)
    balance = qualification.class_balance(dataset)
    client.force_login(lead)
    page = client.get(reverse("qualification_new", args=[dataset.pk])).content.decode()
    assert f"<b>{balance['present']}</b> present and <b>{balance['absent']}</b> not present" in page
    assert "balanced accuracy" in page
    made = client.post(
        reverse("qualification_new", args=[dataset.pk]),
        {"name": "q", "items": 2, "pass_score": 0.8, "max_attempts": 2, "retry_after_hours": 24},
        follow=True,
    )
    test = dataset.qualification_tests.get()
    present, absent = qualification.test_balance(test)
    said = " ".join(str(m) for m in made.context["messages"])
    assert f"{present} facts present and {absent} not present" in said


def test_an_incomplete_sheet_is_refused_with_its_answers_kept_and_costs_no_attempt(client, worker, author, tmp_path):
    dataset = unlabelled_dataset(tmp_path, documents=3)
    label(dataset, author, count=6)
    test = qualification.build_test(dataset=dataset, name="q", items=2, max_attempts=1, retry_after_hours=24)
    published_batch(dataset, qualification_test=test)
    client.force_login(worker)
    url = reverse("take_test", args=[test.pk])

    page = client.get(url).content.decode()
    mine = qualification.Worker.objects.get(user=worker)
    item = qualification.worker_sheet(test, mine)[0]
    reference = Summary.objects.get(pk=item.summary_id).document.reference
    assert "Reference summary (context)" in page  # as on the task page
    assert all(s.text in page for s in reference.sentences.all())

    full = sheet(test, worker=mine)
    key, value = next(iter(full.items()))
    refused = client.post(url, {f"ans-{key}": "1" if value else "0"})
    body = refused.content.decode()
    assert refused.status_code == 400
    assert f"{len(full) - 1} of {len(full)} facts have no answer yet" in body and "no attempt was used" in body
    assert f'name="ans-{key}" value="{1 if value else 0}"' in body.replace(" required", "")
    checked = 'value="1" required checked' if value else 'value="0" checked'
    assert f'name="ans-{key}" {checked}' in body  # the answer given is still marked
    assert not QualificationAttempt.objects.exists()
    assert qualification.attempt_status(qualification.Worker.objects.get(user=worker), test)["can_try"]

    done = client.post(url, {f"ans-{k}": "1" if v else "0" for k, v in full.items()}, follow=True)
    assert "You passed the qualification test" in " ".join(str(m) for m in done.context["messages"])
    assert QualificationAttempt.objects.get().passed
