"""A local stand-in of an OpenAI-compatible chat server (127.0.0.1, a thread of http.server)
for the llm client and judge tests; the `standin` fixture (tests/judges/conftest.py) points the
LLM_* settings at it."""

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StandIn:
    """Answers queued replies in order (then repeats the last); records every request."""

    def __init__(self):
        self.requests = []
        self.replies = []
        # respond(request JSON) -> a reply tuple as `reply` queues it, instead of the queue (or None)
        self.respond = None
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, status=200, content=None, body=None, delay=0.0, headers=None):
        self.replies.append((status, content, body, delay, headers or {}))

    def wait_for_requests(self, count: int, timeout: float = 60.0) -> list:
        """The requests once `count` have come (or all that came within `timeout` s): a client that
        gave up waiting for its answer may return before the server's thread has read its request."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.requests

    def _handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                standin.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "json": json.loads(self.rfile.read(length)),
                        "at": time.monotonic(),
                    }
                )
                reply = standin.respond(standin.requests[-1]["json"]) if standin.respond else None
                status, content, body, delay, headers = (
                    reply or standin.replies[min(len(standin.requests), len(standin.replies)) - 1]
                )
                if delay:
                    threading.Event().wait(delay)
                if body is None:
                    body = {
                        "id": "x",
                        "object": "chat.completion",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                    }
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class JudgeEndpoint:
    """The llm judge's endpoint: answers each question from its text (a fact copied into the summary is likely present), so
    that the same question always gets the same answer; optionally fails (HTTP 500) once it has
    answered `fail_after` questions, and leaves `usage` out of the answers `usage_for` refuses."""

    def __init__(self, standin):
        self.standin, self.fail_after, self.answered = standin, None, []
        self.usage_for = lambda prompt: True
        standin.respond = self

    def __call__(self, request):
        if self.fail_after is not None and len(self.answered) >= self.fail_after:
            return (500, None, {"error": {"message": "upstream down"}}, 0.0, {})
        prompt = request["messages"][1]["content"]
        summary, facts = prompt.split("\n\nFacts:\n")
        answers = []
        for line in facts.splitlines():
            number, fact = line.split(". ", 1)
            jitter = int(hashlib.md5(fact.encode()).hexdigest()[:4], 16) / 65536 / 5
            p = (0.75 if fact in summary else 0.05) + jitter
            answers.append({"id": int(number), "present": p > 0.5, "confidence": round(p, 6)})
        body = {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps({"answers": answers})}}]
        }
        if self.usage_for(prompt):
            body["usage"] = {
                "prompt_tokens": len(prompt),
                "completion_tokens": 7 * len(answers),
                "total_tokens": len(prompt) + 7 * len(answers),
            }
        self.answered.append({"prompt": prompt, "model": request["model"], "usage": body.get("usage")})
        return (200, None, body, 0.0, {})
