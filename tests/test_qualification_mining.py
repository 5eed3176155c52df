"""Qualification answers cannot be mined (issue 26, item 1): each test draws its own gold items
(a random seed stored on the test) and can rotate them; only offered tests can be taken; a
Prolific screening shows pass or fail only, gives a participant one attempt, each screening
submission one attempt and each address a bounded number per study, and writes no Worker row
for a made-up PROLIFIC_PID that never made an attempt."""

import pytest
from django.urls import reverse

from hits.gold import known_answers
from hits.models import QualificationAttempt, QualificationTest, Worker
from hits.providers.prolific.models import ProlificStudy
from hits.providers.prolific.sessions import SessionRefused, start_session
from hits.services import qualification

from .crowd_data import demo_dataset, published_batch
from .test_handout import make_workers
from .test_prolific_sessions import open_batch
from .test_qualification import perfect

pytestmark = pytest.mark.django_db


def items_of(test) -> list[int]:
    return list(test.items.order_by("position").values_list("summary_id", flat=True))


def test_each_test_draws_its_own_gold_items_and_can_rotate_them():
    dataset = demo_dataset()
    assert len(known_answers(dataset)) >= 12  # enough to draw different samples of 4
    # Pools of 4 (one sheet each) here: a pool larger than a sheet is test_qualification_pool's.
    tests = [qualification.build_test(dataset=dataset, name=f"q{i}", items=4, pool=4) for i in range(6)]
    seeds = {t.seed for t in tests}
    assert len(seeds) == 6 and 0 not in seeds  # a random seed per test, stored
    assert len({tuple(items_of(t)) for t in tests}) > 1  # not one answer sheet for all
    # The stored seed reproduces the draw (an audit can tell which items a test had).
    again = qualification.build_test(dataset=dataset, name="again", items=4, pool=4, seed=tests[0].seed)
    assert items_of(again) == items_of(tests[0])

    test = tests[0]
    (worker,) = make_workers(1)
    old_sheet = perfect(test)
    assert qualification.submit_attempt(test=test, worker=worker, answers=old_sheet).passed
    before = items_of(test)
    rotated = qualification.rotate_gold(test, seed=tests[0].seed + 1)
    assert rotated.seed != tests[0].seed and rotated.rotated_at is not None
    assert len(items_of(rotated)) == 4 and items_of(rotated) != before
    assert QualificationAttempt.objects.get(test=test, worker=worker).passed  # a pass already earned stays
    (other,) = make_workers(1, prefix="o")
    # The leak expired: the old sheet answers none of the new items (refused as incomplete, no attempt).
    with pytest.raises(qualification.IncompleteSheet):
        qualification.submit_attempt(test=rotated, worker=other, answers=old_sheet)
    assert not QualificationAttempt.objects.filter(worker=other).exists()


def test_an_inhouse_worker_can_take_only_a_test_offered_to_them(client, worker):
    dataset = demo_dataset()
    offered = qualification.build_test(dataset=dataset, name="offered", items=2)
    hidden = qualification.build_test(dataset=dataset, name="hidden", items=2)
    published_batch(dataset, qualification_test=offered)
    client.force_login(worker)
    assert client.get(reverse("take_test", args=[offered.pk])).status_code == 200
    assert client.get(reverse("take_test", args=[hidden.pk])).status_code == 404
    post = client.post(reverse("take_test", args=[hidden.pk]), {f"ans-{k}": "1" for k in perfect(hidden)})
    assert post.status_code == 404 and not QualificationAttempt.objects.filter(test=hidden).exists()


@pytest.fixture
def screening(settings, still_ratelimit_clock):
    settings.PROLIFIC_SESSIONS_PER_ADDRESS = 3
    batch = open_batch(k=2)
    test = qualification.build_test(dataset=batch.dataset, name="screen", items=2, max_attempts=5)
    batch.qualification_test = test
    batch.save(update_fields=["qualification_test"])
    ProlificStudy.objects.create(batch=batch, kind="screening", study_id="SCREEN1", completion_code="SCR42")
    return batch, test


def ids(pid, n):
    return {"PROLIFIC_PID": pid, "STUDY_ID": "SCREEN1", "SESSION_ID": f"{n:024x}"}


def test_a_panel_screening_shows_pass_or_fail_only_and_bounds_attempts(client, screening):
    batch, test = screening
    url = f"/prolific/screening/{batch.pk}/"
    wrong = {f"ans-{k}": "0" if v else "1" for k, v in perfect(test).items()}
    # Made-up participants opening the page write nothing.
    for i in range(5):
        assert client.get(url, ids(f"MADEUP{i}", 100 + i)).status_code == 200
    assert not Worker.objects.filter(provider="prolific").exists()

    failed = client.post(url, {**ids("P1", 1), **wrong}).content.decode()
    assert "Not passed" in failed and "%" not in failed  # no score to learn the answers from
    # One attempt per participant (test.max_attempts is 5 for in-house workers) ...
    again = client.post(url, {**ids("P1", 2), **wrong}).content.decode()
    assert "You have taken this test" in again and "%" not in again
    # ... one attempt per screening submission, whoever claims it ...
    reused = client.post(url, {**ids("P2", 1), **wrong}).content.decode()
    assert "used for an attempt already" in reused
    # ... and a bounded number per study from one address.
    client.post(url, {**ids("P3", 3), **wrong})
    over = client.post(url, {**ids("P4", 4), **wrong})
    assert over.status_code == 429 and "Too many attempts" in over.content.decode()
    assert QualificationAttempt.objects.filter(test=test).count() == 2  # P1 and P3
    assert not Worker.objects.filter(external_id__startswith="MADEUP").exists()


def test_a_made_up_participant_writes_no_worker_row(screening):
    batch, _ = screening
    with pytest.raises(SessionRefused, match="qualification test first"):
        start_session(batch=batch, participant_id="NOBODY", study_id="STUDY1", session_id="ab" * 12)
    assert not Worker.objects.filter(provider="prolific").exists()


def test_the_rotate_command_draws_new_items():
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    test = qualification.build_test(dataset=demo_dataset(), name="q", items=4, pool=4, seed=7)
    out = StringIO()
    call_command("rotate_qualification", str(test.pk), "--seed", "8", stdout=out)
    test.refresh_from_db()
    assert test.seed == 8 and "4 new gold items" in out.getvalue()
    with pytest.raises(CommandError, match="No qualification test"):
        call_command("rotate_qualification", "999999")


def test_a_lead_draws_new_gold_from_the_page(client, lead, worker):
    """Issue 47, dead end: the page's *Draw new gold* (a POST) does what `rotate_qualification` does."""
    dataset = demo_dataset()
    test = qualification.build_test(dataset=dataset, name="q", items=4, pool=4, seed=7)
    client.force_login(lead)
    url = reverse("qualification_rotate", args=[test.pk])
    assert f'action="{url}"' in client.get(reverse("batch_list", args=[dataset.pk])).content.decode()
    assert client.get(url).status_code == 405  # no GET writes

    page = client.post(url, follow=True).content.decode()
    test.refresh_from_db()
    assert test.seed != 7 and test.rotated_at is not None and test.items.count() == 4
    assert "“q” has new gold: 4 items drawn afresh" in page

    client.force_login(worker)
    client.post(url)
    assert QualificationTest.objects.get(pk=test.pk).seed == test.seed  # only a lead draws
