"""draft_report on a dataset with human ACUs and labels, and the human-unit budget on one being written."""

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import ACU, DraftJob, Reference, ReferenceSentence
from scoring.drafts.report import build_tables, human_scores, report
from scoring.drafts.unit_budget import service as budget_service
from scoring.machine.judges import get_judge

from .authoring_data import unauthored_dataset
from .conftest import PASSWORD
from .crowd_data import demo_dataset

pytestmark = pytest.mark.django_db


def test_report_figures_are_consistent(capsys):
    dataset = demo_dataset()
    out = report(dataset, drafter="rules", judge_name="lexical", budgets=(0.0, 0.5, 1.0), random_draws=3)
    assert out["documents"] == 10 and out["systems"] == 4
    assert out["sentences"] == ReferenceSentence.objects.filter(reference__document__dataset=dataset).count()
    m = out["matching"]
    assert m["human_acus"] == ACU.objects.filter(reference__document__dataset=dataset).count()
    assert 0 < m["matched"] <= min(m["drafts"], m["human_acus"])
    assert m["precision"] == pytest.approx(m["matched"] / m["drafts"])
    # 0% human is the all-drafts score, 100% the all-human-ACU machine score
    none, half, every = out["budget"]
    assert none["regressor"] == pytest.approx(out["lite2x"]["all_drafts"])
    assert every["regressor"] == pytest.approx(out["lite2x"]["all_human_acus"])
    assert every["random"] == pytest.approx(out["lite2x"]["all_human_acus"])
    assert half["human_sentences"] == round(out["sentences"] / 2)
    assert 0 <= out["lite2x"]["sentence_error_mean"] <= 1

    call_command(
        "draft_report",
        dataset.name,
        "--judge",
        "lexical",
        "--budget",
        "0.5",
        "--random-draws",
        "2",
        "--json",
        "--agreement-with",
        "rules",
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed["matching"] == m and [p["human_share"] for p in printed["budget"]] == [0.5]
    assert printed["regressor"]["features"][-1] == "agreement_rules"


def test_human_scores_are_the_imported_acu_scores():
    from scoring.runs.summary_scores import system_scores  # the app's own ACU scores

    dataset = demo_dataset()
    tables = build_tables(dataset, drafter="rules", judge=get_judge("lexical"))
    X = human_scores(dataset, tables)
    assert X.shape == (10, 4) and not np.isnan(X).any()
    means = {s.system: s.acu for s in system_scores(dataset)}
    assert X.mean(axis=0) == pytest.approx([means[n] for n in tables.system_names])


def test_report_refuses_bad_input(tmp_path):
    unauthored_dataset(tmp_path)
    with pytest.raises(CommandError, match="no human ACUs"):
        call_command("draft_report", "to-write", "--judge", "lexical")
    with pytest.raises(CommandError, match="between 0 and 1"):
        call_command("draft_report", "to-write", "--budget", "50")
    with pytest.raises(CommandError, match="No dataset"):
        call_command("draft_report", "nope")


def test_budget_splits_sentences_fills_machine_units_and_assigns_authors(tmp_path, author):
    demo_dataset()  # training data: human ACUs and summaries
    target = unauthored_dataset(tmp_path, documents=4)
    result = budget_service.apply_budget(dataset=target, share=0.5, judge_name="lexical", author_ids=[author.pk])
    sentences = ReferenceSentence.objects.filter(reference__document__dataset=target)
    assert "trained on" in result["method"] and "demo" in result["method"]
    assert result["human"] == round(sentences.count() / 2) == sentences.filter(budget="human").count()
    assert sentences.filter(budget="machine").count() == result["machine"]
    assert not sentences.filter(predicted_error__isnull=True).exists()
    machine = ACU.objects.filter(reference__document__dataset=target, machine=True)
    assert machine.count() == result["machine_units"] > 0
    assert set(machine.values_list("sentence__budget", flat=True)) == {"machine"}
    assert not ACU.objects.filter(sentence__budget="human").exists()
    wanted = set(sentences.filter(budget="human").values_list("reference_id", flat=True))
    assert set(Reference.objects.filter(writer=author).values_list("pk", flat=True)) == wanted
    # all human now: the machine units go again
    again = budget_service.apply_budget(dataset=target, share=1.0, judge_name="lexical")
    assert again["removed_machine_units"] == result["machine_units"] and again["machine_units"] == 0
    assert not ACU.objects.filter(reference__document__dataset=target).exists()


def test_budget_without_training_data_says_so_and_the_page_posts_it(tmp_path, client, lead, eager_celery):
    target = unauthored_dataset(tmp_path, documents=2)
    client.login(username=lead.username, password=PASSWORD)
    url = reverse("authoring_budget", args=[target.pk])
    resp = client.post(url, {"percent": "40", "drafter": "rules", "judge": "lexical"}, follow=True)
    text = resp.content.decode()
    assert "Budget 40% started" in text and "no dataset with human ACUs" in text
    job = DraftJob.objects.get(dataset=target, kind="budget")
    assert job.status == "done" and job.result["human"] == round(0.4 * job.result["sentences"])
    assert ReferenceSentence.objects.filter(reference__document__dataset=target, budget="machine").exists()
    resp = client.post(url, {"percent": "lots"}, follow=True)
    assert "as a percentage" in resp.content.decode()
    resp = client.post(url, {"percent": "400"}, follow=True)
    assert "between 0% and 100%" in resp.content.decode()
    assert DraftJob.objects.filter(kind="budget").count() == 1
    assert "Human-unit budget" in client.get(reverse("authoring_overview", args=[target.pk])).content.decode()


def _unit_file(path, lines):
    path.write_text("\n".join("\t".join(units) for units in lines) + "\n", encoding="utf-8")
    return path


def test_against_a_pyramid_unit_file_compares_its_units_with_the_human_acus(tmp_path, capsys):
    from annotation.models import Reference

    dataset = demo_dataset()
    references = Reference.objects.filter(document__dataset=dataset).order_by("document__position")
    human = [list(r.acus.filter(machine=False).order_by("position").values_list("text", flat=True)) for r in references]
    # the human ACUs themselves: every unit matched, and scored like them
    same = _unit_file(tmp_path / "same.txt", human)
    out = report(dataset, judge_name="lexical", budgets=(), against=same)
    a = out["against"]
    assert a["matching"]["human_acus"] == sum(map(len, human)) == a["matching"]["drafts"]
    assert a["matching"]["recall"] == pytest.approx(1.0) and a["matching"]["precision"] == pytest.approx(1.0)
    assert a["units_per_reference"] == pytest.approx(sum(map(len, human)) / len(human))
    assert a["all_units"] == pytest.approx(out["lite2x"]["all_human_acus"])
    # the first unit of each reference only: recall drops to that share, precision stays 1
    first = _unit_file(tmp_path / "first.txt", [units[:1] for units in human])
    a = report(dataset, judge_name="lexical", budgets=(), against=first)["against"]["matching"]
    assert a["matched"] == len(human) and a["recall"] == pytest.approx(len(human) / sum(map(len, human)))

    call_command("draft_report", dataset.name, "--judge", "lexical", "--budget", "0", "--against", str(first))
    printed = capsys.readouterr().out
    assert f"against {first}: precision 1.0000" in printed


def test_against_refuses_a_file_that_does_not_fit(tmp_path):
    dataset = demo_dataset()
    short = _unit_file(tmp_path / "short.txt", [["One unit."]])
    with pytest.raises(CommandError, match="has 1 lines but dataset .demo. has 10 references"):
        call_command("draft_report", dataset.name, "--judge", "lexical", "--against", str(short))
    with pytest.raises(CommandError, match="Cannot read the unit file"):
        call_command("draft_report", dataset.name, "--judge", "lexical", "--against", str(tmp_path / "missing.txt"))


def test_errors_lists_the_sentences_where_drafts_and_human_acus_differ_most(capsys):
    dataset = demo_dataset()
    out = report(dataset, judge_name="lexical", budgets=(), worst_sentences=3)
    rows = out["sentence_errors"]
    assert len(rows) == 3 and rows[0]["errors"] >= rows[1]["errors"] >= rows[2]["errors"] > 0
    for row in rows:
        assert len(row["unmatched_drafts"]) + len(row["missed_human_acus"]) == row["errors"]
        assert set(row["unmatched_drafts"]) <= set(row["drafts"])
        assert set(row["missed_human_acus"]) <= set(row["human_acus"])
    call_command("draft_report", dataset.name, "--judge", "lexical", "--budget", "0", "--errors", "2")
    printed = capsys.readouterr().out
    assert printed.count("missed human ACUs:") == 2 and rows[0]["sentence"] in printed


def test_report_against_a_file_with_intervals_on_a_range_of_documents(tmp_path, capsys):
    """Issue 44: `--documents A:B` and `--against FILE` give both unit sets' precision, recall,
    F1 and summary-level Pearson with bootstrap intervals over documents, and their difference."""
    from scoring.drafts.comparison import FIGURES

    dataset = demo_dataset()
    references = Reference.objects.filter(document__dataset=dataset).order_by("document__position")
    lines = [
        "\t".join(
            ACU.objects.filter(reference=r, machine=False)
            .order_by("sentence__position", "position")
            .values_list("text", flat=True)
        )
        for r in references
    ]
    units = tmp_path / "units.txt"
    units.write_text("\n".join(lines), encoding="utf-8")
    out = report(
        dataset, drafter="rules", judge_name="lexical", budgets=(), against=units, documents=range(2, 8), resamples=500
    )
    assert out["documents"] == 6
    c = out["against"]["comparison"]
    assert c["documents"] == 6 and c["resamples"] == 500
    # the file holds the human ACUs themselves: every one matched, on every resample
    assert c["file"]["f1"] == {"value": 1.0, "ci": [1.0, 1.0]}
    for side in ("drafts", "file"):
        for k in FIGURES:
            low, high = c[side][k]["ci"]
            assert low <= c[side][k]["value"] <= high
    assert c["drafts"]["f1"]["value"] == pytest.approx(out["matching"]["f1"])
    assert c["drafts"]["summary_pearson"]["value"] == pytest.approx(out["lite2x"]["all_drafts"]["summary_pearson"])
    assert c["difference"]["f1"]["value"] == pytest.approx(c["drafts"]["f1"]["value"] - 1.0)
    assert c["difference"]["f1"]["ci"][1] < 0  # the drafts find fewer than all the human ACUs

    call_command(
        "draft_report",
        dataset.name,
        "--judge",
        "lexical",
        "--budget",
        "0",
        "--against",
        str(units),
        "--documents",
        "2:8",
        "--resamples",
        "200",
        "--json",
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed["documents"] == 6 and printed["against"]["comparison"]["resamples"] == 200
    for bad in ("8:2", "two:eight"):
        with pytest.raises(CommandError, match="--documents takes START:END"):
            call_command("draft_report", dataset.name, "--judge", "lexical", "--documents", bad)


def test_report_refuses_counts_and_ranges_it_cannot_use(capsys):
    """Bad counts and a range past the dataset's documents are a clear message; one document
    gives the matching, with a note instead of a budget curve (it needs two documents to cross-fit)."""
    dataset = demo_dataset()
    for flag, value in (("--errors", "-1"), ("--resamples", "0"), ("--random-draws", "0")):
        with pytest.raises(CommandError, match=f"{flag} takes"):
            call_command("draft_report", dataset.name, "--judge", "lexical", flag, value)
    with pytest.raises(CommandError, match="has documents 0 to 9"):
        call_command("draft_report", dataset.name, "--judge", "lexical", "--documents", "20:30")
    call_command("draft_report", dataset.name, "--judge", "lexical", "--documents", "0:1", "--budget", "0.5")
    printed = capsys.readouterr().out
    assert "1 documents" in printed and "matching" in printed
    assert "needs two or more documents" in printed


def test_the_budget_ranks_sentences_by_the_features_its_regressor_learned():
    """The budget's regressor is trained on `feature_matrix` (the drafts' score in each system
    summary: the mean over the sentence's drafts); the sentences it ranks get the same features,
    not the spread over every (draft, summary) pair."""
    from annotation.drafting import get_drafter
    from scoring.drafts.report import feature_matrix
    from scoring.drafts.unit_budget import features

    dataset = demo_dataset()
    judge = get_judge("lexical")
    tables = build_tables(dataset, drafter="rules", judge=judge)
    sentences = list(
        ReferenceSentence.objects.filter(pk__in=tables.sentence_ids)
        .select_related("reference__document")
        .order_by("reference__document__position", "position")
    )
    drafts = budget_service._draft_sentences(dataset, sentences, get_drafter("rules"))
    assert drafts == tables.drafts and any(len(d) > 1 for d in drafts)
    scores = budget_service._draft_scores(sentences, drafts, judge)
    ranked = np.array(
        [features.sentence_features(s.text, d, sc) for s, d, sc in zip(sentences, drafts, scores, strict=True)]
    )
    assert ranked == pytest.approx(feature_matrix(tables))
