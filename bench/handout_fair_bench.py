"""Handout time with many open HITs in published in-house batches: the fair order (priority, open
share, turn; the partial index `hit_fair_pick`) against the earlier oldest-batch-first order.

Run: DATABASE_URL=postgres://... .venv/bin/python -m pytest bench/handout_fair_bench.py -q -s -p no:randomly
(pytest-django makes and drops its own test database; prints one BENCH line per size.)"""

import statistics
import time

import pytest
from django.db import connection

from hits.models import HIT, Batch
from hits.services import handout
from tests.crowd_data import published_batch
from tests.test_handout import make_workers

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("n_batches", [1, 50, 250])
def test_handout_time(n_batches, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    first = published_batch(name="b0")
    hits = list(first.hits.all())
    for i in range(1, n_batches):
        b = Batch.objects.create(
            dataset=first.dataset,
            name=f"b{i}",
            status="published",
            expires_at=first.expires_at,
            assignment_duration_seconds=3600,
        )
        HIT.objects.bulk_create(
            [
                HIT(batch=b, summary=h.summary, max_assignments=3, open_places=3, acu_count=h.acu_count, turn=h.turn)
                for h in hits
            ]
        )
    with connection.cursor() as c:
        c.execute("ANALYZE hits_hit; ANALYZE hits_batch; ANALYZE hits_assignment")
    workers = make_workers(120, prefix=f"bench{n_batches}-")
    out = {}
    fair = handout.FAIR_ORDER
    for name, order in (("old", ("batch_id", "-open_places", "pk")), ("fair", fair)):
        handout.FAIR_ORDER = order if name == "old" else fair
        times = []
        for w in workers[:60] if name == "old" else workers[60:]:
            t = time.perf_counter()
            handout.next_assignment(w)
            times.append((time.perf_counter() - t) * 1000)
        out[name] = (statistics.median(times), sorted(times)[int(len(times) * 0.95)])
    handout.FAIR_ORDER = fair
    print(
        f"\nBENCH open HITs={HIT.objects.filter(open_places__gt=0).count()} batches={n_batches} "
        f"old median/p95 ms={out['old'][0]:.2f}/{out['old'][1]:.2f} fair median/p95 ms={out['fair'][0]:.2f}/{out['fair'][1]:.2f}"
    )
