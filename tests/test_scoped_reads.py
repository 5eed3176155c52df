"""The reads of scoring and the dashboards give on PostgreSQL (scoring.runs.scoped: the fenced
judgment read, the agreement trend; the tallies) what their portable ORM paths give, scoped to one dataset or
round, and the fenced read walks indexes whatever the planner's statistics say (issue 14).
The comparisons are marked `portable`: in the SQLite lane they run the portable paths."""

import json
from datetime import timedelta
from decimal import Decimal

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from annotation import tallies as reference_tallies
from annotation.models import Summary
from annotation.services.authoring_progress import authoring_overview
from hits import tallies
from hits.models import HIT, Assignment, Batch, Judgment, LedgerEntry, Worker
from hits.selectors import figures
from hits.services import review
from hits.services.simulate import simulate_crowd
from scoring.results import dashboard
from scoring.runs import data, scoped, services, workers

from .crowd_data import demo_dataset, published_batch, scored

pytestmark = pytest.mark.django_db


@pytest.fixture
def mixed():
    """A dataset with an imported round and a crowd round in every state, next to another
    dataset's crowd round (rows the reads must leave out)."""
    dataset = demo_dataset()
    batch = published_batch(dataset)
    simulate_crowd(batch, workers=3, accuracy=0.9, spammers=1, seed=4)
    other = demo_dataset("other")
    simulate_crowd(published_batch(other), workers=2, accuracy=0.8, seed=5)
    done = list(Assignment.objects.filter(hit__batch=batch).order_by("pk"))
    review.reject(assignment_id=done[0].pk, feedback="careless")
    Assignment.objects.filter(pk=done[1].pk).update(confirmed=False)
    Assignment.objects.filter(pk=done[2].pk).update(submitted_at=timezone.now() - timedelta(hours=2))
    Assignment.objects.filter(pk=done[3].pk).update(active_seconds=0, gold_correct=2, gold_total=3)
    newcomer = Worker.objects.create(provider="inhouse", external_id="newcomer")
    Assignment.objects.create(hit=done[0].hit, worker=newcomer, status=Assignment.Status.ASSIGNED)
    review.set_excluded(worker_id=done[4].worker_id, excluded=True)
    for i, (kind, amount) in enumerate([("reward", "0.30"), ("reward", "0.45"), ("bonus", "1.00")]):
        LedgerEntry.objects.create(batch=batch, worker=newcomer, kind=kind, amount=Decimal(amount), key=f"t{i}")
    return dataset, batch


@pytest.fixture
def orm(monkeypatch):
    """Switch the reads to their ORM path (other databases) for the comparison."""

    def use_orm():
        monkeypatch.setattr(scoped, "available", lambda: False)
        monkeypatch.setattr(tallies, "available", lambda: False)
        monkeypatch.setattr(reference_tallies, "available", lambda: False)

    return use_orm


def _rows(j: data.Judgments) -> list[tuple]:
    return sorted(
        zip(
            j.ids.tolist(),
            j.summary.tolist(),
            j.acu.tolist(),
            j.worker.tolist(),
            j.present.tolist(),
            j.excluded.tolist(),
            strict=True,
        )
    )


def _scopes(dataset, batch):
    return [None, batch, dataset.batches.get(kind="imported")]


@pytest.mark.portable
def test_judgments_and_summaries_read_as_through_the_orm(mixed, orm):
    dataset, batch = mixed
    fast = {
        (b.pk if b else None, everyone): _rows(data.load_judgments(dataset, b, include_excluded=everyone))
        for b in _scopes(dataset, batch)
        for everyone in (True, False)
    }
    table = data.load_summaries(dataset)
    orm()
    for (batch_id, everyone), rows in fast.items():
        b = dataset.batches.filter(pk=batch_id).first()
        assert rows and rows == _rows(data.load_judgments(dataset, b, include_excluded=everyone))
    assert any(r[5] for r in fast[(None, True)]) and not any(r[5] for r in fast[(None, False)])
    slow = data.load_summaries(dataset)
    for field in ("ids", "system", "document", "words", "reference_words", "acu_count"):
        assert np.array_equal(getattr(table, field), getattr(slow, field)), field


def test_worker_figures_of_each_scope(mixed):
    dataset, batch = mixed
    for b in _scopes(dataset, batch):
        stats = workers._assignment_stats(dataset, b)
        counted = Assignment.objects.filter(hit__batch__dataset=dataset, status__in=Assignment.COUNTED, confirmed=True)
        counted = counted.filter(hit__batch=b) if b else counted
        assert {w: s["assignments"] for w, s in stats.items()} == {
            w: counted.filter(worker_id=w).count() for w in counted.values_list("worker_id", flat=True).distinct()
        }
    round_stats = workers._assignment_stats(dataset, batch)
    assert any(s["gold_total"] for s in round_stats.values())
    # every worker of the round has timed paid work, in its batch's currency (`timed`: {currency: [rewards, seconds]})
    assert all(s["timed"] and all(r and sec for r, sec in s["timed"].values()) for s in round_stats.values())
    assert all(0 not in s["seconds"] and None not in s["seconds"] for s in round_stats.values())


@pytest.mark.portable
def test_progress_spend_and_excluded_workers_read_as_through_the_orm(mixed, orm):
    dataset, batch = mixed
    fast = [figures.scope_figures(figures.scope_batches(dataset, b)) for b in _scopes(dataset, batch)]
    excluded = services._inputs(dataset, None, data.load_judgments(dataset), 0)["excluded_workers"]
    orm()
    slow = [figures.scope_figures(figures.scope_batches(dataset, b)) for b in _scopes(dataset, batch)]
    for (p, s), (p_orm, s_orm) in zip(fast, slow, strict=True):
        assert {k: v for k, v in p.items() if k != "eta"} == {k: v for k, v in p_orm.items() if k != "eta"}
        assert (p["eta"] is None) == (p_orm["eta"] is None) and s == s_orm
    progress = fast[1][0]
    assert progress["in_progress"] == 1 and progress["rejected"] == 1 and progress["batches"] == 1
    submitted = Assignment.objects.filter(hit__batch=batch).exclude(submitted_at=None).count()
    assert progress["per_hour"] == submitted - 1 and [s["total"] for s in fast[1][1]] == [Decimal("1.75")]
    assert fast[2][0]["batches"] == 0  # an imported round is no crowd batch
    assert excluded == sorted(Worker.objects.filter(excluded=True).values_list("external_id", flat=True))


@pytest.mark.portable
def test_the_overview_counts_references_as_the_authoring_overview(mixed, orm):
    dataset, _ = mixed
    states = authoring_overview(dataset)["states"]
    assert dashboard.authoring_states(dataset) == states and sum(s["count"] for s in states)
    orm()
    assert dashboard.authoring_states(dataset) == states


def _stale_round(dataset, workers_per_hit=60):
    """A new crowd round of `workers_per_hit` approved assignments on every summary, with a
    judgment per ACU; then the statistics of the hits tables are those of empty tables (as in a
    new database bulk-loaded before ANALYZE: the state that cost 31 s of a 33 s recompute)."""
    batch = Batch.objects.create(dataset=dataset, name="stale", status="complete", assignments_per_hit=workers_per_hit)
    summaries = Summary.objects.filter(document__dataset=dataset).select_related("document__reference")
    hits = HIT.objects.bulk_create(
        [HIT(batch=batch, summary=s, max_assignments=workers_per_hit, reward=Decimal("0.30")) for s in summaries]
    )
    crowd = Worker.objects.bulk_create(
        [Worker(provider="inhouse", external_id=f"stale-{i}") for i in range(workers_per_hit)]
    )
    now = timezone.now()
    assignments = Assignment.objects.bulk_create(
        [
            Assignment(hit=h, worker=w, status="approved", submitted_at=now, active_seconds=30)
            for h in hits
            for w in crowd
        ]
    )
    acus = {h.pk: list(h.summary.document.reference.acus.values_list("pk", flat=True)) for h in hits}
    Judgment.objects.bulk_create(
        [Judgment(assignment=a, acu_id=acu, present=True) for a in assignments for acu in acus[a.hit_id]],
        batch_size=5000,
    )
    tables = ["hits_batch", "hits_hit", "hits_assignment", "hits_judgment", "hits_worker", "hits_ledgerentry"]
    with connection.cursor() as c:  # rolled back with the test
        c.execute("DELETE FROM pg_statistic WHERE starelid = ANY(%s::regclass[])", [tables])
        c.execute("UPDATE pg_class SET reltuples = 0, relpages = 0 WHERE oid = ANY(%s::regclass[])", [tables])
    return batch.pk


def _nodes(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def test_round_reads_walk_indexes_on_stale_statistics(mixed):
    dataset, _ = mixed
    batch_id = _stale_round(dataset)
    assert Assignment.objects.filter(hit__batch_id=batch_id).count() > 1000
    queries = {
        "judgments": scoped.judgments_query(dataset.pk, batch_id),
        "dataset judgments": scoped.judgments_query(dataset.pk),
    }
    for name, (sql, params) in queries.items():
        with connection.cursor() as c:
            c.execute("EXPLAIN (FORMAT JSON) " + sql, params)
            plan = c.fetchone()[0]
        nodes = list(_nodes((json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]))
        # The ORM's join of the same rows plans, on these statistics, a nested loop comparing
        # every assignment with every HIT of the round (a Join Filter): 52 s at RoSE scale.
        assert not [n for n in nodes if "Join Filter" in n], name
        inner = [n for n in nodes if n.get("Relation Name") in ("hits_assignment", "hits_judgment")]
        assert inner and all(n["Node Type"] != "Seq Scan" for n in inner), (name, [n["Node Type"] for n in inner])


def test_the_workers_page_forms_post_to_each_workers_actions(mixed, client, lead, eager_celery):
    from django.urls import reverse

    dataset, batch = mixed
    scored(dataset, batch)
    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    crowd = Worker.objects.filter(assignments__hit__batch=batch, assignments__status__in=Assignment.COUNTED)
    workers_shown = {w.pk: w.excluded for w in crowd.distinct()}
    for worker_id, excluded in workers_shown.items():
        for action in ("include" if excluded else "exclude", "block", "bonus"):
            url = reverse("dashboard_worker_action", args=[dataset.pk, worker_id, action])
            assert f'action="{url}?round={batch.pk}"' in page, (worker_id, action)
    assert page.count('name="csrfmiddlewaretoken"') >= 3 * len(workers_shown) and any(workers_shown.values())
