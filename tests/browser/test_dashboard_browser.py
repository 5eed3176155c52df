"""The lead's dashboards in a real browser on a simulated crowd batch of REALSumm."""

import re

import pytest

from annotation.models import Dataset
from hits.batch_fields import BatchSpec
from hits.models import Worker
from hits.services.batches import create_batch, publish_batch
from hits.services.dataset_import import import_dataset
from hits.services.simulate import simulate_crowd
from scoring.models import ScoringRun
from scoring.runs import statistics
from scoring.runs.services import compute_scores

from ..conftest import PASSWORD
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def crowd_dataset(realsumm_path):
    import_dataset(realsumm_path, name="realsumm", fmt="pyramid")
    dataset = Dataset.objects.get(name="realsumm")
    systems = list(
        dataset.systems.filter(name__in=["abs_bart_out", "ext_bart_out", "abs_t5_out_large", "abs_bottom_up_out"])
    )
    # gold HITs in the round: only gold evidence flags the spammer (agreement and speed are notes)
    batch = publish_batch(create_batch(dataset=dataset, spec=BatchSpec(assignments=3, gold_share=0.2), systems=systems))
    simulate_crowd(batch, workers=3, accuracy=0.9, spammers=1, seed=5)
    return dataset, batch


def test_lead_dashboards(live_server, page, shoot, lead, crowd_dataset):
    dataset, batch = crowd_dataset
    first = compute_scores(dataset, batch, trigger="test")
    power = statistics.start(
        dataset,
        ScoringRun.Kind.POWER,
        {"sizes": [10, 50, 100, 300], "n_trials": 100, "n_resamples": 1000, "seed": 1},
        batch,
    )
    statistics.run_power(power.pk)
    page.on("dialog", lambda dialog: dialog.accept())
    base = f"{live_server.url}/datasets/{dataset.pk}/dashboard"
    login(page, live_server.url, lead.username, PASSWORD)

    page.goto(f"{base}/?round={batch.pk}")
    alpha = float(page.inner_text("#alpha-acu"))
    assert 0.3 < alpha < 1
    assert page.inner_text("#done") == str(batch.hits.count() * 3)
    page.wait_for_function("document.querySelector('canvas[data-chart=trend-chart]').width > 0")
    shoot(page, "dashboard-overview")

    page.goto(f"{base}/workers/?round={batch.pk}")
    rows = page.locator("#workers tbody tr")
    assert rows.count() == 4
    assert page.get_attribute("#workers thead th:has-text('Flags')", "aria-sort") == "descending"  # flagged first
    page.click("#workers thead th:has-text('Agreement') a")  # sorted on the server, ascending: the spammer first
    page.wait_for_url(re.compile(r"[?&]sort=agreement(&|$)"))
    assert page.get_attribute("#workers thead th:has-text('Agreement')", "aria-sort") == "ascending"
    first_row = rows.first
    assert "spam" in first_row.get_attribute("data-worker")
    assert "low agreement" in first_row.inner_text() or "too fast" in first_row.inner_text()
    assert "failed gold" in first_row.inner_text()
    without = float(page.inner_text("#alpha-without-acu"))
    now = float(page.inner_text("#alpha-now-acu"))
    assert without > now  # leaving the spammer out would raise agreement
    shoot(page, "dashboard-workers")
    # A refused bonus (a decimal comma) comes back open with the amount and reason as typed.
    first_row.locator("summary:text('Block / bonus')").click()
    bonus = first_row.locator("form[action*='/bonus']")
    bonus.locator("input[name=amount]").fill("1,50")
    bonus.locator("input[name=reason]").fill("Careful work")
    bonus.locator("button:text('Bonus')").click()
    page.wait_for_selector(".messages li:has-text('decimal comma')")
    assert "spam" in first_row.get_attribute("data-worker")  # the table's sort is kept
    assert first_row.locator("details").get_attribute("open") is not None
    assert bonus.locator("input[name=amount]").input_value() == "1,50"
    assert bonus.locator("input[name=reason]").input_value() == "Careful work"
    first_row.locator("button:text('Exclude')").click()
    page.wait_for_selector(".messages li:has-text('scores recomputed')")
    assert float(page.inner_text("#alpha-now-acu")) == pytest.approx(without, abs=1e-4)
    spammer = Worker.objects.get(external_id__contains="spam")
    assert spammer.excluded
    latest = ScoringRun.objects.filter(dataset=dataset, batch=batch, kind="scores", status="done").first()
    assert latest.pk != first.pk and latest.outputs["counts"]["workers"] == 3

    page.goto(f"{base}/systems/?round={batch.pk}")
    page.wait_for_selector("#significance-matrix")
    assert page.locator("#significance-matrix tbody tr").count() == 4
    assert page.locator("#significance-matrix td.sig.yes, #significance-matrix td.sig.strong").count() >= 1
    page.wait_for_function("document.querySelector('canvas[data-chart=power-chart]').width > 0")
    page.locator("#power").scroll_into_view_if_needed()
    shoot(page, "dashboard-systems")
    # Sortable headers (issue 47, item 16): a button inside each column header sorts; the header keeps its
    # column-header role and says how its column is sorted (axe-core refused aria-sort on role=button).
    header = page.locator("#leaderboard thead th").nth(2)  # ACU score
    assert header.get_attribute("role") is None and header.get_attribute("aria-sort") is None
    header.locator("button.sort").click()
    assert header.get_attribute("aria-sort") == "ascending"
    header.locator("button.sort").press("Enter")
    assert header.get_attribute("aria-sort") == "descending"
    values = [float(v) for v in page.locator("#leaderboard tbody tr td:nth-child(3)").all_inner_texts()]
    assert values == sorted(values, reverse=True)
