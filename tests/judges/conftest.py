"""The llm judge's tests' stand-in endpoint (tests/judges/llm_standin.py) as fixtures: the
server (`standin`), the judge's endpoint answering from the texts (`endpoint`), and the tiny
dataset of 6 documents the llm run tests judge (`tiny`)."""

import pytest

from annotation import llm
from scoring.machine.judges import base

from .learned_data import tiny_dataset
from .llm_standin import JudgeEndpoint, StandIn


@pytest.fixture
def standin(settings):
    server = StandIn()
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY, settings.LLM_TIMEOUT = (
        server.base,
        "tiny-judge",
        "sk-test",
        "60",  # the default: a busy machine may answer late; the timeout's own test sets 0.3 s
    )
    llm.BACKOFF = 0.01
    yield server
    server.close()
    llm.BACKOFF = 0.5


@pytest.fixture
def endpoint(standin, monkeypatch):
    monkeypatch.setattr(base, "CHUNK_PAIRS", 10)  # 2 summaries a chunk: 12 chunks
    return JudgeEndpoint(standin)


@pytest.fixture
def tiny(tmp_path):
    return tiny_dataset(tmp_path, "tiny", seed=3, documents=6)
