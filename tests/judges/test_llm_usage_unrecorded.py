"""llm runs stored before a figure of their usage was recorded: `asked` (hits 0028's runs, before
reuse across runs) is derived exactly from the run's stored answers by hits 0030; a run from
before any usage was recorded (before 0028) says "not recorded" on the dataset page, and a count
still unknown reads "asked not recorded" in judge_dataset's line, never a blank."""

from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.urls import reverse

from annotation.models import Dataset
from hits.models import Batch, JudgeRun, LLMAnswer
from scoring.management.commands.judge_dataset import usage_line

from ..conftest import PASSWORD

JUDGES_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "judges.js"
LATEST = MigrationLoader(None).graph.leaf_nodes("hits")

# What hits 0028's code stored for a run: its spending, without `asked` or `reused_earlier`.
SPENT = {
    "calls": 7,
    "retries": 2,
    "replies": 5,
    "replies_without_usage": 0,
    "prompt_tokens": 900,
    "completion_tokens": 90,
    "total_tokens": 990,
    "summaries": 8,
    "answered": 5,
    "reused": 2,
    "resumed": 1,
}


def llm_run(dataset, version: int, usage: dict, answers: int = 0, judge: str = "llm") -> JudgeRun:
    batch = Batch.objects.create(
        dataset=dataset, name=f"machine: {judge} v{version}", kind=Batch.Kind.MACHINE, status=Batch.Status.COMPLETE
    )
    run = JudgeRun.objects.create(batch=batch, judge=judge, model="m", version=version, llm_usage=usage)
    LLMAnswer.objects.bulk_create(LLMAnswer(run=run, key=f"{run.pk}-{i}", probabilities=[0.5]) for i in range(answers))
    return run


@pytest.mark.django_db(transaction=True)
def test_hits_0030_counts_asked_from_the_rows_of_a_run_stored_before_it_was_counted():
    dataset = Dataset.objects.create(name="old-runs")
    uncounted = llm_run(dataset, 1, dict(SPENT), answers=5)
    counted = llm_run(dataset, 2, {**SPENT, "asked": 3, "reused_earlier": 2}, answers=5)
    before_usage = llm_run(dataset, 3, {})  # stored before hits 0028: nothing recorded, nothing to count
    lexical = llm_run(dataset, 1, {}, judge="lexical")
    try:
        call_command("migrate", "hits", "0029_llm_answers_reused_across_runs", verbosity=0)
        call_command("migrate", "hits", LATEST[0][1], verbosity=0)
    finally:
        MigrationExecutor(connection).migrate(LATEST)
    assert JudgeRun.objects.get(pk=uncounted.pk).llm_usage == {**SPENT, "asked": 5}
    assert JudgeRun.objects.get(pk=counted.pk).llm_usage == {**SPENT, "asked": 3, "reused_earlier": 2}
    assert JudgeRun.objects.get(pk=before_usage.pk).llm_usage == {}
    assert JudgeRun.objects.get(pk=lexical.pk).llm_usage == {}


@pytest.mark.django_db
def test_the_page_says_usage_not_recorded_for_an_llm_run_from_before_it_was_kept(client, lead):
    client.login(username=lead.username, password=PASSWORD)
    dataset = Dataset.objects.create(name="old-runs")
    old = llm_run(dataset, 1, {})
    lexical = llm_run(dataset, 1, {}, judge="lexical")
    recorded = llm_run(dataset, 2, {**SPENT, "asked": 5, "reused_earlier": 0}, answers=5)
    rows = {r["id"]: r for r in client.get(reverse("judge_runs_json", args=[dataset.pk])).json()["runs"]}
    assert (rows[old.pk]["llm"], rows[old.pk]["llm_unrecorded"]) == (None, True)
    assert (rows[lexical.pk]["llm"], rows[lexical.pk]["llm_unrecorded"]) == (None, False)
    assert rows[recorded.pk]["llm_unrecorded"] is False and rows[recorded.pk]["llm"]["asked"] == 5
    # The page's script (static/js/judges.js) shows it as such, not as a blank.
    assert '"usage not recorded (a run from before it was kept)"' in JUDGES_JS.read_text(encoding="utf-8")


def test_an_unknown_asked_count_reads_not_recorded_in_the_command_line():
    usage = {**SPENT, "asked": None, "reused_earlier": 0}
    assert usage_line(usage) == (
        "llm: asked not recorded; 7 calls, 2 retries, 2 reused from stored answers; "
        "tokens: 900 prompt, 90 completion, 990 total"
    )
    assert usage_line({**usage, "reused_earlier": 3}).startswith("llm: asked not recorded, 3 reused from earlier runs;")
