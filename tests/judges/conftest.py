"""The llm judge's tests' stand-in endpoint (tests/judges/llm_standin.py) as a fixture."""

import pytest

from annotation import llm

from .llm_standin import StandIn


@pytest.fixture
def standin(settings):
    server = StandIn()
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY, settings.LLM_TIMEOUT = (
        server.base,
        "tiny-judge",
        "sk-test",
        "5",
    )
    llm.BACKOFF = 0.01
    yield server
    server.close()
    llm.BACKOFF = 0.5
