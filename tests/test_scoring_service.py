"""The scoring engine on stored judgments: commands, runs, exports, metrics, power."""

import csv
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from hits.models import Worker
from hits.services import review
from scoring.models import ScoringRun
from scoring.runs import statistics
from scoring.runs.selectors import run_part, run_summaries
from scoring.runs.services import compute_scores, current_scores, is_stale

from .test_import_realsumm import label_file_scores

pytestmark = pytest.mark.django_db


def run_json(capsys, *args):
    call_command("compute_scores", *args)
    return json.loads(capsys.readouterr().out)


def test_compute_scores_reproduces_all_25_systems_from_the_label_files(realsumm, realsumm_path, capsys):
    result = run_json(capsys, "realsumm", "--json")
    expected = label_file_scores(realsumm_path)
    assert set(result["systems"]) == set(expected)
    assert result["systems"]["abs_bart_out"]["acu"] == 0.48349483849483854
    for system, value in expected.items():
        got = result["systems"][system]
        assert got["acu"] == pytest.approx(value, abs=1e-12)
        assert got["acu_ci"][0] <= got["acu"] <= got["acu_ci"][1]
        assert got["normalized_acu"] <= got["acu"] + 1e-12
        assert got["normalized_acu_ci"][0] <= got["normalized_acu"] <= got["normalized_acu_ci"][1]
        assert got["length"] > 0
    # One imported annotator per summary: no pairable units, so alpha is undefined (null).
    assert result["alpha"] == {"acu_level": None, "summary_level": None}
    assert result["counts"]["judgments"] == 26400 and result["counts"]["summaries"] == 2500
    run = ScoringRun.objects.get(pk=result["run"])
    assert run.status == "done" and run.inputs["judgments"] == 26400 and run.inputs["last_judgment_id"]
    assert run.parameters["seed"] == 0 and run.seconds > 0


def test_aggregated_scores_csv(realsumm, tmp_path, capsys):
    out = tmp_path / "scores.csv"
    result = run_json(capsys, "realsumm", "--json", "--csv", str(out))
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2500 and list(rows[0]) == ["example_id", "system", "acu", "normalized_acu", "summary_words"]
    bart = [float(r["acu"]) for r in rows if r["system"] == "abs_bart_out"]
    assert np.mean(bart) == pytest.approx(result["systems"]["abs_bart_out"]["acu"], abs=1e-12)


def test_round_option_and_unknown_names(realsumm, capsys):
    round_id = realsumm.batches.get().pk
    assert run_json(capsys, "realsumm", "--round", str(round_id), "--json")["counts"]["judgments"] == 26400
    with pytest.raises(CommandError, match="no round"):
        call_command("compute_scores", "realsumm", "--round", "999999")
    with pytest.raises(CommandError, match="No dataset"):
        call_command("compute_scores", "nope")


def test_same_seed_same_numbers_and_staleness(realsumm):
    first, second = compute_scores(realsumm, seed=3), compute_scores(realsumm, seed=3)
    assert first.outputs["systems"] == second.outputs["systems"]
    assert not is_stale(second, realsumm)
    assert current_scores(realsumm).pk == second.pk
    for worker_id in Worker.objects.filter(provider="expert").values_list("pk", flat=True):
        review.set_excluded(worker_id=worker_id, excluded=True)  # bumps the version of their rounds
    assert is_stale(second, realsumm)
    fresh = current_scores(realsumm)
    assert fresh.pk != second.pk and fresh.outputs["counts"]["judgments"] == 0


def test_crowd_alphas_are_numbers(capsys):
    from hits.services.simulate import simulate_crowd

    from .crowd_data import demo_dataset, published_batch

    dataset = demo_dataset()
    batch = published_batch(dataset)
    simulate_crowd(batch, workers=3, accuracy=0.85, seed=2)
    result = run_json(capsys, "demo", "--round", str(batch.pk), "--json")
    assert 0.3 < result["alpha"]["acu_level"] < 1 and 0.3 < result["alpha"]["summary_level"] < 1
    assert result["counts"]["workers"] == 3


def test_export_judgments_csv(realsumm, realsumm_path, tmp_path):
    out = tmp_path / "judgments.csv"
    call_command("export_judgments", "realsumm", "--output", str(out))
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == ["worker", "example_id", "system", "acu_index", "label"]
    assert len(rows) == 26400
    first_doc = (realsumm_path / "ids.txt").read_text().split("\n")[0]
    bart = [r for r in rows if r["example_id"] == first_doc and r["system"] == "abs_bart_out"]
    assert sorted(int(r["acu_index"]) for r in bart) == list(range(10))
    # Same labels as the file, as a multiset (our index follows sentence order).
    file_labels = (realsumm_path / "labels" / "abs_bart_out.label").read_text().split("\n")[0].split("\t")
    assert sorted(r["label"] for r in bart) == sorted(file_labels)


def metric_file(tmp_path, dataset, rng):
    """'oracle' = human scores plus a little noise; 'noise' = random."""
    run = compute_scores(dataset)
    from annotation.models import Summary

    info = {
        pk: (ext, sys)
        for pk, ext, sys in Summary.objects.filter(document__dataset=dataset).values_list(
            "pk", "document__external_id", "system__name"
        )
    }
    lines = {}
    for pk, score in zip(run_summaries(run)["ids"], run_summaries(run)["acu"], strict=False):
        ext, system = info[pk]
        doc = lines.setdefault(ext, {"example_id": ext, "oracle": {}, "noise": {}})
        doc["oracle"][system] = score + rng.normal(0, 0.01)
        doc["noise"][system] = float(rng.random())
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in lines.values()))
    return path


def test_metric_import_and_correlations(realsumm, tmp_path, capsys):
    path = metric_file(tmp_path, realsumm, np.random.default_rng(0))
    call_command("import_metric_scores", "realsumm", str(path))
    assert "Imported 5000 scores of noise, oracle" in capsys.readouterr().out
    call_command("metric_correlations", "realsumm", "--json", "--resamples", "200", "--permutations", "200")
    result = json.loads(capsys.readouterr().out)
    oracle, noise = result["metrics"]["oracle"], result["metrics"]["noise"]
    assert oracle["system"]["kendall"]["value"] > 0.9 and abs(noise["system"]["pearson"]["value"]) < 0.5
    assert (
        oracle["summary"]["pearson"]["low"]
        <= oracle["summary"]["pearson"]["value"]
        <= oracle["summary"]["pearson"]["high"]
    )
    system_test = next(t for t in result["significance"] if t["level"] == "system")
    assert {system_test["a"], system_test["b"]} == {"noise", "oracle"} and 0 <= system_test["p"] <= 1


def test_a_metric_missing_a_judged_summary_is_named_not_dropped_silently(realsumm, tmp_path, capsys, client, lead):
    """A metric without a score for one judged summary cannot be correlated; it vanished from the
    table and the command's output while the page listed it as stored."""
    from django.urls import reverse

    path = metric_file(tmp_path, realsumm, np.random.default_rng(0))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    del lines[3]["noise"][next(iter(lines[3]["noise"]))]  # one summary without a noise score
    path.write_text("\n".join(json.dumps(v) for v in lines))
    call_command("import_metric_scores", "realsumm", str(path))
    capsys.readouterr()
    call_command("metric_correlations", "realsumm", "--json", "--resamples", "50", "--permutations", "50")
    result = json.loads(capsys.readouterr().out)
    assert list(result["metrics"]) == ["oracle"] and result["left_out"] == {"noise": 1}
    call_command("metric_correlations", "realsumm", "--resamples", "50", "--permutations", "50")
    assert "noise: left out, no score for 1 judged summaries" in capsys.readouterr().out
    client.force_login(lead)
    page = client.get(reverse("dashboard_metrics", args=[realsumm.pk])).content.decode()
    assert 'id="metrics-left-out"' in page and "noise (1 missing)" in page


def test_an_undefined_correlation_reads_as_a_dash_on_the_metrics_page(realsumm, tmp_path, client, lead):
    """A metric constant over every summary has no correlation: the table said "[, ]" with no value."""
    import re

    from django.urls import reverse

    path = metric_file(tmp_path, realsumm, np.random.default_rng(0))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        line["noise"] = dict.fromkeys(line["noise"], 0.5)  # constant: no correlation is defined
    path.write_text("\n".join(json.dumps(v) for v in lines))
    call_command("import_metric_scores", "realsumm", str(path))
    call_command("metric_correlations", "realsumm", "--resamples", "50", "--permutations", "50")
    client.force_login(lead)
    page = client.get(reverse("dashboard_metrics", args=[realsumm.pk])).content.decode()
    table = page[page.index('id="metric-table"') : page.index("</table>", page.index('id="metric-table"'))]
    system = re.findall(r"<tr><td>noise</td><td>system</td>.*?</tr>", table)
    assert len(system) == 1 and "[, ]" not in table
    assert system[0].count(">–</span>") == 3, system
    # Summary level: RoSE counts a NaN row as 0, but with every row NaN there is no correlation
    # to publish; it read 0.000 [0.000, 0.000].
    summary = re.findall(r"<tr><td>noise</td><td>summary</td>.*?</tr>", table)
    assert len(summary) == 1 and summary[0].count(">–</span>") == 3 and "0.000" not in summary[0], summary


def test_the_metrics_page_puts_each_correlation_under_its_own_column(realsumm, tmp_path, capsys, client, lead):
    """The table's header reads Pearson, Spearman, Kendall, but its cells followed the keys of the
    run's outputs as PostgreSQL's jsonb returns them (kendall, pearson, spearman): the Kendall tau
    stood under "Pearson", the Pearson r under "Spearman" and the Spearman rho under "Kendall"."""
    import re

    from django.urls import reverse

    path = metric_file(tmp_path, realsumm, np.random.default_rng(0))
    call_command("import_metric_scores", "realsumm", str(path))
    call_command("metric_correlations", "realsumm", "--json", "--resamples", "50", "--permutations", "50")
    figures = json.loads(capsys.readouterr().out.splitlines()[-1])["metrics"]
    client.force_login(lead)
    page = client.get(reverse("dashboard_metrics", args=[realsumm.pk])).content.decode()
    table = page[page.index('id="metric-table"') : page.index("</table>", page.index('id="metric-table"'))]
    header = re.findall(r'<th class="num">(\w+)</th>', table)
    assert header == ["Pearson", "Spearman", "Kendall"]
    for metric, levels in figures.items():
        for level, methods in levels.items():
            (row,) = re.findall(rf"<tr><td>{metric}</td><td>{level}</td>(.*?)</tr>", table)
            cells = [float(v) for v in re.findall(r'<td class="num">(-?[0-9.]+)', row)]
            expected = [methods[m.lower()]["value"] for m in header]
            assert cells == pytest.approx(expected, abs=5.1e-4), (metric, level, row)


def test_metric_import_errors_write_nothing(realsumm, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"example_id": "cnndm1017", "m": {"ghost": 0.5}}\n')
    with pytest.raises(CommandError, match="bad.jsonl, line 1: unknown system 'ghost'"):
        call_command("import_metric_scores", "realsumm", str(bad))
    from scoring.models import MetricScore

    assert not MetricScore.objects.exists()


def test_power_run_reports_bucket_power(realsumm):
    run = statistics.start(
        realsumm, ScoringRun.Kind.POWER, {"sizes": [10, 100], "n_trials": 40, "n_resamples": 400, "seed": 1}
    )
    run = statistics.run_power(run.pk)
    assert run.status == "done", run.error
    buckets = run.outputs["buckets"]
    assert len(buckets) == 5 and sum(b["pairs"] for b in buckets) == 25 * 24 // 2
    # More documents, more power; larger differences, more power.
    assert all(b["power"][1] >= b["power"][0] for b in buckets)
    assert buckets[-1]["power"][1] >= buckets[0]["power"][1]


@pytest.mark.parametrize("spammers", [0, 1])
def test_alpha_without_flagged_workers_is_computed_from_the_workers_left(spammers):
    """With nobody flagged the run reuses its own alphas; with a flagged spammer they differ,
    and both equal the alphas computed afresh over the judgments of the workers left."""
    from hits.models import Assignment
    from hits.services.simulate import simulate_crowd
    from scoring.runs import data
    from scoring.stats import agreement

    from .crowd_data import demo_dataset, published_batch

    dataset = demo_dataset()
    batch = published_batch(dataset)
    simulate_crowd(batch, workers=3, accuracy=0.9, spammers=spammers, seed=4)
    # only gold flags a worker: the spammers' gold record, as gold HITs store it (0 right of 10)
    Assignment.objects.filter(hit__batch=batch, worker__external_id__contains="spam").update(
        gold_correct=0, gold_total=10
    )
    run = compute_scores(dataset, batch, n_resamples=100)
    outputs, table = run.outputs, run_part(run, "workers")
    flagged = {r["worker_id"] for r in table["rows"] if r["flags"]}
    assert table["flagged"] == len(flagged) and bool(flagged) == bool(spammers)

    everyone = data.load_judgments(dataset, batch, include_excluded=True)
    left = everyone.subset(~np.isin(everyone.worker, list(flagged)) & ~everyone.excluded)
    acu_counts = data.load_summaries(dataset).acu_count[data.load_summaries(dataset).index(left.summary)]
    expected = {
        "acu_level": agreement.acu_level_alpha(left.summary, left.acu, left.worker, left.present),
        "summary_level": agreement.summary_level_alpha(
            left.summary, left.acu, left.worker, left.present, acu_counts=acu_counts
        ),
    }
    assert table["alpha_without_flagged"] == pytest.approx(expected, abs=1e-12)
    assert (table["alpha_without_flagged"] == outputs["alpha"]) == (not spammers)


def test_each_alpha_comes_with_the_units_behind_it(client, lead):
    """A `pairs` round: follow-up workers judge only open ACUs, so only the summaries two workers
    judged whole (its gold HITs) carry the summary-level alpha. The overview and the API showed the
    alphas beside RoSE's without saying how few units were behind them."""
    from collections import defaultdict

    from django.urls import reverse

    from hits.allocation.policy import PAIRS
    from hits.models import Judgment
    from hits.services.batches import publish_batch
    from hits.services.simulate import simulate_crowd

    from .crowd_data import batch_of, demo_dataset

    dataset = demo_dataset()
    batch = publish_batch(batch_of(dataset, allocation=PAIRS, gold_share=0.2, seed=7))
    simulate_crowd(batch, workers=4, accuracy=0.8, seed=3)
    run = compute_scores(dataset, batch, n_resamples=50)

    labels, acus, by_worker = defaultdict(int), defaultdict(set), defaultdict(set)
    for summary, acu, worker in Judgment.objects.filter(assignment__hit__batch=batch).values_list(
        "assignment__hit__summary_id", "acu_id", "assignment__worker_id"
    ):
        labels[summary, acu] += 1
        acus[summary].add(acu)
        by_worker[summary, worker].add(acu)
    whole = defaultdict(int)
    for (summary, _), judged in by_worker.items():
        whole[summary] += judged == acus[summary]
    expected = {
        "acu_level": sum(n >= 2 for n in labels.values()),
        "summary_level": sum(n >= 2 for n in whole.values()),
    }
    assert run.outputs["alpha_units"] == expected
    assert 0 < expected["summary_level"] < len(acus)  # not every summary has two whole scores

    client.force_login(lead)
    page = client.get(reverse("dashboard", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    assert f'id="alpha-summary-units">{expected["summary_level"]}<' in page
    assert f'id="alpha-acu-units">{expected["acu_level"]}<' in page
    client.logout()
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=lead).key
    body = client.get(
        f"/api/datasets/{dataset.pk}/agreement/?round={batch.pk}", HTTP_AUTHORIZATION=f"Token {token}"
    ).json()
    assert body["alpha_units"] == expected
    scores = client.get(
        f"/api/datasets/{dataset.pk}/scores/?round={batch.pk}", HTTP_AUTHORIZATION=f"Token {token}"
    ).json()
    assert scores["alpha_units"] == expected
