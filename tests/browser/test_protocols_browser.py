"""The Protocols page in Chromium at 1280 and 390 px: RoSE's protocol file imported, a second round
with each rater's own scores uploaded on the page, α, the matrices, the case study and power."""

import json

import numpy as np
import pytest

from annotation.services.ratings import export_ratings
from hits.services.dataset_import import import_dataset
from scoring.protocols.selectors import pick_round

from ..conftest import PASSWORD, SHARED
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROSE = SHARED / "data" / "rose-protocols" / "protocol-comparison.json"


def _with_raters(examples, seed=0):
    """Three raters per example (of a pool of five), each a 1-5 score near the mean, with a taste
    shared by their Prior and Ref-free scores."""
    rng = np.random.default_rng(seed)
    for k, example in enumerate(examples):
        raters = [f"w{(k + i) % 5}" for i in range(3)]
        for entry in example["annotations"].values():
            taste = {r: rng.normal(0, 0.8) for r in raters}
            entry["raters"] = {
                protocol: {
                    r: float(
                        np.clip(
                            np.rint(entry[protocol] + (taste[r] if protocol != "ref_based" else rng.normal(0, 0.5))),
                            1,
                            5,
                        )
                    )
                    for r in raters
                }
                for protocol in ("prior", "ref_free", "ref_based")
            }
            for protocol in ("prior", "ref_free", "ref_based"):
                entry.pop(protocol)
            entry.pop("ratings", None)
    return examples


def test_protocols_page_at_two_widths(live_server, page, shoot, lead, tmp_path):
    import_dataset(ROSE, name="rose-protocols", fmt="rose-protocols")
    from annotation.models import Dataset

    dataset = Dataset.objects.get(name="rose-protocols")
    path = tmp_path / "raters.json"
    path.write_text(json.dumps(_with_raters(export_ratings(pick_round(dataset)))))
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/protocols/")
    assert "0.926" in page.inner_text("#protocol-system-matrix")
    page.set_input_files("#rating-import input[type=file]", str(path))
    page.fill("#rating-import input[name=name]", "with-raters")
    page.click("#rating-import button[type=submit]")
    assert "Imported rating round 'with-raters'" in page.inner_text("body")
    alpha = page.inner_text("#protocol-alpha")
    assert "Prior" in alpha and "–" not in alpha.split("Krippendorff")[0]
    rows = page.locator("#protocol-case-study tbody tr")
    assert rows.count() == 6  # five raters and the mean
    page.click("#compute-power")
    page.wait_for_selector("#protocol-power-table")
    assert page.locator("#protocol-power canvas").count() == 4
    shoot(page, "protocols-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1, width  # wide tables scroll inside their box, the page does not
    shoot(page, "protocols-390")
