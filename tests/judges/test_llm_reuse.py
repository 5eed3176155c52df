"""A new llm run reuses the answers earlier runs got for the very same questions (same key: model,
endpoint, temperature, prompt version, texts), copied into its own rows, so only new or changed
questions are paid for; `--fresh-answers` (page, API: `fresh_answers`) asks everything again.
Against the stand-in endpoint (tests/judges/llm_standin.py)."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import ACU
from hits.models import JudgeRun, LLMAnswer

from ..conftest import PASSWORD
from .test_llm_runs import SUMMARIES, judge, judgments

pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.portable]


def _run(out: str) -> tuple[dict, JudgeRun]:
    result = json.loads(out)
    return result, JudgeRun.objects.get(pk=result["id"])


def test_a_second_run_asks_nothing_and_ends_with_the_same_judgments(tiny, endpoint):
    """A new run of the same dataset asked the endpoint for every summary again and paid again."""
    first, first_run = _run(judge("--json")[0])
    assert first["llm"]["asked"] == SUMMARIES and first["llm"]["reused_earlier"] == 0
    second, second_run = _run(judge("--json")[0])
    assert second_run.pk != first_run.pk and second_run.status == "done"
    assert len(endpoint.answered) == SUMMARIES  # nothing asked by the second run
    usage = second["llm"]
    assert (usage["calls"], usage["replies"], usage["asked"], usage["reused_earlier"], usage["reused"]) == (
        0,
        0,
        0,
        SUMMARIES,
        0,
    )
    assert (usage["prompt_tokens"], usage["total_tokens"]) == (0, 0)  # cost nothing now, not unknown
    assert judgments(second_run) == judgments(first_run)
    assert second["classification"] == first["classification"] and second["calibration"] == first["calibration"]
    copies = LLMAnswer.objects.filter(run=second_run)
    assert copies.count() == SUMMARIES and set(copies.values_list("from_run", "requests", "usage")) == {
        (first_run.pk, 0, None)
    }
    originals = dict(LLMAnswer.objects.filter(run=first_run).values_list("key", "probabilities"))
    assert dict(copies.values_list("key", "probabilities")) == originals

    out, _ = judge()
    assert (
        "  llm: 0 asked, 24 reused from earlier runs; 0 calls, 0 retries; tokens: 0 prompt, 0 completion, 0 total\n"
        in out
    )


def test_only_the_summaries_of_a_changed_document_are_asked(tiny, endpoint):
    first, _ = _run(judge("--json")[0])
    acus = ACU.objects.filter(reference__document__dataset=tiny).order_by(
        "reference__document__position", "sentence__position", "position"
    )
    edited = acus.first()
    ACU.objects.filter(pk=edited.pk).update(text=edited.text + " Indeed")
    # Another document gains an ACU.
    other = acus.exclude(reference=edited.reference).first()
    added = ACU.objects.create(
        reference=other.reference, sentence=other.sentence, position=other.position + 100, text="Brand new fact"
    )
    second, second_run = _run(judge("--json")[0])
    asked = [a["prompt"] for a in endpoint.answered[SUMMARIES:]]
    assert len(asked) == 8  # 4 systems' summaries of each of the two documents
    assert sum(edited.text + " Indeed" in p for p in asked) == 4 and sum(added.text in p for p in asked) == 4
    assert (second["llm"]["asked"], second["llm"]["reused_earlier"], second["llm"]["calls"]) == (8, 16, 8)
    assert second["pairs"] == first["pairs"] + 4

    # The same as asking every summary afresh.
    fresh, fresh_run = _run(judge("--json", "--fresh-answers")[0])
    assert len(endpoint.answered) == 2 * SUMMARIES + 8 and fresh["llm"]["asked"] == SUMMARIES
    assert judgments(fresh_run) == judgments(second_run)


def test_fresh_answers_asks_everything_and_its_failed_run_resumes_without_borrowing(tiny, endpoint):
    _, first_run = _run(judge("--json")[0])
    endpoint.fail_after = SUMMARIES + 6
    message, _ = judge("--fresh-answers", fails=True)
    fresh_run = JudgeRun.objects.latest("pk")
    assert "upstream down" in message and fresh_run.options == {"fresh_answers": True}
    assert LLMAnswer.objects.filter(run=fresh_run).count() == 6
    endpoint.fail_after = None
    out, _ = judge("--fresh-answers", "--json")
    result, resumed = _run(out)
    assert resumed.pk == fresh_run.pk and len(endpoint.answered) == 2 * SUMMARIES
    assert (result["llm"]["asked"], result["llm"]["reused"], result["llm"]["reused_earlier"]) == (SUMMARIES, 6, 0)
    assert not LLMAnswer.objects.filter(run=fresh_run).exclude(from_run=None).exists()
    assert judgments(resumed) == judgments(first_run)  # the stand-in answers a question the same way

    with pytest.raises(CommandError, match=r"^--fresh-answers is for the llm judge only\.$"):
        call_command("judge_dataset", "tiny", "--judge", "lexical", "--fresh-answers")


def test_deleting_the_first_run_leaves_the_second_intact(tiny, endpoint, lead):
    _, first_run = _run(judge("--json")[0])
    second, second_run = _run(judge("--json")[0])
    before = judgments(second_run)
    first_pk = first_run.pk
    first_run.batch.delete()  # a machine round deleted (the admin), its run and answers with it
    assert not LLMAnswer.objects.filter(run_id=first_pk).exists()
    assert LLMAnswer.objects.filter(run=second_run).count() == SUMMARIES
    assert judgments(JudgeRun.objects.get(pk=second_run.pk)) == before
    api = APIClient()
    api.force_authenticate(lead)
    shown = api.get(f"/api/judge-runs/{second_run.pk}/").json()
    assert shown["status"] == "done" and shown["llm"]["reused_earlier"] == SUMMARIES

    # A third run borrows the copies: still nothing asked, still from the run that asked.
    third, third_run = _run(judge("--json")[0])
    assert len(endpoint.answered) == SUMMARIES and third["llm"]["reused_earlier"] == SUMMARIES
    assert set(LLMAnswer.objects.filter(run=third_run).values_list("from_run", flat=True)) == {first_pk}
    assert judgments(third_run) == before


def test_the_api_and_the_page_reuse_or_ask_afresh_and_show_the_counts(tiny, endpoint, lead, client, eager_celery):
    judge()
    api = APIClient()
    api.force_authenticate(lead)
    response = api.post(f"/api/datasets/{tiny.pk}/judge-runs/", {"judge": "llm"}, format="json")
    assert response.status_code == 201
    usage = response.json()["llm"]
    assert (usage["calls"], usage["asked"], usage["reused_earlier"]) == (0, 0, SUMMARIES)
    assert len(endpoint.answered) == SUMMARIES

    response = api.post(f"/api/datasets/{tiny.pk}/judge-runs/", {"judge": "llm", "fresh_answers": True}, format="json")
    assert response.status_code == 201 and len(endpoint.answered) == 2 * SUMMARIES
    usage = response.json()["llm"]
    assert (usage["calls"], usage["asked"], usage["reused_earlier"]) == (SUMMARIES, SUMMARIES, 0)
    assert JudgeRun.objects.get(pk=response.json()["id"]).options == {"fresh_answers": True}

    client.login(username=lead.username, password=PASSWORD)
    page = client.get(reverse("dataset_detail", args=[tiny.pk])).content.decode()
    assert 'name="fresh_answers"' in page
    client.post(reverse("judge_start", args=[tiny.pk]), {"judge": "llm", "fresh_answers": "1"})
    assert len(endpoint.answered) == 3 * SUMMARIES
    client.post(reverse("judge_start", args=[tiny.pk]), {"judge": "llm"})
    assert len(endpoint.answered) == 3 * SUMMARIES
    rows = client.get(reverse("judge_runs_json", args=[tiny.pk])).json()["runs"]
    shown = [(r["llm"]["asked"], r["llm"]["reused_earlier"], r["llm"]["calls"]) for r in rows]  # newest first
    assert shown == [
        (0, SUMMARIES, 0),
        (SUMMARIES, 0, SUMMARIES),
        (SUMMARIES, 0, SUMMARIES),
        (0, SUMMARIES, 0),
        (SUMMARIES, 0, SUMMARIES),
    ]
