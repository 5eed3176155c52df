"""Statistics when no document is judged for every system (issue 26, item 13): correlations and
power on the documents each pair shares, n reported, small samples flagged, never a crash; and
compute_scores --json carries what the stored run carries."""

import json
import re

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from hits.models import Assignment, Judgment
from scoring.models import ScoringRun
from scoring.results.leaderboard import with_holm
from scoring.runs import statistics
from scoring.runs.metrics import import_metric_scores
from scoring.runs.services import compute_scores
from scoring.stats import correlation, power

from .crowd_data import demo_dataset

SMALL_POWER = {"sizes": [10, 50], "n_trials": 20, "n_resamples": 200, "seed": 0}


def drop_one_system_per_document(dataset):
    """Document i loses the judgments of system i mod 4: no document is judged for every system."""
    systems = list(dataset.systems.order_by("name"))
    for i, document in enumerate(dataset.documents.order_by("position")):
        assignments = Assignment.objects.filter(
            hit__summary__document=document, hit__summary__system=systems[i % len(systems)]
        )
        Judgment.objects.filter(assignment__in=assignments).delete()
        assignments.delete()


@pytest.fixture
def partial(tmp_path):
    dataset = demo_dataset()
    drop_one_system_per_document(dataset)
    rng = np.random.default_rng(1)
    lines = []
    for document in dataset.documents.all():
        scores = {metric: {s.name: float(rng.random()) for s in dataset.systems.all()} for metric in ("rouge", "bleu")}
        lines.append(json.dumps({"example_id": document.external_id, **scores}))
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_metric_scores(dataset, path)
    return dataset


@pytest.mark.django_db
def test_metric_correlations_on_partial_coverage(partial, capsys):
    call_command("metric_correlations", "demo", "--json", "--resamples", "200", "--permutations", "50")
    out = json.loads(capsys.readouterr().out)
    assert out["coverage"] == "shared" and out["complete_documents"] == 0 and out["documents"] == 10
    assert out["small_sample"] is True
    for metric in ("rouge", "bleu"):
        summary = out["metrics"][metric]["summary"]["kendall"]
        system = out["metrics"][metric]["system"]["kendall"]
        assert summary["documents"] == 10 and system["documents"] == 10
        assert -1 <= summary["value"] <= 1 and summary["low"] <= summary["high"]
        assert -1 <= system["value"] <= 1
    assert out["significance"] == [] and "judged for every system" in out["significance_note"]
    call_command("metric_correlations", "demo", "--resamples", "100", "--permutations", "20")  # the text form
    assert "no document is judged for every system" in capsys.readouterr().out


@pytest.mark.django_db
def test_the_metrics_page_gives_each_correlation_its_own_n(partial, client, lead):
    """Partial coverage: a document with one judged system has no summary-level correlation, so the
    two levels rest on different documents (9 and 10); the page gave one n for the whole table."""
    first = partial.documents.order_by("position").first()
    assignments = Assignment.objects.filter(hit__summary__document=first).exclude(
        hit__summary__system__name=partial.systems.order_by("name").last().name
    )
    Judgment.objects.filter(assignment__in=assignments).delete()
    assignments.delete()
    call_command("metric_correlations", "demo", "--resamples", "50", "--permutations", "10")
    client.force_login(lead)
    page = client.get(reverse("dashboard_metrics", args=[partial.pk])).content.decode()
    table = page[page.index('id="metric-table"') : page.index("</table>", page.index('id="metric-table"'))]
    for level, n in (("summary", 9), ("system", 10)):
        row = re.findall(rf"<tr><td>rouge</td><td>{level}</td>.*?</tr>", table, re.S)
        assert len(row) == 1 and row[0].count(f'data-n="{n}">n {n}</small>') == 3, (level, row)
    assert "95% percentile bootstrap CIs over documents" in page


@pytest.mark.django_db
def test_power_on_partial_coverage_flags_small_pairs_instead_of_crashing(partial):
    for runner in (statistics.run_power, statistics.plan_power):  # in process, and the split path
        run = statistics.start(partial, ScoringRun.Kind.POWER, SMALL_POWER, trigger="test")
        runner(run.pk)
        run.refresh_from_db()
        assert run.status == ScoringRun.Status.DONE, run.error
        out = run.outputs
        assert out["coverage"] == "shared" and out["documents"] == 10
        assert len(out["pair_documents"]) == 6 and all(0 < n < 10 for n in out["pair_documents"])
        assert out["small_sample"] is True and len(out["small_sample_pairs"]) == 6
        assert len(out["no_power_pairs"]) == 6  # 3 to 5 shared documents each
        assert all(p is None for row in out["pair_power"] for p in row)  # not power 1.0


@pytest.mark.django_db
def test_the_systems_page_shows_the_flags(partial, client, lead):
    compute_scores(partial, n_resamples=100)
    run = statistics.start(partial, ScoringRun.Kind.POWER, SMALL_POWER, trigger="test")
    statistics.run_power(run.pk)
    client.force_login(lead)
    page = client.get(reverse("dashboard_systems", args=[partial.pk])).content.decode()
    assert 'id="power-small-sample"' in page and "6 share fewer than 10 and get no power" in page
    assert 'id="power-shared"' in page


@pytest.mark.django_db
def test_three_documents_are_flagged_not_power_one():
    dataset = demo_dataset()
    Assignment.objects.filter(hit__summary__document__position__gte=3).delete()
    run = statistics.start(dataset, ScoringRun.Kind.POWER, SMALL_POWER, trigger="test")
    statistics.run_power(run.pk)
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.DONE, run.error
    assert run.outputs["documents"] == 3 and run.outputs["pair_documents"] == [3] * 6
    assert run.outputs["small_sample"] is True and len(run.outputs["no_power_pairs"]) == 6
    assert all(p is None for row in run.outputs["pair_power"] for p in row)


@pytest.mark.django_db
def test_ten_complete_documents_get_power_with_a_small_sample_flag():
    dataset = demo_dataset()
    run = statistics.start(dataset, ScoringRun.Kind.POWER, SMALL_POWER, trigger="test")
    statistics.run_power(run.pk)
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.DONE, run.error
    out = run.outputs
    assert out["coverage"] == "complete" and out["pair_documents"] == [10] * 6
    assert out["small_sample"] is True and out["no_power_pairs"] == []
    assert all(p is not None for row in out["pair_power"] for p in row)


@pytest.mark.django_db
def test_compute_scores_json_carries_the_pairwise_tests_and_common_block(partial, capsys):
    call_command("compute_scores", "demo", "--json", "--resamples", "200")
    out = json.loads(capsys.readouterr().out)
    stored = ScoringRun.objects.get(pk=out["run"]).outputs
    # As stored, with the Holm-adjusted p-values added beside p (leaderboard.with_holm).
    assert out["pairwise"] == with_holm(stored["pairwise"]) and out["pairwise"]["n"][0][1] > 0
    assert {"p_holm", "holm_pairs"} <= out["pairwise"].keys() and out["methods"]["pairwise"]["holm"]["pairs"] == 6
    assert "common" in out and out["common"] == _with_holm(stored["common"])
    # A dataset where coverage differs but some documents are complete has a common block.
    Assignment.objects.filter(hit__summary__document__position=0).first().delete()
    call_command("compute_scores", "demo", "--json", "--resamples", "200")
    again = json.loads(capsys.readouterr().out)
    common = ScoringRun.objects.get(pk=again["run"]).outputs["common"]
    assert again["common"] is None or again["common"] == _with_holm(common)


def _with_holm(common):
    """A stored common block as the JSON gives it: its paired tests with their Holm-adjusted p."""
    return {**common, "pairwise": with_holm(common["pairwise"])} if common and common.get("pairwise") else common


def test_partial_power_uses_each_pairs_shared_documents():
    rng = np.random.default_rng(3)
    scores = np.column_stack([rng.normal(0.6, 0.1, 80), rng.normal(0.4, 0.1, 80), rng.normal(0.5, 0.1, 80)])
    scores[:30, 0] = np.nan  # system 0 misses 30 documents; system 2 misses 60 others
    scores[20:80, 2] = np.nan
    result = power.power_analysis_partial(scores, sizes=[10, 40], n_trials=30, n_resamples=300, rng=0)
    n = dict(zip(map(tuple, np.sort(result.pairs, axis=1).tolist()), result.pair_documents.tolist(), strict=True))
    assert n == {(0, 1): 50, (0, 2): 0, (1, 2): 20}
    powered = ~np.isnan(result.power[0])
    assert powered.tolist() == [n[tuple(sorted(p))] >= 30 for p in result.pairs.tolist()]
    i = next(k for k, p in enumerate(result.pairs.tolist()) if sorted(p) == [0, 1])
    assert tuple(result.pairs[i]) == (0, 1) and result.power[1, i] > 0.9  # a clear difference on 50 documents


def test_partial_correlations_equal_the_complete_ones_on_complete_data():
    rng = np.random.default_rng(5)
    H, X = rng.random((40, 5)), rng.random((40, 5))
    for level in ("summary", "system"):
        for method in ("pearson", "kendall"):
            value, low, high, n = correlation.correlation_ci_partial(H, X, level, method, n_resamples=300, rng=0)
            assert value == pytest.approx(correlation.correlate(H, X, level, method)) and n == 40
            assert low <= high
    H[::2, 0] = np.nan
    value, low, high, n = correlation.correlation_ci_partial(H, X, "system", "kendall", n_resamples=300, rng=0)
    assert n == 40 and low <= high and -1 <= value <= 1
    H[:, 1:] = np.nan  # one system judged: no correlation, no crash
    assert np.isnan(correlation.correlation_ci_partial(H, X, "system", "kendall", n_resamples=50, rng=0)[0])


@pytest.mark.django_db
def test_metric_tests_run_on_the_complete_documents_when_some_system_misses_some(tmp_path, capsys):
    """Coverage differs but 7 documents are complete: correlations on what each uses, the metric
    comparison tests on the complete ones, flagged small."""
    dataset = demo_dataset(name="mostly")
    systems = list(dataset.systems.order_by("name"))
    for position in range(3):
        Assignment.objects.filter(
            hit__summary__document__dataset=dataset,
            hit__summary__document__position=position,
            hit__summary__system=systems[position],
        ).delete()
    lines = [
        json.dumps(
            {
                "example_id": d.external_id,
                "rouge": {s.name: i / 10 for i, s in enumerate(systems)},
                "bleu": {s.name: (d.position * i) % 3 / 3 for i, s in enumerate(systems)},
            }
        )
        for d in dataset.documents.all()
    ]
    path = tmp_path / "mostly.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    import_metric_scores(dataset, path)
    call_command("metric_correlations", "mostly", "--json", "--resamples", "100", "--permutations", "30")
    out = json.loads(capsys.readouterr().out)
    assert out["coverage"] == "shared" and out["complete_documents"] == 7
    assert len(out["significance"]) == 2 and all(t["documents"] == 7 and t["small_sample"] for t in out["significance"])
    assert out["small_sample"] is True
