"""Durable llm judge runs against the stand-in endpoint (tests/judges/llm_standin.py): the
answers are stored a chunk at a time, an interrupted run (endpoint outage, Ctrl-C) resumes and
asks only the summaries without an answer, ending with the same figures as an uninterrupted run;
answers are keyed by what determines them (model, prompt, texts); token usage is summed per run,
a missing `usage` shown as unknown."""

import hashlib
import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import ACU
from hits.models import JudgeRun, LLMAnswer, MachineJudgment
from scoring.machine.judges import llm as llm_judge

from ..conftest import PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.portable]

SUMMARIES = 24  # 6 documents x 4 systems, 5 ACUs each: 120 pairs


def judge(*args, fails=False):
    out, err = StringIO(), StringIO()
    if fails:
        with pytest.raises(CommandError) as raised:
            call_command("judge_dataset", "tiny", "--judge", "llm", *args, stdout=out, stderr=err)
        return str(raised.value), err.getvalue()
    call_command("judge_dataset", "tiny", "--judge", "llm", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def judgments(run):
    return {
        (s, a): (raw, p)
        for s, a, raw, p in MachineJudgment.objects.filter(run=run).values_list(
            "summary_id", "acu_id", "raw", "probability"
        )
    }


def test_an_interrupted_run_resumes_asking_only_what_it_lacks_and_ends_as_an_uninterrupted_one(tiny, endpoint):
    """A lab's llm run that failed near its end (an endpoint outage) kept nothing: starting it
    again paid for every summary again."""
    endpoint.fail_after = 6  # three chunks answered, the fourth's first question meets the outage
    message, _ = judge("--json", fails=True)
    run = JudgeRun.objects.get()
    assert run.status == "failed" and "upstream down" in message
    assert LLMAnswer.objects.filter(run=run).count() == 6
    asked_before = [a["prompt"] for a in endpoint.answered]

    endpoint.fail_after = None
    out, err = judge("--json")
    assert err.strip() == f"Resuming run {run.pk}: 6 of 24 summaries already answered"
    result = json.loads(out)
    assert result["id"] == run.pk and result["status"] == "done" and result["pairs"] == 120
    asked_after = [a["prompt"] for a in endpoint.answered[6:]]
    assert len(asked_after) == SUMMARIES - 6 and not set(asked_after) & set(asked_before)
    usage = result["llm"]
    # 24 answers, the three requests of the failed question (two retries), one resume.
    assert (usage["calls"], usage["retries"], usage["replies"], usage["resumed"]) == (27, 2, 24, 1)
    assert (usage["summaries"], usage["answered"], usage["reused"]) == (24, 24, 6)

    assert (usage["asked"], usage["reused_earlier"]) == (24, 0)

    # The same settings once more, uninterrupted, asking all 24 (--fresh-answers): the same figures.
    out, _ = judge("--json", "--fresh-answers")
    again = json.loads(out)
    assert again["id"] != run.pk and again["version"] == 2 and len(endpoint.answered) == 24 + SUMMARIES
    assert again["llm"]["calls"] == 24 and again["llm"]["reused"] == 0 and again["llm"]["asked"] == 24
    assert judgments(run) == judgments(JudgeRun.objects.get(pk=again["id"]))
    assert result["classification"] == again["classification"] and result["calibration"] == again["calibration"]


def test_ctrl_c_stores_the_answers_received_and_the_same_command_resumes(tiny, endpoint, monkeypatch):
    real, calls = llm_judge.chat, []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5:  # mid-chunk: the chunk's first answer is stored with the rest
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(llm_judge, "chat", interrupted)
    message, _ = judge(fails=True)
    run = JudgeRun.objects.get()
    assert (
        message
        == f"Interrupted: judge run {run.pk} stopped with 4 of 24 summaries answered; run the same command again to resume it."
    )
    assert run.status == "failed" and LLMAnswer.objects.filter(run=run).count() == 4
    out, _ = judge()
    assert out.startswith(f"Resuming run {run.pk}: 4 of 24 summaries already answered\n")
    assert len(endpoint.answered) == SUMMARIES
    assert JudgeRun.objects.get(pk=run.pk).status == "done"


def test_a_changed_model_or_text_is_asked_again(tiny, endpoint, settings):
    endpoint.fail_after = 6
    judge(fails=True)
    first = JudgeRun.objects.get()
    endpoint.fail_after = None
    # An ACU of the first document edited: that document's answered summaries are asked again.
    acu = (
        ACU.objects.filter(reference__document__dataset=tiny)
        .order_by("reference__document__position", "position")
        .first()
    )
    ACU.objects.filter(pk=acu.pk).update(text=acu.text + " Indeed")
    out, _ = judge()
    assert out.startswith(f"Resuming run {first.pk}: 2 of 24 summaries already answered\n")
    assert len(endpoint.answered) == 6 + 22

    # Another model: a new run asks every summary, none of the stored answers is reused.
    settings.LLM_MODEL = "other-judge"
    endpoint.fail_after = 6 + 22 + 4
    judge(fails=True)
    other = JudgeRun.objects.latest("pk")
    assert other.pk != first.pk and other.model == "other-judge"
    endpoint.fail_after = None
    settings.LLM_MODEL = "tiny-judge"
    message, _ = judge("--resume", str(other.pk), fails=True)
    assert "the judge would now ask tiny-judge" in message and "start a new run" in message
    settings.LLM_MODEL = "other-judge"
    out, _ = judge()
    assert out.startswith(f"Resuming run {other.pk}: 4 of 24 summaries already answered\n")
    asked = endpoint.answered[28:]
    assert len(asked) == SUMMARIES and {a["model"] for a in asked} == {"other-judge"}


def test_usage_is_summed_and_missing_usage_is_unknown(tiny, endpoint, lead):
    endpoint.usage_for = lambda prompt: hashlib.md5(prompt.encode()).digest()[0] % 3 != 0  # some answers only
    out, _ = judge("--json")
    usage = json.loads(out)["llm"]
    given = [a["usage"] for a in endpoint.answered if a["usage"]]
    assert 0 < len(given) < SUMMARIES
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        assert usage[key] == sum(u[key] for u in given)
    assert usage["replies_without_usage"] == SUMMARIES - len(given) and usage["calls"] == SUMMARIES

    endpoint.usage_for = lambda prompt: False
    out, _ = judge("--fresh-answers")
    assert "tokens: unknown prompt, unknown completion, unknown total (the endpoint reported no usage)" in out
    run = JudgeRun.objects.latest("pk")
    client = APIClient()
    client.force_authenticate(lead)
    shown = client.get(f"/api/judge-runs/{run.pk}/").json()["llm"]
    assert shown["prompt_tokens"] is None and shown["total_tokens"] is None
    assert (shown["calls"], shown["replies"], shown["replies_without_usage"]) == (SUMMARIES, SUMMARIES, SUMMARIES)


def test_the_page_resumes_a_failed_run_and_the_api_refuses_a_twin_of_a_running_one(
    tiny, endpoint, lead, client, eager_celery, settings
):
    endpoint.fail_after = 6
    judge(fails=True)
    run = JudgeRun.objects.get()
    endpoint.fail_after = None
    client.login(username=lead.username, password=PASSWORD)
    response = client.post(reverse("judge_start", args=[tiny.pk]), {"judge": "llm"}, follow=True)
    page = response.content.decode()
    assert f"Resuming run {run.pk}: 6 of 24 summaries already answered." in page
    assert JudgeRun.objects.get().status == "done" and len(endpoint.answered) == SUMMARIES
    row = client.get(reverse("judge_runs_json", args=[tiny.pk])).json()["runs"][0]
    assert row["llm"]["reused"] == 6 and row["llm"]["resumed"] == 1

    # A twin of a run that still runs (it stored a chunk a moment ago) is refused, not paid twice.
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    settings.JUDGE_TASK_TIME_LIMIT = 600
    api = APIClient()
    api.force_authenticate(lead)
    response = api.post(f"/api/datasets/{tiny.pk}/judge-runs/", {"judge": "llm"}, format="json")
    assert response.status_code == 422 and "still running" in response.json()["error"]
    assert JudgeRun.objects.count() == 1
    # Silent for longer than a judge task may run: its worker died with it, and it is taken up.
    stale = JudgeRun.objects.get(pk=run.pk)
    stale.llm_usage["beat"] = (timezone.now() - timedelta(seconds=601)).isoformat()
    JudgeRun.objects.filter(pk=run.pk).update(llm_usage=stale.llm_usage, status="running")
    response = api.post(f"/api/datasets/{tiny.pk}/judge-runs/", {"judge": "llm"}, format="json")
    assert response.status_code == 201 and response.json()["id"] == run.pk
    assert response.json()["llm"]["resumed"] == 2 and response.json()["llm"]["reused"] == SUMMARIES
    assert len(endpoint.answered) == SUMMARIES and JudgeRun.objects.count() == 1


def test_a_run_left_running_by_a_crash_is_taken_up_with_resume_and_new_starts_afresh(tiny, endpoint):
    endpoint.fail_after = 6
    judge(fails=True)
    run = JudgeRun.objects.get()
    JudgeRun.objects.filter(pk=run.pk).update(status="running")  # as a judge_dataset killed (-9) leaves it
    endpoint.fail_after = None
    message, _ = judge(fails=True)
    assert f"Judge run {run.pk} with the same settings is still marked running" in message
    assert f"resume it with --resume {run.pk}" in message and len(endpoint.answered) == 6
    message, _ = judge("--resume", str(run.pk), "--new", fails=True)
    assert "give one of them" in message
    message, _ = judge("--resume", "999999", fails=True)
    assert message == "tiny has no llm judge run 999999."
    out, _ = judge("--resume", str(run.pk))
    assert out.startswith(f"Resuming run {run.pk}: 6 of 24 summaries already answered\n")
    assert "llm: 24 asked; 27 calls, 2 retries, 6 reused from stored answers; tokens: " in out
    assert len(endpoint.answered) == SUMMARIES
    # --new --fresh-answers with a failed twin: a fresh run that asks every summary.
    endpoint.fail_after = SUMMARIES + 2
    judge("--fresh-answers", fails=True)
    endpoint.fail_after = None
    out, _ = judge("--new", "--fresh-answers", "--json")
    assert json.loads(out)["llm"]["reused"] == 0 and len(endpoint.answered) == 2 * SUMMARIES + 2
