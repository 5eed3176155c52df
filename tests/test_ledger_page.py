"""The money ledger page: a page of rows at a time, the batch's totals over every row."""

from decimal import Decimal

import pytest
from django.urls import reverse

from hits.models import LedgerEntry
from hits.views.lead import LEDGER_PAGE_SIZE

from .crowd_data import published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def long_ledger():
    """A batch with two and a half pages of ledger rows (rewards of $0.01 to $2.30)."""
    batch = published_batch()
    (worker,) = make_workers(1)
    rows = LEDGER_PAGE_SIZE * 2 + LEDGER_PAGE_SIZE // 2
    LedgerEntry.objects.bulk_create(
        LedgerEntry(batch=batch, worker=worker, kind="reward", amount=Decimal(i) / 100, key=f"r{i}", note=f"row-{i}")
        for i in range(1, rows + 1)
    )
    return batch, rows


def _notes(page: str) -> list[int]:
    import re

    return [int(n) for n in re.findall(r"<td>row-(\d+)</td>", page)]


def test_the_ledger_shows_one_page_of_rows_with_totals_over_all(client, lead, long_ledger):
    batch, rows = long_ledger
    client.force_login(lead)
    url = reverse("batch_ledger", args=[batch.pk])
    first = client.get(url).content.decode()
    assert _notes(first) == list(range(1, LEDGER_PAGE_SIZE + 1))  # oldest first, one page
    everything = sum(Decimal(i) / 100 for i in range(1, rows + 1))
    assert f"total <b>${everything:,.2f}</b>" in first  # every row's money, not this page's
    assert f"of {rows} (page 1 of 3)" in first and 'rel="next"' in first and 'rel="prev"' not in first

    last = client.get(url, {"page": 3}).content.decode()
    assert _notes(last) == list(range(2 * LEDGER_PAGE_SIZE + 1, rows + 1))
    assert f"total <b>${everything:,.2f}</b>" in last and 'rel="next"' not in last
    # A page number past the end or not a number reads the last or the first page, never an error.
    assert _notes(client.get(url, {"page": 99}).content.decode()) == _notes(last)
    assert _notes(client.get(url, {"page": "x"}).content.decode())[0] == 1


def test_page_links_keep_the_other_parameters(client, lead, long_ledger):
    batch, _ = long_ledger
    client.force_login(lead)
    page = client.get(reverse("batch_ledger", args=[batch.pk]), {"kind": "reward", "page": 2}).content.decode()
    assert 'href="?kind=reward&amp;page=3" rel="next"' in page
    assert 'href="?kind=reward&amp;page=1" rel="prev"' in page


def test_a_short_ledger_has_no_pager(client, lead):
    batch = published_batch()
    client.force_login(lead)
    page = client.get(reverse("batch_ledger", args=[batch.pk])).content.decode()
    assert "Nothing paid yet." in page and 'class="pager"' not in page
