"""The gold guard in the app (hits/allocation/guard.py, issue 43): a `pairs` batch whose judge prior misleads
stops saving once its gold answers show its rule worse than fixed places, and falls back to fixed places."""

import logging

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Summary
from hits.allocation.guard import check_gold
from hits.allocation.service import policy_for
from hits.models import HIT, Batch, Judgment
from hits.services import handout
from hits.services.submission import submit_assignment
from scoring.runs.worker_estimates import refit_estimates

from .crowd_data import demo_dataset
from .test_allocation import adaptive_batch, no_refit  # noqa: F401 - the fixture: refits only when the test calls one
from .test_allocation_pairs_app import judge_run, pairs_batch
from .test_handout import make_workers


def acus_of(summary_id: int) -> list[int]:
    summary = Summary.objects.get(pk=summary_id)
    return list(summary.document.reference.acus.order_by("pk").values_list("pk", flat=True))


def submit(worker, batch, answer) -> int:
    """The worker takes the batch's next place and answers each ACU it shows with answer(summary, acu)."""
    assignment = handout.next_assignment(worker, batch)
    hit = assignment.hit
    answers = {str(a): answer(hit, a) for a in hit.task_acus().values_list("pk", flat=True)}
    submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=answers)
    return hit.summary_id


@pytest.mark.django_db
def test_a_pairs_batch_with_a_misleading_prior_falls_back_to_fixed_places_once_gold_shows_it_worse(
    no_refit,  # noqa: F811
    client,
    lead,
    caplog,
):
    dataset = demo_dataset()
    batch = pairs_batch(dataset, gold_share=0.5, allocation_max=5, allocation_threshold=0.725)
    gold_hits = list(batch.hits.filter(gold_answers__isnull=False).order_by("pk"))
    truth = {(h.summary_id, int(a)): bool(p) for h in gold_hits for a, p in h.gold_answers.items()}
    assert len(truth) >= 20 and {h.max_assignments for h in gold_hits} == {3}  # gold: the fixed places
    plain = list(batch.hits.filter(gold_answers__isnull=True).values_list("summary_id", flat=True))
    assert len(plain) >= 2
    before, after = plain[:2]
    batch.hits.filter(gold_answers__isnull=True).exclude(summary_id__in=[before, after]).delete()
    # the judge's prior points the wrong way on every gold pair (0.95 where the experts say absent, 0.05
    # where present), and says "present" (0.95) on the other summaries' pairs
    priors = {key: 0.05 if present else 0.95 for key, present in truth.items()}
    priors |= {(s, a): 0.95 for s in (before, after) for a in acus_of(s)}
    run = judge_run(dataset, priors)
    Batch.objects.filter(pk=batch.pk).update(allocation_judge_run=run)
    batch.refresh_from_db()

    # A non-gold summary answered before the gold: one worker agreeing with the prior settles it (the saving).
    workers = make_workers(9)
    # the gold first: three honest workers, each wrong on a different third of the ACUs, in this order on
    # every gold HIT, so each gold pair's majority is right and its first answer wrong on a third of them
    for k, worker in enumerate(workers[:3]):
        for _ in gold_hits:
            submit(worker, batch, lambda hit, a, k=k: truth[(hit.summary_id, a)] != ((a - first_acu(hit)) % 3 == k))
    assert Judgment.objects.filter(assignment__hit__batch=batch).count() == 3 * len(truth)
    assert submit(workers[3], batch, lambda hit, a: True) == before
    assert not batch.hits.filter(summary_id=before, follow_up__gt=0).exists()

    # The refit: the workers' estimates from gold, then the guard replays the rule on the gold answers.
    with caplog.at_level(logging.WARNING, logger="hits.allocation.guard"):
        refit_estimates(batch.pk)
    batch.refresh_from_db()
    assert batch.gold_guard_at is not None
    figures = batch.gold_guard
    assert figures["pairs"] == len(truth) and figures["fixed"] == 3
    assert figures["fixed_accuracy"] == 1.0 and figures["rule_accuracy"] < 0.5
    assert figures["upper"] < 0 and figures["p_value"] < 0.05 and figures["rule_judgments"] < 3 * len(truth)
    assert "stops saving" in caplog.text and f"batch={batch.pk}" in caplog.text
    # the page says it in plain words with the two accuracies and the bound
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    local = timezone.localtime(batch.gold_guard_at)
    assert (
        f'Stopped saving on <time datetime="{local.isoformat()}">{local:%Y-%m-%d %H:%M} {local.tzname()}</time>' in page
    )
    assert f"{figures['rule_accuracy']:.1%}" in page and "100.0%" in page and "exact McNemar test" in page
    body = client.get(f"/api/batches/{batch.pk}/").json()  # the API has the same decision and figures
    assert body["gold_guard_at"] is not None and body["gold_guard"]["pairs"] == len(truth)
    assert (
        body["gold_guard"]["rule_accuracy"] == figures["rule_accuracy"] and "McNemar" in body["gold_guard"]["sentence"]
    )

    # From now on a pair settles only after 3 judgments: the same answer that settled `before` asks on.
    assert submit(workers[4], batch, lambda hit, a: True) == after
    assert sorted(batch.hits.get(summary_id=after, follow_up=1).acu_ids) == acus_of(after)
    assert submit(workers[5], batch, lambda hit, a: True) == after
    assert sorted(batch.hits.get(summary_id=after, follow_up=2).acu_ids) == acus_of(after)
    assert submit(workers[6], batch, lambda hit, a: True) == after
    assert not batch.hits.filter(summary_id=after, follow_up=3).exists()  # settled at the fixed places
    assert batch.hits.get(summary_id=after, follow_up=0).settled
    # what was settled before stays settled; the next refit does not decide again
    assert not batch.hits.filter(summary_id=before, follow_up__gt=0).exists()
    stamp = batch.gold_guard_at
    refit_estimates(batch.pk)
    batch.refresh_from_db()
    assert batch.gold_guard_at == stamp


def first_acu(hit) -> int:
    return min(acus_of(hit.summary_id))


@pytest.mark.django_db
def test_a_pairs_batch_whose_prior_does_not_mislead_keeps_saving(no_refit):  # noqa: F811
    dataset = demo_dataset()
    batch = pairs_batch(dataset, gold_share=0.5, allocation_max=5, allocation_threshold=0.725)
    gold_hits = list(batch.hits.filter(gold_answers__isnull=False).order_by("pk"))
    truth = {(h.summary_id, int(a)): bool(p) for h in gold_hits for a, p in h.gold_answers.items()}
    run = judge_run(dataset, {key: 0.95 if present else 0.05 for key, present in truth.items()})
    Batch.objects.filter(pk=batch.pk).update(allocation_judge_run=run)
    batch.refresh_from_db()
    for k, worker in enumerate(make_workers(3)):
        for _ in gold_hits:
            submit(worker, batch, lambda hit, a, k=k: truth[(hit.summary_id, a)] != ((a - first_acu(hit)) % 3 == k))
    refit_estimates(batch.pk)
    batch.refresh_from_db()
    assert batch.gold_guard_at is None and batch.gold_guard is None
    check = check_gold(batch)
    assert check.pairs == len(truth) and check.rule_accuracy >= check.fixed_accuracy and not check.worse
    assert check.rule_judgments < check.fixed_judgments  # it saves, and on gold it is no worse


@pytest.mark.django_db
def test_the_hit_level_adaptive_policy_gets_the_same_guard_and_falls_back_to_fixed_places(no_refit):  # noqa: F811
    # The lead's summary-level rule at 0.3 from one place: one worker of 2/3 accuracy settles a HIT, so the
    # rule labels each pair with its first answer, wrong on a third of the gold pairs where fixed places'
    # majority is right.
    batch = adaptive_batch(gold_share=0.5, allocation_min=1, allocation_max=5, allocation_max_sd=0.3)
    gold_hits = list(batch.hits.filter(gold_answers__isnull=False).order_by("pk"))
    truth = {(h.summary_id, int(a)): bool(p) for h in gold_hits for a, p in h.gold_answers.items()}
    plain = batch.hits.filter(gold_answers__isnull=True).order_by("pk").first()
    batch.hits.filter(gold_answers__isnull=True).exclude(pk=plain.pk).delete()
    HIT.objects.filter(pk=plain.pk).update(open_places=0)  # (the gold first: this handout does not order it)
    workers = make_workers(6)
    for k, worker in enumerate(workers[:3]):
        for _ in gold_hits:
            submit(worker, batch, lambda hit, a, k=k: truth[(hit.summary_id, a)] != ((a - first_acu(hit)) % 3 == k))
    refit_estimates(batch.pk)
    batch.refresh_from_db()
    assert batch.gold_guard_at is not None
    figures = batch.gold_guard
    assert figures["fixed_accuracy"] == 1.0 and figures["rule_accuracy"] < 0.8 and figures["upper"] < 0
    assert figures["rule_judgments"] == len(truth)  # one answer each: the rule stopped at its first place
    # a non-gold HIT now gets the fixed places: its first answer opens a second place, the second a third
    HIT.objects.filter(pk=plain.pk).update(open_places=1)
    assert policy_for(plain, batch).min_places == 3
    for i, worker in enumerate(workers[3:]):
        assert submit(worker, batch, lambda hit, a: True) == plain.summary_id
        plain.refresh_from_db()
        assert plain.settled == (i == 2)  # not settled below the fixed places, though one answer settled it before
    assert plain.max_assignments == 3 and plain.open_places == 0
