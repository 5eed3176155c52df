"""The dataset list, a dataset's page and a document's page on a phone (390 px): the datasets table
pushed the whole page to 536 px and REALSumm's long system ids (abs_ptr_generator_out_pointer_gen_cov)
ran past the document page's cards. Tables scroll in their own box; system names wrap."""

import pytest

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_dataset_pages_fit_a_phone(live_server, browser, shoot, lead):
    dataset = demo_dataset()
    longest = max(dataset.systems.values_list("name", flat=True), key=len)
    assert len(longest) > 30  # the demo's long id, the case that overflowed
    document = dataset.documents.order_by("position").first()
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    for name, path in (
        ("home", "/"),
        ("dataset", f"/datasets/{dataset.pk}/"),
        ("document", f"/datasets/{dataset.pk}/documents/{document.pk}/"),
    ):
        page.goto(live_server.url + path)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 390, f"the {name} page scrolls sideways: {wide}px"
        shoot(page, f"narrow-{name}-390")
    context.close()
