"""A lead starts a machine judge run from the dataset page, watches its progress finish and
finds the machine score beside the human one on the systems page."""

import pytest

from annotation.models import Dataset
from hits.models import JudgeRun
from hits.services.dataset_import import import_dataset

from ..conftest import DEMO_ROSE, PASSWORD
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_starts_a_judge_run_and_sees_machine_beside_human(live_server, page, shoot, lead, eager_celery):
    import_dataset(DEMO_ROSE, name="realsumm-demo", fmt="rose")
    dataset = Dataset.objects.get(name="realsumm-demo")
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
    page.wait_for_selector("#judge-runs td:text('No judge run yet.')")

    page.select_option("#judge-name", "lexical")
    page.click("#judge-form button[type=submit]")
    row = page.wait_for_selector("#judge-runs tr[data-status=done]")
    run = JudgeRun.objects.get()
    assert run.status == "done" and run.pairs_done == run.pairs_total > 0
    assert page.locator(f"#judge-run-{run.pk} progress").evaluate("bar => bar.value") == 1
    assert f"{run.pairs_total} / {run.pairs_total} pairs" in row.inner_text()
    accuracy = run.figures["classification"]["expert"]["accuracy"]
    assert page.inner_text(f"#judge-run-{run.pk} .accuracy") == f"{accuracy:.3f}"
    assert "finished" in page.inner_text(".messages")
    page.locator("#machine-judges").scroll_into_view_if_needed()
    shoot(page, "judge-run-dataset-page")

    page.click(f"#judge-run-{run.pk} a:text('scores')")
    page.wait_for_selector("#leaderboard")
    header = page.locator("#leaderboard thead th").all_inner_texts()
    assert header[2] == "ACU score" and header[-1] == "Machine: lexical v1"
    for tr in page.locator("#leaderboard tbody tr").all():
        cells = tr.locator("td").all_inner_texts()
        system, human, machine = cells[1], float(cells[2]), float(cells[-1])
        expected = run.figures["systems"][system]
        assert human == pytest.approx(expected["human"], abs=5e-5)
        assert machine == pytest.approx(expected["machine"], abs=5e-5)
    assert page.locator("#machine-runs tbody tr").count() >= 1
    page.wait_for_function("document.querySelector('canvas[data-chart=triage-chart]').width > 0")
    shoot(page, "judge-run-systems-page")
