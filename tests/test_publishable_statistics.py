"""Issue 12 on stored data: partial collections, one-document pilots, metric direction, untagged
pyramid folders, reference lengths, the normalization alpha and Dawid-Skene in compute_scores."""

import json
import shutil

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Dataset, Reference
from hits.models import Assignment, Judgment
from hits.services.dataset_import import import_dataset
from scoring.runs.selectors import run_summaries
from scoring.runs.services import compute_scores

from .crowd_data import scored
from .test_import_realsumm import label_file_scores

pytestmark = pytest.mark.django_db

FLATTERING = (
    "Twenty-times champion jump jockey Sir Anthony McCoy has described having a statue put up in his "
    "honour at Cheltenham as 'flattering.'"
)


def drop_documents(dataset, system: str, count: int):
    """Remove the judgments of ``system`` on the first ``count`` documents (a collection in progress)."""
    assignments = Assignment.objects.filter(
        hit__summary__system__name=system,
        hit__summary__document__dataset=dataset,
        hit__summary__document__position__lt=count,
    )
    Judgment.objects.filter(assignment__in=assignments).delete()
    assignments.delete()


def run_json(capsys, *args):
    call_command(*args)
    return json.loads(capsys.readouterr().out)


# --- 2. partial data --------------------------------------------------------------------------


def test_scores_and_cis_agree_when_one_system_misses_50_documents(realsumm, capsys):
    drop_documents(realsumm, "abs_bart_out", 50)
    result = run_json(capsys, "compute_scores", "realsumm", "--json", "--resamples", "2000")
    systems = result["systems"]
    outside = [name for name, s in systems.items() if not s["acu_ci"][0] <= s["acu"] <= s["acu_ci"][1]]
    assert outside == []  # main: CIs from the 50 common documents, scores from all (here 1 outside)
    for name, s in systems.items():
        assert s["normalized_acu_ci"][0] <= s["normalized_acu"] <= s["normalized_acu_ci"][1], name
    assert systems["abs_bart_out"]["documents"] == 50
    assert all(s["documents"] == 100 for name, s in systems.items() if name != "abs_bart_out")
    run_outputs = compute_scores(realsumm, n_resamples=500).outputs
    pairwise = run_outputs["pairwise"]
    i, j = pairwise["systems"].index("abs_bart_out"), pairwise["systems"].index("ext_bart_out")
    k = pairwise["systems"].index("abs_t5_out_11B")
    assert pairwise["n"][i][j] == 50 and pairwise["n"][j][k] == 100
    assert run_outputs["counts"]["complete_documents"] == 50 and run_outputs["counts"]["documents_differ"]
    common = run_outputs["common"]
    assert common["documents"] == 50 and set(common["systems"]) == set(systems)


def test_leaderboard_says_documents_differ_and_offers_common_ones(realsumm, client, lead, eager_celery):
    drop_documents(realsumm, "abs_bart_out", 50)
    scored(realsumm)
    client.force_login(lead)
    page = client.get(reverse("dashboard_systems", args=[realsumm.pk])).content.decode()
    assert "judged on different documents" in page
    assert "?documents=common" in page
    assert 'data-n="50"' in page  # n of the pairs with abs_bart_out
    common = client.get(reverse("dashboard_systems", args=[realsumm.pk]) + "?documents=common").content.decode()
    assert "the 50 documents judged for every system" in common


# --- 3. ties and small samples ----------------------------------------------------------------


def tiny_rose(tmp_path, documents=1):
    lines = []
    for d in range(documents):
        lines.append(
            json.dumps(
                {
                    "example_id": f"d{d}",
                    "source": "The source text.",
                    "reference": "One fact. Another fact.",
                    "reference_acus": ["one fact", "another fact", "a third"],
                    "system_outputs": {s: f"summary {s}" for s in ("a", "b", "c")},
                    "annotations": {s: {"acu_labels": [1, 1, 0]} for s in ("a", "b", "c")},
                }
            )
        )
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(lines))
    import_dataset(path, name="tiny", fmt="rose")
    return Dataset.objects.get(name="tiny")


def test_identical_scores_on_one_document_are_not_significant(tmp_path, client, lead, eager_celery):
    dataset = tiny_rose(tmp_path)
    out = compute_scores(dataset, n_resamples=500).outputs
    p = np.array(out["pairwise"]["p"], dtype=float)
    assert (p[~np.eye(3, dtype=bool)] == 1.0).all()
    client.force_login(lead)
    page = client.get(reverse("dashboard_systems", args=[dataset.pk])).content.decode()
    assert '<td class="sig yes"' not in page and '<td class="sig strong"' not in page
    assert page.count('<td class="sig no"') == 6
    assert "fewer than 30 documents" in page
    assert "degenerate" in page  # the interval [0.667, 0.667]


# --- 1. metric comparison direction -------------------------------------------------------------


def test_metric_comparison_names_the_better_metric(realsumm, tmp_path, capsys):
    from annotation.models import Summary

    run = compute_scores(realsumm, n_resamples=200)
    info = {
        pk: (ext, s)
        for pk, ext, s in Summary.objects.filter(document__dataset=realsumm).values_list(
            "pk", "document__external_id", "system__name"
        )
    }
    rng = np.random.default_rng(0)
    lines = {}
    for pk, score in zip(run_summaries(run)["ids"], run_summaries(run)["acu"], strict=False):
        ext, system = info[pk]
        doc = lines.setdefault(ext, {"example_id": ext, "aaa_random": {}, "oracle": {}})
        doc["aaa_random"][system] = float(rng.random())  # first in name order, and worse
        doc["oracle"][system] = score + rng.normal(0, 0.05)
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in lines.values()))
    call_command("import_metric_scores", "realsumm", str(path))
    capsys.readouterr()
    result = run_json(
        capsys,
        "metric_correlations",
        "realsumm",
        "--json",
        "--resamples",
        "200",
        "--permutations",
        "200",
        "--method",
        "pearson",
    )
    tests = {t["level"]: t for t in result["significance"]}
    assert set(tests) == {"summary", "system"}
    for t in tests.values():
        assert t["better"] == "oracle" and t["worse"] == "aaa_random" and t["method"] == "pearson"
        assert t["p_permutation"] < 0.05 and t["p_bootstrap"] < 0.05 and t["delta"] > 0


# --- 4 and 5. untagged pyramid references, lengths as given ---------------------------------------


def untagged_copy(realsumm_path, tmp_path):
    """The REALSumm folder with its references as plain paragraphs (as PyrXSum ships them)."""
    root = tmp_path / "untagged"
    shutil.copytree(realsumm_path, root)
    lines = (root / "references.txt").read_text(encoding="utf-8").split("\n")
    plain = []
    for line in lines:
        plain.append(" ".join(line.replace("<t>", " ").replace("</t>", " ").split()))
    plain[0] = FLATTERING
    (root / "references.txt").write_text("\n".join(plain), encoding="utf-8")
    return root


def test_pyramid_folder_without_t_tags_imports_and_reproduces_label_scores(realsumm_path, tmp_path, capsys):
    root = untagged_copy(realsumm_path, tmp_path)
    call_command("import_dataset", str(root), "--name", "untagged")
    assert "100 documents, 25 systems, 2500 summaries, 1056 ACUs" in capsys.readouterr().out
    result = run_json(capsys, "compute_scores", "untagged", "--json", "--resamples", "200")
    expected = label_file_scores(root)
    for system, value in expected.items():
        assert result["systems"][system]["acu"] == pytest.approx(value, abs=1e-12)
    assert result["systems"]["abs_bart_out"]["acu"] == 0.48349483849483854
    first = Reference.objects.get(document__dataset__name="untagged", document__position=0)
    assert first.word_count == 21
    assert [s.text for s in first.sentences.order_by("position")] == [FLATTERING]


def test_rose_reference_length_is_the_text_as_given(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(
        json.dumps(
            {
                "example_id": "x1",
                "source": "src",
                "reference": FLATTERING,
                "reference_acus": ["McCoy has a statue"],
                "system_outputs": {"s": "McCoy statue."},
            }
        )
    )
    import_dataset(path, name="one", fmt="rose")
    reference = Reference.objects.get(document__dataset__name="one")
    assert reference.word_count == 21
    assert all(any(c.isalnum() for c in s.text) for s in reference.sentences.all())


def test_tagged_realsumm_keeps_its_sentences(realsumm):
    first = Reference.objects.filter(document__dataset=realsumm).order_by("document__position").first()
    assert first.sentences.count() == 3


# --- 6. the normalization strength ---------------------------------------------------------------


def test_import_sets_alpha_and_refuses_nonsense(realsumm_path, capsys):
    call_command("import_dataset", str(realsumm_path), "--name", "xsum-like", "--alpha", "5")
    assert Dataset.objects.get(name="xsum-like").length_alpha == 5.0
    for bad in ("0", "-1", "nan", "inf"):
        with pytest.raises(CommandError, match="alpha"):
            call_command("import_dataset", str(realsumm_path), "--name", f"bad{bad}", "--alpha", bad)
    assert not Dataset.objects.filter(name__startswith="bad").exists()


def test_alpha_change_on_the_dataset_page_recomputes_and_grid_edge_is_reported(realsumm, client, lead, eager_celery):
    first = compute_scores(realsumm, n_resamples=200)
    norm = first.outputs["length_normalization"]
    assert norm["at_grid_edge"] in (None, "low", "high")
    client.force_login(lead)
    response = client.post(reverse("dataset_alpha", args=[realsumm.pk]), {"length_alpha": "5"})
    assert response.status_code == 302
    realsumm.refresh_from_db()
    assert realsumm.length_alpha == 5.0
    bad = client.post(reverse("dataset_alpha", args=[realsumm.pk]), {"length_alpha": "-3"}, follow=True)
    assert "alpha" in bad.content.decode() and Dataset.objects.get(pk=realsumm.pk).length_alpha == 5.0
    from scoring.runs.services import current_scores

    fresh = current_scores(realsumm)
    assert fresh.pk != first.pk and fresh.parameters["length_alpha"] == 5.0


def test_grid_edge_shows_on_the_systems_page(realsumm, client, lead, eager_celery):
    run = compute_scores(realsumm, n_resamples=200)
    run.outputs["length_normalization"]["at_grid_edge"] = "high"
    run.save()
    client.force_login(lead)
    page = client.get(reverse("dashboard_systems", args=[realsumm.pk])).content.decode()
    assert "may lie beyond the grid" in page


# --- Dawid-Skene in compute_scores ------------------------------------------------------------------


def test_compute_scores_with_dawid_skene(realsumm, capsys):
    majority = run_json(capsys, "compute_scores", "realsumm", "--json", "--resamples", "200")
    ds = run_json(capsys, "compute_scores", "realsumm", "--json", "--resamples", "200", "--aggregation", "dawid-skene")
    assert ds["aggregation"] == "dawid-skene" and majority["aggregation"] == "majority"
    # One expert per summary: Dawid-Skene has nothing to reweigh and keeps the expert's labels.
    for name, s in majority["systems"].items():
        assert ds["systems"][name]["acu"] == pytest.approx(s["acu"], abs=1e-12)
    with pytest.raises(CommandError):
        call_command("compute_scores", "realsumm", "--aggregation", "mean")
