"""A rating assignment's review page on a phone (390 px): its table of the worker's scores beside
the others' scrolls inside its box, so the page itself does not scroll sideways (REALSumm's system
names, such as abs_ptr_generator_out_pointer_gen_cov, do not wrap). axe-core scans it (conftest.py)."""

import pytest

from hits.ratings.page import example_summaries
from hits.services import handout
from hits.services.submission import submit_assignment
from hits.views.worker import inhouse_worker

from ..conftest import PASSWORD
from ..crowd_data import published_batch
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_rating_assignments_review_page_fits_a_phone(live_server, browser, shoot, lead, worker):
    batch = published_batch(protocol="ref_based", rating_round="study")
    me = inhouse_worker(worker)
    done = handout.next_assignment(me, batch)
    answers = {str(s.pk): 3 for s in example_summaries(batch, done.hit.summary.document_id)}
    submit_assignment(assignment_id=done.pk, worker_id=me.pk, answers=answers)
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/assignments/{done.pk}/")
    page.wait_for_selector("#ratings")
    assert page.locator("#ratings tbody tr").count() == len(answers)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 391, f"the review page scrolls sideways: {width}px"
    shoot(page, "rating-review-390")
    context.close()
