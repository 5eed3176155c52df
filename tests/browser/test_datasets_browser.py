"""A lead, in a real browser: log in, see the datasets, open one, import through the upload page."""

import pytest

from annotation.models import Dataset
from hits.services.dataset_import import import_dataset

from ..conftest import DEMO_ROSE, PASSWORD
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_browses_and_imports(live_server, page, shoot, lead, tmp_path):
    import_dataset(DEMO_ROSE, name="realsumm-demo", fmt="rose")
    login(page, live_server.url, lead.username, PASSWORD)
    page.wait_for_selector("h1:text('Datasets')")
    assert page.locator("table.data").inner_text().count("realsumm-demo") == 1
    shoot(page, "home-lead")

    page.click("text=realsumm-demo")
    page.wait_for_selector("h2:text('Systems')")
    assert "abs_bart_out" in page.inner_text("table.data >> nth=0")
    shoot(page, "dataset-detail")

    page.click("table.data >> nth=2 >> a >> nth=0")
    page.wait_for_selector("h2:text('Reference and its ACUs')")
    assert page.locator("ul.acus li").count() > 3
    shoot(page, "document-detail")

    # A broken file: a clear message, nothing written.
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"example_id": "x", "source": "s"}\n')
    page.goto(f"{live_server.url}/datasets/import/")
    page.fill("#id_name", "uploaded")
    page.set_input_files("#id_file", str(bad))
    page.click("button:text('Import')")
    alert = page.wait_for_selector("[role=alert]")
    assert "broken.jsonl, line 1: 'reference' is missing" in alert.inner_text()
    shoot(page, "import-error")
    assert not Dataset.objects.filter(name="uploaded").exists()

    page.set_input_files("#id_file", str(DEMO_ROSE))
    page.click("button:text('Import')")
    page.wait_for_selector(".messages li")
    assert "10 documents, 4 systems, 40 summaries" in page.inner_text(".messages li")
    assert Dataset.objects.filter(name="uploaded").exists()
