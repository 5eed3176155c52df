"""Walk 62: a batch with a long, descriptive name (a lab names a round for what it is) made every
dashboard page scroll sideways, on a phone and on a laptop: the round picker's select grew to its
longest option, wider than the page. A name without spaces (a file-like id) pushed the batch
page's heading out the same way. Both keep to the page's width now."""

import pytest

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESCRIPTIVE = (
    "Pilot of the abstractive systems on the first ten CNN/DM documents, three workers per summary, "
    "qualification test required, ten percent gold, paid by RoSE's buckets"
)
FILE_LIKE = "realsumm_cnndm_abs_bart_out_pilot_round2_three_workers_per_summary_gold10_2026-12-07"


def _overflow(page, width):
    """The page's scroll width and what sticks out past `width` (so a failure says where to look)."""
    wide = page.evaluate("document.documentElement.scrollWidth")
    culprits = page.evaluate(
        """(w) => [...document.querySelectorAll('main *')]
            .filter(e => e.getBoundingClientRect().right > w + 1)
            .slice(0, 6).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' '
                + Math.round(e.getBoundingClientRect().right))""",
        width,
    )
    return wide, culprits


@pytest.mark.parametrize("width", [390, 1280])
def test_long_batch_names_keep_dashboards_and_the_batch_page_within_the_page(live_server, browser, shoot, lead, width):
    dataset = demo_dataset()
    descriptive = published_batch(dataset, name=DESCRIPTIVE)
    file_like = published_batch(dataset, name=FILE_LIKE)
    context = browser.new_context(viewport={"width": width, "height": 860})
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    pages = {
        "dashboard": f"/datasets/{dataset.pk}/dashboard/",
        "dashboard-round": f"/datasets/{dataset.pk}/dashboard/systems/?round={descriptive.pk}",
        "dashboard-protocols": f"/datasets/{dataset.pk}/dashboard/protocols/",
        "batch-file-like": f"/batches/{file_like.pk}/",
    }
    for name, url in pages.items():
        response = page.goto(live_server.url + url)
        assert response and response.status == 200, f"{name}: HTTP {response and response.status}"
        shoot(page, f"long-names-{name}-{width}")
        wide, culprits = _overflow(page, width)
        assert wide <= width, (
            f"the {name} page scrolls sideways at {width} px: {wide} px wide; sticking out: {culprits}"
        )
    # The picker still offers the whole name (the option's text), only drawn within the page.
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/")
    assert DESCRIPTIVE in page.locator("#round option").all_inner_texts()
    context.close()
