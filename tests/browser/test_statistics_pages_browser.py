"""Issue 12 pages in a real browser: the leaderboard on partial data (n per system and pair,
documents differ, common documents), a one-document pilot, and the metric comparison page."""

import json

import numpy as np
import pytest

from annotation.models import Dataset, Summary
from hits.services.dataset_import import import_dataset
from scoring.models import ScoringRun
from scoring.runs import statistics
from scoring.runs.metrics import import_metric_scores
from scoring.runs.selectors import run_summaries
from scoring.runs.services import compute_scores

from ..conftest import PASSWORD
from ..test_publishable_statistics import drop_documents, tiny_rose
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_partial_leaderboard_and_metric_page(live_server, page, shoot, lead, realsumm_path, tmp_path, eager_celery):
    import_dataset(realsumm_path, name="realsumm", fmt="pyramid")
    dataset = Dataset.objects.get(name="realsumm")
    drop_documents(dataset, "abs_bart_out", 50)
    run = compute_scores(dataset, n_resamples=1000)
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/systems/")
    assert "judged on different documents" in page.inner_text("#documents-differ")
    bart = page.locator("#leaderboard tbody tr:has-text('abs_bart_out')")
    assert "50" in bart.locator("td").nth(7).inner_text()
    assert page.locator("#significance-matrix td[data-n='50']").count() == 2 * 24
    assert page.locator("#aggregation-table tbody tr").count() == 25
    shoot(page, "systems-partial-documents")
    # Holm-adjusted by default over the 300 pairs; 1,000 resamples could not resolve them (an adjusted
    # p of 0 would only say "< 0.6"), so the paired tests drew 24,000 (a bound of 0.025): pairs read
    # significant after the correction, fewer than raw, and there is nothing to warn about.
    assert "Holm's step-down method over the 300 system pairs" in page.inner_text("#multiple-comparisons")
    assert "24,000 resamples (enough for the 300 pairs to resolve" in page.inner_text("body")
    assert page.locator("#holm-resamples").count() == 0
    significant = "#significance-matrix td.sig.yes, #significance-matrix td.sig.strong"
    holm_significant = page.locator(significant).count()
    assert holm_significant > 0
    title = page.locator("#significance-matrix tbody tr").first.locator("td").nth(1).get_attribute("title")
    assert ": p: " in title and ", Holm-adjusted p: " in title
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.locator("#significance").scroll_into_view_if_needed()
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # the matrix scrolls in its box
        for hint in ("#multiple-comparisons",):
            box = page.locator(hint).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (hint, width)
        top = page.evaluate("window.scrollY + document.getElementById('significance').getBoundingClientRect().top")
        clip = {"x": 0, "y": top, "width": width, "height": 1100}
        page.screenshot(
            path=str(shoot(page, f"systems-holm-{width}").with_name(f"systems-holm-{width}-matrix.png")),
            full_page=True,
            clip=clip,
        )
    page.set_viewport_size({"width": 1280, "height": 900})
    page.click("#marked-toggle")
    assert "No correction for multiple comparisons" in page.inner_text("#multiple-comparisons")
    assert page.locator(significant).count() > holm_significant
    shoot(page, "systems-raw-p")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/systems/")
    page.click("#documents-differ a")
    assert "the 50 documents judged for every system" in page.inner_text("#documents-differ")
    shoot(page, "systems-common-documents")

    # Metrics: the worse metric first in name order; the page names the better one.
    info = {
        pk: (e, s)
        for pk, e, s in Summary.objects.filter(document__dataset=dataset).values_list(
            "pk", "document__external_id", "system__name"
        )
    }
    rng = np.random.default_rng(1)
    lines = {}
    for pk, score in zip(run_summaries(run)["ids"], run_summaries(run)["acu"], strict=False):
        e, s = info[pk]
        doc = lines.setdefault(e, {"example_id": e, "aaa_random": {}, "oracle": {}})
        doc["aaa_random"][s], doc["oracle"][s] = float(rng.random()), score + rng.normal(0, 0.05)
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in lines.values()))
    import_metric_scores(dataset, path)
    metric_run = statistics.start(
        dataset, ScoringRun.Kind.METRICS, {"n_resamples": 300, "n_permutations": 300, "seed": 0, "method": "pearson"}
    )
    statistics.run_metric_correlations(metric_run.pk)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/metrics/")
    rows = page.locator("#metric-tests tbody tr")
    assert rows.count() == 2
    for i in range(2):
        cells = rows.nth(i).locator("td")
        assert cells.nth(0).inner_text() == "oracle" and cells.nth(1).inner_text() == "aaa_random"
    shoot(page, "metrics-comparison")


def test_one_document_pilot_warns(live_server, page, shoot, lead, tmp_path, eager_celery):
    dataset = tiny_rose(tmp_path)
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/systems/")
    assert "fewer than 30 documents" in page.inner_text("#small-sample")
    assert page.locator("#leaderboard .flag:text('degenerate')").count() == 6
    assert page.locator("#significance-matrix td.sig.yes, #significance-matrix td.sig.strong").count() == 0
    shoot(page, "systems-one-document")
