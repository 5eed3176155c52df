"""The NLI judge: Lite2Pyramid (Zhang and Bansal 2021, its metric/score.py) from a local model
directory. Premise = summary, hypothesis = ACU, truncated to 400 tokens; with logits over the
model's labels and e the entailment index (read from the config; Lite2Pyramid assumes 0):
p2c = softmax([e, sum of the others])[0], l2c = argmax of those two is entailment (a tie goes to
entailment), p3c = softmax(all)[e], l3c = argmax(all) == e (the first maximum, as torch.argmax).
"""

import logging
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from config import extras

from .base import Judge, JudgeUnavailable

logger = logging.getLogger(__name__)

MAX_LENGTH = 400


def entailment_index(config) -> tuple[int, str]:
    """The entailment label's index from the model config, and where it came from."""
    for index, label in sorted((config.id2label or {}).items()):
        if str(label).lower().startswith("entail"):
            return int(index), "config"
    return 0, "assumed (no label named entailment in the config)"


def lite2pyramid_from_logits(logits: np.ndarray, entail: int = 0) -> dict[str, np.ndarray]:
    """Lite2Pyramid's four per-pair scores from NLI logits (n x labels), in float64."""
    logits = np.asarray(logits, dtype=np.float64)
    e = logits[:, entail]
    rest = logits.sum(axis=1) - e  # n + c
    two = np.stack([e, rest], axis=1)
    two_max = two.max(axis=1, keepdims=True)
    two_exp = np.exp(two - two_max)
    p2c = two_exp[:, 0] / two_exp.sum(axis=1)
    l2c = (e >= rest).astype(float)  # argmax([e, n + c]) == 0; a tie picks the first
    all_exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    p3c = all_exp[:, entail] / all_exp.sum(axis=1)
    l3c = (np.argmax(logits, axis=1) == entail).astype(float)
    return {"p2c": p2c, "l2c": l2c, "p3c": p3c, "l3c": l3c}


@lru_cache(maxsize=2)
def load(model_dir: str, device: str):
    """Tokenizer and model from a local directory, loaded once per process (never downloaded)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        model = AutoModelForSequenceClassification.from_pretrained(model_dir, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise JudgeUnavailable(f"Cannot load an NLI model from {model_dir}: {str(exc).splitlines()[0][:300]}") from None
    model.to(device)
    model.eval()
    logger.info("Loaded NLI model %s on %s (%d labels)", model_dir, device, model.config.num_labels)
    return tokenizer, model


class NLIJudge(Judge):
    name = "nli"
    score_names = ("p2c", "l2c", "p3c", "l3c")
    calibration_scale = "logit"

    def __init__(
        self, model_dir: str | None = None, device: str = "cpu", batch_size: int = 32, max_length: int = MAX_LENGTH
    ):
        path = str(Path(model_dir).expanduser().resolve()) if model_dir else ""
        super().__init__(
            model=path,
            params={"max_length": int(max_length), "premise": "summary", "hypothesis": "acu", "score": "p2c"},
        )
        self.device = device
        self.batch_size = int(batch_size)
        if self.batch_size < 1 or int(max_length) < 8:
            raise TypeError("batch_size must be at least 1 and max_length at least 8")

    def available(self) -> tuple[bool, str]:
        why = extras.not_installed("nli")
        if why:
            return False, f"The nli judge is {why}"
        if not self.model:
            return (
                False,
                "The nli judge needs a local model directory (the page's Model directory, the API's model_dir, "
                "the command's --model-dir), e.g. a copy of shiyue/roberta-large-tac08.",
            )
        try:
            found = (Path(self.model) / "config.json").is_file()
        except OSError as exc:  # a name too long, a folder not readable
            return False, f"Cannot read the model directory {self.model[:200]}: {exc.strerror or exc}."
        if not found:
            return False, f"{self.model[:200]} is not a model directory (no config.json there)."
        return True, ""

    def _loaded(self):
        from .embedding import resolve_device

        tokenizer, model = load(self.model, resolve_device(self.device))
        entail, source = entailment_index(model.config)
        if model.config.num_labels < 2:
            raise JudgeUnavailable(f"{self.model} has {model.config.num_labels} label; an NLI model needs 2 or 3.")
        self.params["entailment_index"] = entail
        self.params["entailment_index_from"] = source
        return tokenizer, model, entail

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """The model's logits per pair, batched by similar length (padding does not change them)."""
        import torch

        self.require()
        tokenizer, model, _ = self._loaded()
        max_length = self.params["max_length"]
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][1]) + len(pairs[i][0]))
        out = np.empty((len(pairs), model.config.num_labels), dtype=np.float64)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            encoded = tokenizer(
                [pairs[i][1] for i in chunk],
                [pairs[i][0] for i in chunk],
                max_length=max_length,
                truncation=True,
                padding=True,
                return_token_type_ids=True,
                return_tensors="pt",
            )
            encoded = {k: v.to(model.device) for k, v in encoded.items()}
            with torch.no_grad():
                logits = model(**encoded).logits
            out[chunk] = logits.float().cpu().numpy()
        return out

    def scores(self, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        logits = self.logits(pairs)
        return lite2pyramid_from_logits(logits, self.params["entailment_index"])
