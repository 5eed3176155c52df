"""Optional extras shown honestly: scikit-learn is a base requirement; the features that need the
torch extras say "not installed" with the install line before anything starts."""

from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import DraftJob
from config import extras
from hits.models import JudgeRun
from scoring.machine.runs import JudgeRunError, start_judge_run

from .crowd_data import demo_dataset

ROOT = Path(__file__).resolve().parent.parent


def pins(name: str) -> set[str]:
    lines = (ROOT / name).read_text().splitlines()
    return {line.split("==")[0].strip().lower() for line in lines if "==" in line and not line.startswith("#")}


def test_scikit_learn_is_a_base_requirement_and_imports():
    assert "scikit-learn" in pins("requirements.txt")
    assert "scikit-learn" not in pins("requirements-ml.txt")
    assert {"torch", "sentence-transformers", "transformers"} <= pins("requirements-ml.txt")
    import numpy as np

    from scoring.drafts.unit_budget import regressor  # the budget's regressor runs on the base install

    rng = np.random.default_rng(0)
    X, y = rng.random((40, 3)), rng.random(40)
    predicted = regressor.out_of_fold(X, y, np.repeat(np.arange(8), 5))
    assert predicted.shape == (40,) and np.isfinite(predicted).all()


@pytest.fixture
def torch_missing(monkeypatch):
    monkeypatch.setattr(extras, "missing", lambda feature: ["torch"] if feature in extras.NEEDS else [])


def test_pages_offer_torch_features_as_not_installed_with_the_install_line(db, client, lead, torch_missing):
    dataset = demo_dataset()
    client.force_login(lead)
    page = client.get(reverse("dataset_detail", args=[dataset.pk])).content.decode()
    assert 'id="judge-cross-encoder" disabled>' in page and "tens of CPU-minutes) – not installed</label>" in page
    assert '<option value="nli" disabled>' in page and '<option value="lexical">' in page
    assert "<code>.venv/bin/pip install -r requirements-ml.txt</code>" in page
    page = client.get(reverse("authoring_overview", args=[dataset.pk])).content.decode()
    assert '<option value="embedding" disabled>embedding – not installed</option>' in page
    assert '<option value="lexical">lexical</option>' in page and 'id="extras-missing"' in page


def test_nothing_starts_without_the_extras(db, client, lead, torch_missing):
    dataset = demo_dataset()
    client.force_login(lead)
    response = client.post(
        reverse("authoring_budget", args=[dataset.pk]),
        {"percent": "40", "drafter": "rules", "judge": "embedding"},
        follow=True,
    )
    text = response.content.decode()
    assert (
        "Nothing started: The embedding judge is not installed (torch missing): "
        ".venv/bin/pip install -r requirements-ml.txt" in text
    )
    assert "started (" not in text and not DraftJob.objects.filter(dataset=dataset).exists()
    with pytest.raises(JudgeRunError, match=r"nli judge is not installed \(torch missing\)"):
        start_judge_run(dataset, "nli", options={"model_dir": "/nowhere"})
    assert not JudgeRun.objects.exists()


def test_installed_extras_are_offered(db, client, lead, monkeypatch):
    monkeypatch.setattr(extras, "missing", lambda feature: [])
    dataset = demo_dataset()
    client.force_login(lead)
    page = client.get(reverse("dataset_detail", args=[dataset.pk])).content.decode()
    assert '<input type="checkbox" name="cross_encoder" value="1" id="judge-cross-encoder">' in page
    assert 'id="extras-missing"' not in page
