"""The llm drafter against a local stand-in for an OpenAI-compatible server on 127.0.0.1."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from annotation.drafting import DraftContext, DrafterError, available_drafters, get_drafter


class StandIn:
    """Answers POST /v1/chat/completions with the queued replies (status, content) in order."""

    def __init__(self):
        self.requests, self.replies = [], []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, content = stand_in.replies.pop(0) if stand_in.replies else (500, "no reply queued")
                payload = (
                    {"choices": [{"message": {"role": "assistant", "content": content}}]}
                    if status == 200
                    else {"error": {"message": content}}
                )
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server(settings):
    with StandIn() as s:
        settings.LLM_BASE_URL = s.url
        settings.LLM_MODEL = "stand-in-model"
        settings.LLM_API_KEY = "sk-test"
        yield s


CONTEXT = DraftContext(
    guidelines="One fact per ACU.",
    examples=(("Pepe and Falcao were sold .", ["Pepe was sold.", "Falcao was sold."]),),
)


def test_drafts_come_back_per_sentence_and_the_prompt_carries_guidelines_and_examples(server):
    server.replies.append(
        (
            200,
            json.dumps(
                {
                    "sentences": [
                        {"index": 1, "acus": ["Koirala slept outdoors.", "  Girls   slept outdoors. "]},
                        {"index": 2, "acus": ["Basnet evacuated."]},
                    ]
                }
            ),
        )
    )
    out = get_drafter("llm").draft(["Koirala and girls slept outdoors .", "Basnet evacuated ."], CONTEXT)
    assert out == [["Koirala slept outdoors.", "Girls slept outdoors."], ["Basnet evacuated."]]
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == "stand-in-model" and body["response_format"] == {"type": "json_object"}
    prompt = body["messages"][-1]["content"]
    assert "One fact per ACU." in prompt and '"Falcao was sold."' in prompt
    assert "1. Koirala and girls slept outdoors ." in prompt and "2. Basnet evacuated ." in prompt
    assert "llm" in available_drafters()


def test_a_fenced_answer_and_a_skipped_sentence_are_accepted(server):
    server.replies.append((200, '```json\n{"sentences": [{"index": 2, "acus": ["B happened."]}]}\n```'))
    assert get_drafter("llm").draft(["A .", "B happened ."]) == [[], ["B happened."]]


@pytest.mark.parametrize(
    "content, message",
    [
        ("not json at all", "not valid JSON"),
        (json.dumps({"answer": []}), '{"sentences": [...]}'),
        (json.dumps({"sentences": [{"index": 7, "acus": ["x"]}]}), "sentence 7"),
        (json.dumps({"sentences": [{"index": 1}]}), '"acus" list'),
    ],
)
def test_malformed_answers_give_a_clear_message(server, content, message):
    server.replies.append((200, content))
    with pytest.raises(DrafterError, match=message.replace("[", r"\[").replace("]", r"\]").replace("{", r"\{")):
        get_drafter("llm").draft(["A sentence ."])


def test_server_errors_are_retried_then_reported(server, monkeypatch):
    monkeypatch.setattr("annotation.llm.BACKOFF", 0.0)
    server.replies += [(503, "busy"), (200, json.dumps({"sentences": [{"index": 1, "acus": ["A."]}]}))]
    assert get_drafter("llm").draft(["A ."]) == [["A."]]
    server.replies += [(401, "bad key")]
    with pytest.raises(DrafterError, match="LLM_API_KEY"):
        get_drafter("llm", retries=0).draft(["A ."])


def test_unreachable_or_unconfigured_endpoint(settings, monkeypatch):
    monkeypatch.setattr("annotation.llm.BACKOFF", 0.0)
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:9/v1", "m"
    with pytest.raises(DrafterError, match="cannot reach"):
        get_drafter("llm", retries=0).draft(["A ."])
    settings.LLM_BASE_URL = ""
    assert available_drafters() == ["rules", "parsed"]
    with pytest.raises(DrafterError, match="No language model is configured"):
        get_drafter("llm").draft(["A ."])
