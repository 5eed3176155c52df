"""Which gold items a qualification attempt shows: a sheet drawn from the test's pool.

A test holds a pool of gold items larger than one sheet (`QualificationTest.sheet_items` per
attempt; 0: the whole pool, as tests made before pools). Each attempt's sheet is drawn from the
pool with a seed made of the test's secret seed, whom it is for and how many attempts they made,
so the page shows the same sheet until they submit (opening it writes nothing) and the next
attempt a different one: a sheet learned at the pass mark tells little about the next. Whom it is
for: the worker (their provider and id there), or, on a screening whose participant ids anyone
can make up (Prolific, panels), their network (the address as the limits count it: an IPv6 /64),
so that trying made-up ids until one shows a sheet already known finds none: every id from one
network gets that network's next sheet. Every draw keeps both classes (at least MIN_PER_CLASS
facts of each where the pool has them). Readers only."""

import hashlib
import hmac
import random

from django.conf import settings

from .models import GoldItem, QualificationAttempt, QualificationTest

# A sheet holds at least this many facts of each class (present, not present) when the gold has
# them: the stratified draw swaps items in until it does.
MIN_PER_CLASS = 3


def stratified(chosen: list[int], answers: dict, rng: random.Random) -> list[int]:
    """The drawn ids (of `answers`, {id: {acu: present}}) with both classes represented: while a
    class has fewer than MIN_PER_CLASS facts, one id is swapped for an unused one, the swap that
    most reduces the shortfall of both classes (ties in the seed's order); stops when no swap
    helps."""
    counts = {key: (sum(answers[key].values()), len(answers[key]) - sum(answers[key].values())) for key in answers}
    unused = sorted(set(answers) - set(chosen))
    rng.shuffle(unused)
    chosen = list(chosen)

    def shortfall(present: int, absent: int) -> int:
        return max(0, MIN_PER_CLASS - present) + max(0, MIN_PER_CLASS - absent)

    while True:
        present = sum(counts[key][0] for key in chosen)
        absent = sum(counts[key][1] for key in chosen)
        now = shortfall(present, absent)
        if now == 0:
            return chosen
        best = None
        for i, out in enumerate(chosen):
            for j, into in enumerate(unused):
                after = shortfall(present - counts[out][0] + counts[into][0], absent - counts[out][1] + counts[into][1])
                if after < now and (best is None or after < best[0]):
                    best = (after, i, j)
        if best is None:
            return chosen
        _, i, j = best
        chosen[i], unused[j] = unused[j], chosen[i]


def identity(provider: str, external_id: str) -> str:
    """Whom a sheet is drawn for: a worker's provider and id there (a Prolific or panel
    participant has one before any Worker row exists)."""
    return f"{provider}:{external_id}"


def size(sheet_items: int, pool: int) -> int:
    """How many items one attempt's sheet shows: `sheet_items` of a pool of `pool` items (0, or
    at least the pool: the whole pool)."""
    return min(sheet_items, pool) if sheet_items else pool


def sheet_size(test: QualificationTest) -> int:
    """How many summaries each attempt at `test` shows (the worker's test card says so, not the
    pool's size)."""
    return size(test.sheet_items, test.items.count())


def draw(test: QualificationTest, who: str, attempt: int = 0) -> list[GoldItem]:
    """The sheet of `who`'s attempt number `attempt` (0 first): `sheet_items` items of the pool,
    stratified, in pool order; the whole pool when the sheet is as large."""
    pool = list(test.items.all())
    if size(test.sheet_items, len(pool)) == len(pool):
        return pool
    rng = random.Random(f"{test.seed}|{who}|{attempt}")  # a str seed is hashed with SHA-512: stable
    answers = {item.pk: item.answers for item in pool}
    chosen = set(stratified(rng.sample(sorted(answers), test.sheet_items), answers, rng))
    return [item for item in pool if item.pk in chosen]


def network(address: str) -> str:
    """The address group (ratelimit.client_address), keyed so that attempts store no address."""
    if not address:
        return ""
    return hmac.new(settings.SECRET_KEY.encode(), address.encode(), hashlib.sha256).hexdigest()[:32]


def sheet(test: QualificationTest, provider: str, external_id: str, net: str = "") -> list[GoldItem]:
    """The sheet the person sees now: the draw for their next attempt, or with `net` (`network`)
    the draw for that network's next attempt at the test."""
    if net:
        return draw(test, f"net:{net}", QualificationAttempt.objects.filter(test=test, network=net).count())
    made = QualificationAttempt.objects.filter(
        test=test, worker__provider=provider, worker__external_id=external_id
    ).count()
    return draw(test, identity(provider, external_id), made)
