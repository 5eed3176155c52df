"""Issue 27, items 10 and 12 on the server side: chart axes whose tick labels all differ, the two
scores of a system side by side, CIs that are never "[, ]", power analysis that runs in the
background with its progress on the page, and hints that call a draft a draft."""

import random
import threading
import time
from types import SimpleNamespace

import pytest
from django.template import Context, Template
from django.template.loader import render_to_string
from django.urls import reverse

from annotation.hints import reference_hints
from scoring.machine.pages import classification_rows
from scoring.models import ScoringRun
from scoring.results import charts

from .crowd_data import simulated_round


def _check_axis(axis, values):
    labels = charts.tick_labels(axis)
    assert len(labels) == len(set(labels)), labels  # no "0.1" twice
    assert axis["min"] <= min(values) and axis["max"] >= max(values)
    step = axis["ticks"]["stepSize"]
    assert (axis["max"] - axis["min"]) / step <= 8 + 1e-9
    for end in (axis["min"], axis["max"]):  # both ends on the step, so every tick is
        assert abs(end / step - round(end / step)) < 1e-6
    return labels


def test_score_axis_labels_are_all_distinct():
    # The chart: intervals from 0.08 to 0.31 made a 0.05..0.35 axis that Chart.js labelled
    # with one decimal, 0.05 reading "0.1" beside 0.1.
    labels = _check_axis(charts.axis_ticks([0.08, 0.31], pad=0.1, lower=0, upper=1), [0.08, 0.31])
    assert labels[0] in ("0.00", "0.05") and "0.10" in labels
    rng = random.Random(7)
    for _ in range(2000):
        a, b = sorted(rng.uniform(0, 1) for _ in range(2))
        if rng.random() < 0.3:
            b = min(1.0, a + rng.uniform(0, 0.02))  # narrow spans: steps of 0.0025 and smaller
        _check_axis(charts.axis_ticks([a, b], pad=0.1, lower=0, upper=1), [a, b])
    assert charts.tick_labels(charts.axis_ticks([0.0, 1.0], pad=0, lower=0, upper=1)) == [
        "0.0",
        "0.2",
        "0.4",
        "0.6",
        "0.8",
        "1.0",
    ]


def test_leaderboard_puts_both_scores_side_by_side_with_a_legend():
    systems = {  # equal scores and intervals: the second dataset's point sat on the first
        "alpha": {"acu": 0.3, "acu_ci": [0.2, 0.4], "normalized_acu": 0.3, "normalized_acu_ci": [0.2, 0.4]},
        "beta": {"acu": 0.5, "acu_ci": [0.45, 0.55], "normalized_acu": 0.2, "normalized_acu_ci": [0.1, 0.3]},
    }
    config = charts.leaderboard(systems)
    acu, normalized = config["data"]["datasets"]
    assert [d["label"] for d in (acu, normalized)] == ["ACU score", "Normalized ACU score"]
    assert config["options"]["plugins"]["legend"]["display"] is True
    assert config["xLabels"] == ["beta", "alpha"]  # best first
    for i, (a, n) in enumerate(zip(acu["data"], normalized["data"], strict=True)):
        assert round(a["x"]) == round(n["x"]) == i  # both at their system's tick...
        assert n["x"] - a["x"] >= 0.3  # ...a third of a category apart
    x = config["options"]["scales"]["x"]
    assert x["min"] < acu["data"][0]["x"] and normalized["data"][-1]["x"] < x["max"]
    y = config["options"]["scales"]["y"]
    _check_axis(y, [0.1, 0.55])


def test_power_curve_ticks_only_at_the_sample_sizes():
    outputs = {
        "sizes": [10, 50, 100, 200, 300, 500, 700, 1000, 10000],
        "buckets": [{"bucket": 0, "pairs": 2, "min_difference": 0.01, "max_difference": 0.02, "power": [0.1] * 9}],
    }
    x = charts.power_curve(outputs)["options"]["scales"]["x"]
    assert x["tickValues"] == outputs["sizes"] and (x["min"], x["max"]) == (10, 10000)
    assert x["ticks"]["autoSkip"] is False  # thinned by width in static/js/charts.js instead


def test_an_interval_without_bounds_is_never_empty_brackets():
    template = Template("{% load numbers %}{{ v|interval:3 }}")
    assert template.render(Context({"v": [0.61234, 0.2, 0.9]})) == '<span class="hint ci">[0.200, 0.900]</span>'
    assert template.render(Context({"v": [0.2, 0.9]})) == '<span class="hint ci">[0.200, 0.900]</span>'
    assert "[-0.100, 0.900]" in template.render(Context({"v": [0.5, -0.1, 0.9]}))
    for missing in ([1.0, None, None], [1.0, float("nan"), float("nan")], [None, None], None, []):
        text = template.render(Context({"v": missing}))
        assert "no CI (n too small)" in text and "[" not in text


def _judge_run(system_kendall):
    run = SimpleNamespace(
        pk=7,
        batch_id=3,
        judge="lexical",
        version=1,
        model="word overlap",
        ranking={"for_ranking": False, "reason": "its system-level τ CI includes 0"},
        fitted={},
        calibration={"target": "expert", "folds": 5},
        figures={
            "classification": {
                "expert": {
                    "accuracy": 0.7,
                    "balanced_accuracy": 0.6,
                    "auc": 0.8,
                    "kappa": 0.3,
                    "ci": {"accuracy": [0.6, 0.8], "auc": [None, None]},
                }
            },
            "correlations": {"summary": {"kendall": [0.4, 0.1, 0.6]}, "system": {"kendall": system_kendall}},
        },
    )
    run.classification_rows = classification_rows(run.figures)  # as systems_context sets it
    return run


def test_judge_table_says_when_a_ci_is_missing():
    html = render_to_string(
        "scoring/_machine.html",
        {"machine_runs": [_judge_run([1.0, None, None])], "dataset": SimpleNamespace(pk=1, name="d")},
    )
    assert "[, ]" not in html and "[ , ]" not in html
    row = html[html.index('id="machine-7"') :]
    assert "1.000" in row and row.count("no CI (n too small)") == 2  # system τ and the AUC
    assert '0.400 <span class="hint ci">[0.100, 0.600]</span>' in row
    assert "[0.600, 0.800]" in row  # accuracy keeps its interval


def test_hints_call_a_draft_a_draft():
    sentences = [("The mayor resigned on Monday after the vote .", ["The mayor resigned."]), ("He left .", [])]
    long_draft = "The mayor resigned on Monday after a long and difficult vote in the city council chamber today"
    drafts = [["The mayor resigned on Monday.", "The mayor resigned on Monday!", long_draft], ["He left."]]
    hints = reference_hints(sentences, 7.0, drafts)
    assert hints["acus"] == reference_hints(sentences, 7.0)["acus"] == [[[]], []]  # ACUs ignore the drafts
    first, second, long = hints["drafts"][0]
    assert first == []
    assert second == ["Nearly the same as draft “The mayor resigned on Monday.”"]
    assert any(h.startswith("Long: this draft has 17 words where ACUs here") for h in long)
    assert hints["drafts"][1] == [[]]
    assert hints["sentences"][1] == ["No ACU for this sentence yet: accept, edit or dismiss its drafts."]
    near_acu = reference_hints(sentences, 7.0, [["The mayor resigned!"], []])["drafts"][0][0]
    assert near_acu == ["Nearly the same as ACU “The mayor resigned.”"]


@pytest.mark.django_db(transaction=True)
def test_power_analysis_runs_in_the_background_and_the_page_shows_progress(
    client, lead, eager_celery, settings, monkeypatch
):
    """In process (run.sh), starting a power analysis answers at once; the page shows a progress
    bar while it runs (it kept the page loading for a minute) and the chart when it is done."""
    from scoring.runs import statistics
    from scoring.runs.services import compute_scores

    settings.LONG_TASKS_IN_BACKGROUND = True
    dataset, batch = simulated_round()
    compute_scores(dataset, batch)  # the round's scores (a page only asks for them, in the background)
    release, real = threading.Event(), statistics.plan_power
    where = {}

    def held(run_id, *args):  # the real analysis, after the test has looked at the running page
        where["thread"] = threading.current_thread().name
        ScoringRun.objects.filter(pk=run_id).update(progress=0.4)
        release.wait(300)
        return real(run_id, *args)

    monkeypatch.setattr(statistics, "plan_power", held)
    client.force_login(lead)
    response = client.post(
        reverse("dashboard_start", args=[dataset.pk, "power"]),
        {"round": batch.pk, "n_trials": "20", "n_resamples": "200"},
    )
    # The analysis is held until `release`: had the request run it, it would be done by now.
    run = ScoringRun.objects.get(dataset=dataset, kind="power")
    assert response.status_code == 302 and run.status != "done" and not release.is_set()
    for _ in range(3000):  # the thread starts after the commit
        if "thread" in where and ScoringRun.objects.get(pk=run.pk).progress:
            break
        time.sleep(0.05)
    run.refresh_from_db()
    assert run.status == "running" and where["thread"].startswith("task-")
    page = client.get(reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    assert 'id="power-progress"' in page and "40% done" in page
    assert '<progress id="power-progress-bar" max="1" value="0.400000">' in page
    assert "data-refresh=" in page and 'id="power-lost"' not in page
    release.set()
    for _ in range(3000):  # up to 5 minutes on a busy machine; done in a second or two here
        run.refresh_from_db()
        if run.status != "running":
            break
        time.sleep(0.1)
    assert run.status == "done" and run.progress == 1.0
    page = client.get(reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    assert "power-chart" in page and 'id="power-progress"' not in page


@pytest.mark.django_db
def test_a_power_run_whose_background_thread_is_gone_is_offered_again(client, lead, eager_celery, settings):
    """The embedded server stopped mid-run: the stored run says running forever. The page says
    so and offers the button again instead of reloading every 5 s with the button off."""
    from scoring.runs import statistics
    from scoring.runs.services import compute_scores

    settings.LONG_TASKS_IN_BACKGROUND = True
    dataset, batch = simulated_round()
    compute_scores(dataset, batch)  # the round's scores (a page only asks for them, in the background)
    run = statistics.start(dataset, ScoringRun.Kind.POWER, dict(statistics.POWER_DEFAULTS), batch)
    ScoringRun.objects.filter(pk=run.pk).update(progress=0.25)  # no thread of this process runs it
    client.force_login(lead)
    page = client.get(reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    assert 'id="power-lost"' in page and "stopped at 25%" in page
    assert 'id="power-progress"' not in page and "data-refresh=" not in page
    assert "A power analysis is running" not in page  # the button is on
