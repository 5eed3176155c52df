"""A lead starts a machine judge run from the dataset page, watches its progress finish and
finds the machine score beside the human one on the systems page."""

import pytest

from annotation.models import Dataset
from hits.models import JudgeRun
from hits.services.dataset_import import import_dataset
from scoring.runs.services import compute_scores

from ..conftest import DEMO_ROSE, PASSWORD
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The judge form's Model directory box: the width its placeholder needs inside the box (text plus
# the box's padding) and the width the box has; a placeholder wider than its box is cut.
PLACEHOLDER = """() => { const i = document.querySelector('#judge-model-dir'); const s = getComputedStyle(i);
    const c = document.createElement('canvas').getContext('2d'); c.font = s.font;
    const label = i.closest('label').getBoundingClientRect(), box = i.getBoundingClientRect();
    return {needs: c.measureText(i.placeholder).width + parseFloat(s.paddingLeft) + parseFloat(s.paddingRight),
            has: i.clientWidth, right: box.right, labelTop: label.top, boxTop: box.top}; }"""


def test_lead_starts_a_judge_run_and_sees_machine_beside_human(live_server, page, shoot, lead, eager_celery, settings):
    settings.LONG_TASKS_IN_BACKGROUND = True  # as the embedded server runs it (eager_celery turns it off)
    import_dataset(DEMO_ROSE, name="realsumm-demo", fmt="rose")
    dataset = Dataset.objects.get(name="realsumm-demo")
    compute_scores(dataset, n_resamples=200)  # the human scores, which pages read and no longer compute
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
    page.wait_for_selector("#judge-runs td:text('No judge run yet.')")
    # Issue 47, item 14: the model directory's hint ("nli only, e.g. /models/...") is not cut.
    box = page.evaluate(PLACEHOLDER)
    assert box["needs"] <= box["has"], f"the model directory's placeholder is cut: {box}"

    page.select_option("#judge-name", "lexical")
    page.click("#judge-form button[type=submit]")
    row = page.wait_for_selector("#judge-runs tr[data-status=done]")
    run = JudgeRun.objects.get()
    assert run.status == "done" and run.pairs_done == run.pairs_total > 0
    assert page.locator(f"#judge-run-{run.pk} progress").evaluate("bar => bar.value") == 1
    assert f"{run.pairs_total} / {run.pairs_total} pairs" in row.inner_text()
    accuracy = run.figures["classification"]["expert"]["accuracy"]
    assert page.inner_text(f"#judge-run-{run.pk} .accuracy") == f"{accuracy:.3f}"
    # In process the run goes to a background thread: the page answered at once and polled it to done.
    assert "started; its progress shows below" in page.inner_text(".messages")
    page.locator("#machine-judges").scroll_into_view_if_needed()
    shoot(page, "judge-run-dataset-page")

    page.click(f"#judge-run-{run.pk} a:text('scores')")
    page.wait_for_selector("#leaderboard")
    header = page.locator("#leaderboard thead th").all_inner_texts()
    # On the demo's 10 documents the lexical run's system-level tau CI reaches 0: marked not for ranking.
    assert run.figures["ranking"]["for_ranking"] is False
    assert header[2] == "ACU score" and header[-1].splitlines() == ["Machine: lexical v1", "not for ranking"]
    for tr in page.locator("#leaderboard tbody tr").all():
        cells = tr.locator("td").all_inner_texts()
        system, human, machine = cells[1], float(cells[2]), float(cells[-1])
        expected = run.figures["systems"][system]
        assert human == pytest.approx(expected["human"], abs=5e-5)
        assert machine == pytest.approx(expected["machine"], abs=5e-5)
    assert page.locator("#machine-runs tbody tr").count() >= 1
    page.wait_for_function("document.querySelector('canvas[data-chart=triage-chart]').width > 0")
    shoot(page, "judge-run-systems-page")


def test_lead_trains_the_learned_judge_and_triage_uses_it(live_server, page, shoot, lead, eager_celery, tmp_path):
    from scoring.runs.services import compute_scores

    from ..judges.learned_data import tiny_dataset

    dataset = tiny_dataset(tmp_path, "tiny-browser", seed=1)
    compute_scores(dataset, n_resamples=100)
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
    page.wait_for_selector("#judge-runs td:text('No judge run yet.')")
    # Issue 47, item 14: the model directory's hint ("nli only, e.g. /models/...") is not cut.
    box = page.evaluate(PLACEHOLDER)
    assert box["needs"] <= box["has"], f"the model directory's placeholder is cut: {box}"
    page.select_option("#judge-name", "learned")
    page.click("#judge-form button[type=submit]")
    row = page.wait_for_selector("#judge-runs tr[data-status=done]")
    run = JudgeRun.objects.get()
    assert run.judge == "learned" and run.fitted["training"]["pairs"] == run.pairs_total == 320
    assert "learned v1 · logreg-features-v1" in row.inner_text() and "not for ranking" not in row.inner_text()
    auc = run.figures["classification"]["expert"]["auc"]
    assert page.inner_text(f"#judge-run-{run.pk} td:nth-child(6)") == f"{auc:.3f}"
    page.locator("#machine-judges").scroll_into_view_if_needed()
    shoot(page, "learned-judge-dataset-page")

    page.click(f"#judge-run-{run.pk} a:text('scores')")
    page.wait_for_selector("#machine-runs")
    judge_cell = page.inner_text(f"#machine-{run.pk} td:nth-child(2)")
    assert "trained on 320 expert pairs of 16 documents" in judge_cell and "not for ranking" not in judge_cell
    low, high = run.figures["classification"]["expert"]["ci"]["auc"]
    assert f"[{low:.3f}, {high:.3f}]" in page.inner_text(f"#machine-{run.pk} td:nth-child(6)")
    assert f"From judge run #{run.pk} (learned v1)" in page.inner_text("#triage-source")
    assert page.locator("input[name=override]").count() == 0  # fit for ranking: no override offered
    # The confidence the run suggests for new documents (issue 43) is said and is the triage form's c.
    run.refresh_from_db()
    suggestion = run.figures["triage_suggestion"]
    said = page.inner_text("#triage-suggestion")
    assert f"Chosen on the labelled documents ({suggestion['documents']})" in said
    assert page.input_value("input[name=confidence]") == (str(suggestion["c"]) if suggestion["c"] else "")
    assert (f"c = {suggestion['c']}," in said) if suggestion["c"] else ("no c keeps the agreement" in said)
    assert f"decides {suggestion['decided_share'] * 100:.1f}% of the pairs" in said or suggestion["c"] is None
    page.locator("#machine").scroll_into_view_if_needed()
    shoot(page, "learned-judge-systems-page")
    page.locator("#triage-suggestion").screenshot(
        path=str(shoot(page, "learned-judge-systems-page").parent / "learned-judge-triage-suggestion.png")
    )


@pytest.mark.slow
def test_lead_trains_the_learned_judge_with_the_cross_encoder(
    live_server, page, shoot, lead, eager_celery, tmp_path, monkeypatch, settings
):
    pytest.importorskip("torch")
    from scoring.machine import packed

    from ..judges.learned_data import tiny_dataset
    from ..judges.tiny_bert import build_tiny_bert

    (tmp_path / "bert").mkdir()
    base = build_tiny_bert(tmp_path / "bert")
    monkeypatch.setattr(packed, "packaged_base", lambda: base)  # the tiny BERT for the packaged model
    settings.JUDGE_MODELS_DIR = tmp_path / "judge-models"
    dataset = tiny_dataset(tmp_path, "tiny-ce", seed=1, documents=6)
    login(page, live_server.url, lead.username, PASSWORD)
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
        page.wait_for_selector("#judge-runs tbody tr")
        page.locator("#machine-judges").scroll_into_view_if_needed()
        label = page.locator("label:has(#judge-cross-encoder)")
        box = label.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width  # the long label wraps, never overflows
        shoot(page, f"cross-encoder-form-{width}")
    page.select_option("#judge-name", "learned")
    page.check("#judge-cross-encoder")
    # The run may train before the answer comes (tasks run in process here): on a busy machine
    # that takes minutes, so neither the click nor the wait is bounded by the page's 15 s.
    page.click("#judge-form button[type=submit]", timeout=300_000)
    row = page.wait_for_selector("#judge-runs tr[data-status=done]", timeout=300_000)
    run = JudgeRun.objects.get()
    assert run.options == {"cross_encoder": True} and run.fitted["cross_encoder"]["path"] == f"run-{run.pk}"
    assert "learned v1 · logreg-features-v1+packed-minilm-l6-ce" in row.inner_text()
    page.locator("#machine-judges").scroll_into_view_if_needed()
    shoot(page, "cross-encoder-run-1280")


def test_lead_resumes_an_llm_run_from_the_page(
    live_server, page, shoot, lead, eager_celery, settings, tmp_path, monkeypatch
):
    """An llm run that met an endpoint outage is started again from the page: it resumes, asks
    only the summaries without an answer, and the list of runs shows its calls and tokens."""
    from annotation import llm
    from scoring.machine.judges import base

    from ..judges.learned_data import tiny_dataset
    from ..judges.llm_standin import JudgeEndpoint, StandIn

    standin = StandIn()
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = standin.base, "tiny-judge", "sk-test"
    monkeypatch.setattr(llm, "BACKOFF", 0.01)
    monkeypatch.setattr(base, "CHUNK_PAIRS", 10)
    endpoint = JudgeEndpoint(standin)
    endpoint.fail_after = 6
    try:
        dataset = tiny_dataset(tmp_path, "tiny-llm", seed=3, documents=6)
        compute_scores(dataset, n_resamples=100)
        login(page, live_server.url, lead.username, PASSWORD)
        page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
        page.select_option("#judge-name", "llm")
        page.click("#judge-form button[type=submit]")
        page.wait_for_selector("#judge-runs tr[data-status=failed]")
        run = JudgeRun.objects.get()
        endpoint.fail_after = None
        page.select_option("#judge-name", "llm")
        page.click("#judge-form button[type=submit]")
        row = page.wait_for_selector(f"#judge-run-{run.pk}[data-status=done]")
        assert f"Resuming run {run.pk}: 6 of 24 summaries already answered." in page.inner_text(".messages")
        assert JudgeRun.objects.count() == 1 and len(endpoint.answered) == 24
        total = sum(a["usage"]["total_tokens"] for a in endpoint.answered)
        usage = row.query_selector(".llm-usage").inner_text()
        assert usage == f"24 asked, 27 calls, 2 retries, 6 reused, resumed 1×; tokens {total:,}"
        # A new run of the finished one: every answer reused from it, nothing asked.
        page.select_option("#judge-name", "llm")
        page.click("#judge-form button[type=submit]")
        second = JudgeRun.objects.latest("pk")
        row = page.wait_for_selector(f"#judge-run-{second.pk}[data-status=done]")
        assert second.pk != run.pk and len(endpoint.answered) == 24
        usage = row.query_selector(".llm-usage").inner_text()
        assert usage == "0 asked, 0 calls, 0 retries, 24 from earlier runs; tokens 0"
        page.locator("#machine-judges").scroll_into_view_if_needed()
        shoot(page, "llm-judge-resumed-dataset-page")
    finally:
        standin.close()


def test_an_llm_run_from_before_usage_was_recorded_says_so(live_server, page, shoot, lead):
    """Its usage was a blank under the progress (and `asked` a blank where it is not recorded)."""
    from hits.models import Batch

    dataset = Dataset.objects.create(name="old-runs")
    runs = {}
    for version, usage in ((1, {}), (2, {"calls": 7, "retries": 2, "replies": 5, "total_tokens": 990, "resumed": 1})):
        batch = Batch.objects.create(
            dataset=dataset, name=f"machine: llm v{version}", kind=Batch.Kind.MACHINE, status=Batch.Status.COMPLETE
        )
        runs[version] = JudgeRun.objects.create(
            batch=batch, judge="llm", model="m", version=version, status="failed", llm_usage=usage
        )
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
    page.wait_for_selector(f"#judge-run-{runs[1].pk} .llm-usage")
    assert (
        page.inner_text(f"#judge-run-{runs[1].pk} .llm-usage") == "usage not recorded (a run from before it was kept)"
    )
    assert page.inner_text(f"#judge-run-{runs[2].pk} .llm-usage").startswith("asked not recorded, 7 calls, 2 retries")
    page.locator("#machine-judges").scroll_into_view_if_needed()
    shoot(page, "judge-runs-usage-not-recorded")


def test_the_model_directory_box_shows_its_whole_placeholder_on_a_phone(live_server, page, shoot, lead, tmp_path):
    """At 390 px the box was 310 px wide (100vw - 5rem) where its placeholder needs 364 (with the
    box's padding): it read "nli only, e.g. /models/roberta-large". It now takes the row's width
    there, its label above it; at 1280 px it keeps its 24rem beside its label."""
    from ..judges.learned_data import tiny_dataset

    dataset = tiny_dataset(tmp_path, "tiny-form", seed=1, documents=2)
    login(page, live_server.url, lead.username, PASSWORD)
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
        page.wait_for_selector("#judge-runs td:text('No judge run yet.')")
        form = page.locator("#judge-form")
        form.scroll_into_view_if_needed()
        form.screenshot(path=str(shoot(page, f"judge-form-{width}").parent / f"judge-form-{width}-form.png"))
        box = page.evaluate(PLACEHOLDER)
        assert box["needs"] <= box["has"], f"{width} px: the placeholder is cut: {box}"
        assert box["right"] <= width, f"{width} px: the box sticks out: {box}"
        if width == 390:
            assert box["boxTop"] > box["labelTop"], f"the label is no longer above its box: {box}"
        else:
            assert box["has"] == 24 * 16 - 2 and box["boxTop"] == box["labelTop"]  # 24rem beside its label: as it was
