"""annotation/llm.py and the llm judge against a local stand-in of an OpenAI-compatible server
(127.0.0.1, a thread of http.server): request shape, JSON parsing, retries, timeouts and the
messages a lead gets when the endpoint is not configured, refuses or cannot be reached."""

import json
import socket

import numpy as np
import pytest

from annotation import llm
from annotation.llm import LLMError, chat_json, llm_configured
from scoring.machine.judges import JudgeUnavailable, get_judge

pytestmark = pytest.mark.slow


MESSAGES = [{"role": "user", "content": "Is it there?"}]


def test_request_shape_and_parsed_answer(standin):
    standin.reply(content=json.dumps({"answers": [{"id": 1, "present": True, "confidence": 0.8}]}))
    assert chat_json(MESSAGES, temperature=0.0) == {"answers": [{"id": 1, "present": True, "confidence": 0.8}]}
    request = standin.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert request["json"]["model"] == "tiny-judge"
    assert request["json"]["messages"] == MESSAGES
    assert request["json"]["response_format"] == {"type": "json_object"}
    assert request["json"]["temperature"] == 0.0


def test_fenced_json_is_accepted(standin):
    standin.reply(content="```json\n[1, 2]\n```")
    assert chat_json(MESSAGES) == [1, 2]


def test_5xx_is_retried_then_succeeds(standin):
    standin.reply(status=503, body={"error": {"message": "loading model"}})
    standin.reply(content='{"ok": true}')
    assert chat_json(MESSAGES, retries=2) == {"ok": True}
    assert len(standin.requests) == 2


def test_5xx_exhausts_retries_with_a_clear_message(standin):
    standin.reply(status=500, body={"error": {"message": "boom"}})
    with pytest.raises(LLMError, match=r"no answer after 3 attempts: .*HTTP 500: boom"):
        chat_json(MESSAGES, retries=2)
    assert len(standin.requests) == 3


def test_timeout_is_retried_and_explained(standin):
    standin.reply(content='{"late": true}', delay=1.5)
    with pytest.raises(LLMError, match=r"no answer from .* within 0.3 s \(LLM_TIMEOUT\)"):
        chat_json(MESSAGES, timeout=0.3, retries=1)
    assert len(standin.wait_for_requests(2)) == 2


def test_4xx_is_not_retried(standin):
    standin.reply(status=401, body={"error": {"message": "bad key"}})
    with pytest.raises(LLMError, match=r"refused the request \(HTTP 401\): bad key.*LLM_API_KEY"):
        chat_json(MESSAGES, retries=2)
    assert len(standin.requests) == 1


def test_bad_json_content_is_an_llm_error(standin):
    standin.reply(content="Sure! The fact is present.")
    with pytest.raises(LLMError, match="not valid JSON"):
        chat_json(MESSAGES)
    standin.reply(body={"unexpected": True})
    with pytest.raises(LLMError, match="OpenAI-compatible"):
        chat_json(MESSAGES)


def test_not_configured(settings, monkeypatch):
    settings.LLM_BASE_URL, settings.LLM_MODEL = "", ""
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    monkeypatch.delenv("LLM_MODEL", raising=False)
    assert not llm_configured()
    with pytest.raises(LLMError, match="No language model is configured: set LLM_BASE_URL"):
        chat_json(MESSAGES)
    ok, why = get_judge("llm").available()
    assert not ok and "LLM_BASE_URL" in why


def test_unreachable(settings):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.LLM_BASE_URL, settings.LLM_MODEL = f"http://127.0.0.1:{port}/v1", "m"
    llm.BACKOFF = 0.01
    try:
        with pytest.raises(LLMError, match="cannot reach .* is the server running"):
            chat_json(MESSAGES, retries=1)
    finally:
        llm.BACKOFF = 0.5


def test_llm_judge_asks_once_per_summary(standin):
    standin.reply(
        content=json.dumps(
            {"answers": [{"id": 1, "present": True, "confidence": 0.9}, {"id": 2, "present": False, "confidence": 0.2}]}
        )
    )
    judge = get_judge("llm")
    assert judge.available() == (True, "")
    values = judge.judge([("fact one", "The summary."), ("fact two", "The summary.")])
    assert values.tolist() == [0.9, 0.2]
    assert len(standin.requests) == 1
    prompt = standin.requests[0]["json"]["messages"][1]["content"]
    assert "1. fact one" in prompt and "2. fact two" in prompt and "The summary." in prompt
    assert judge.model == "tiny-judge" and judge.params["base_url"] == standin.base


def test_llm_judge_missing_answer_is_unavailable(standin):
    standin.reply(content=json.dumps({"answers": [{"id": 1, "present": True}]}))
    with pytest.raises(JudgeUnavailable, match=r"no usable answer for facts \[2\]"):
        get_judge("llm").judge([("a", "S"), ("b", "S")])


def test_429_waits_for_retry_after(standin):
    """A rate-limited lab saw its run fail: 429 answers were retried after 0.5 s and 1 s whatever
    the server's Retry-After said, so all retries hit the same limit window."""
    standin.reply(status=429, body={"error": {"message": "rate limit"}}, headers={"Retry-After": "1"})
    standin.reply(content='{"ok": true}')
    assert chat_json(MESSAGES, retries=1) == {"ok": True}
    assert len(standin.requests) == 2
    assert standin.requests[1]["at"] - standin.requests[0]["at"] >= 0.95


def test_retry_after_is_read_and_capped():
    response = llm.requests.Response()
    for raw, expected in (("2", 2.0), ("", 0.0), ("soon", 0.0), ("-5", 0.0), ("99999", llm.MAX_RETRY_AFTER)):
        response.headers["Retry-After"] = raw
        assert llm.retry_after(response) == expected
    response.headers["Retry-After"] = "Wed, 21 Oct 2015 07:28:00 GMT"  # in the past: no wait
    assert llm.retry_after(response) == 0.0


def test_llm_judge_run_asks_once_per_summary_across_chunks(standin, monkeypatch):
    """A lab's llm run sent some summaries twice, each time with part of their ACUs: the run's
    progress chunks (256 pairs) cut through summaries, and the judge asked per chunk."""
    from scoring.machine.data import Pairs
    from scoring.machine.judges import base

    monkeypatch.setattr(base, "CHUNK_PAIRS", 4)

    def answer(count):
        return json.dumps({"answers": [{"id": i + 1, "present": True, "confidence": 0.7} for i in range(count)]})

    standin.reply(content=answer(3))
    pairs = Pairs(
        summary=np.array([10, 10, 10, 20, 20, 20]),
        acu=np.arange(6),
        document=np.zeros(6, dtype=int),
        system=np.array([1, 1, 1, 2, 2, 2]),
        acu_texts=[f"fact {i}" for i in range(6)],
        summary_texts={10: "Summary ten.", 20: "Summary twenty."},
    )
    progress = []
    work = base.Work(
        pairs=pairs,
        labels={},
        texts=[],
        progress=lambda share, done=None: progress.append(done),
        run_id=1,
        dataset_id=1,
        dataset_name="d",
        label_round=None,
        started=0.0,
    )
    prediction = get_judge("llm").predict(work)
    assert prediction.scores["p"].tolist() == [0.7] * 6
    assert len(standin.requests) == 2
    prompts = [r["json"]["messages"][1]["content"] for r in standin.requests]
    assert all("3. fact" in p for p in prompts)
    assert progress == [6]


def test_llm_judge_asks_again_after_a_malformed_answer(standin):
    """A lab's llm run of hundreds of summaries failed, and stored nothing, because the model
    once answered prose instead of JSON: a malformed answer was not asked again."""
    standin.reply(content="Sure! Fact 1 is present.")
    standin.reply(content=json.dumps({"answers": [{"id": 1, "present": True, "confidence": 0.8}]}))
    assert get_judge("llm").judge([("a", "S")]).tolist() == [0.8]
    assert len(standin.requests) == 2


def test_llm_judge_gives_up_on_malformed_answers_with_a_message(standin):
    standin.reply(content=json.dumps({"answers": []}))
    with pytest.raises(JudgeUnavailable, match=r"no usable answer for facts \[1\] of 1\. \(asked 3 times\)"):
        get_judge("llm", retries=2).judge([("a", "S")])
    assert len(standin.requests) == 3
