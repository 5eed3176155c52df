"""A tiny randomly initialised RoBERTa-style NLI model and byte-level tokenizer, written to a
directory in the test (nothing downloaded), and a direct transcription of Lite2Pyramid's
scoring loop (metric/score.py) to compare the app's nli judge against."""

import json

import numpy as np


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character table (byte-level BPE's alphabet)."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars), strict=False))


def spread_weights(model, seed: int, scale: float) -> None:
    """Seeded normal weights times `scale` (LayerNorms and biases kept): a tiny random model whose
    outputs differ from input to input."""
    import torch

    with torch.no_grad():
        generator = torch.Generator().manual_seed(seed)
        for name, parameter in model.named_parameters():
            if "LayerNorm" in name or name.endswith("bias"):
                continue
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * scale)


def build_tiny_nli(directory, *, labels=("ENTAILMENT", "NEUTRAL", "CONTRADICTION"), seed: int = 0) -> str:
    """A 2-layer, 16-wide RoBERTa sequence classifier with random weights and a byte-level
    tokenizer without merges (every byte a token), saved like a downloaded model."""
    import torch
    from transformers import (
        RobertaConfig,
        RobertaForSequenceClassification,
        RobertaTokenizer,
    )

    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for char in _bytes_to_unicode().values():
        vocab.setdefault(char, len(vocab))
    vocab["<mask>"] = len(vocab)
    (directory / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (directory / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tokenizer = RobertaTokenizer(vocab=dict(vocab), merges=[])
    config = RobertaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=420,
        type_vocab_size=1,
        pad_token_id=1,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={name: i for i, name in enumerate(labels)},
    )
    torch.manual_seed(seed)
    model = RobertaForSequenceClassification(config)
    spread_weights(model, seed, 0.5)  # large enough that the logits vary from pair to pair
    model.save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return str(directory)


def lite2pyramid_transcription(model_dir, summaries, units, max_length=400, batch_size=32):
    """Lite2Pyramid's score() (metric/score.py), transcribed: each (summary, unit) pair encoded
    with truncation to max_length and padded to max_length, evaluated in sequential batches;
    2-class logits [e, n + c] with e at index 0. Returns the per-summary lists and means."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(model_dir, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model.eval()
    input_ids, token_type_ids, attention_mask, ids = [], [], [], []
    for i, summary in enumerate(summaries):
        for unit in units[i]:
            encoded = tokenizer(summary, unit, max_length=max_length, return_token_type_ids=True, truncation=True)
            pad = max_length - len(encoded["input_ids"])
            input_ids.append(encoded["input_ids"] + [tokenizer.pad_token_id] * pad)
            token_type_ids.append(encoded["token_type_ids"] + [0] * pad)
            attention_mask.append(encoded["attention_mask"] + [0] * pad)
            ids.append(i)
    per = {name: {} for name in ("p2c", "l2c", "p3c", "l3c")}
    pair_scores = {name: [] for name in per}
    for start in range(0, len(ids), batch_size):
        sl = slice(start, start + batch_size)
        with torch.no_grad():
            outputs = model(
                torch.tensor(input_ids[sl]),
                attention_mask=torch.tensor(attention_mask[sl]),
                token_type_ids=torch.tensor(token_type_ids[sl]),
                labels=None,
            )
        logits = torch.stack([outputs[0][:, 0], outputs[0][:, 1] + outputs[0][:, 2]], dim=1)
        two_labels = torch.argmax(logits, dim=1).reshape(-1)
        two_probs = torch.softmax(logits, dim=1)[:, 0].reshape(-1)
        three_labels = torch.argmax(outputs[0], dim=1).reshape(-1)
        three_probs = torch.softmax(outputs[0], dim=1)[:, 0].reshape(-1)
        for k, i in enumerate(ids[sl]):
            values = {
                "l3c": 1 if int(three_labels[k]) == 0 else 0,
                "p3c": float(three_probs[k]),
                "l2c": 1 - int(two_labels[k]),
                "p2c": float(two_probs[k]),
            }
            for name, value in values.items():
                per[name].setdefault(i, []).append(value)
                pair_scores[name].append(value)
    summary_scores = {name: [sum(per[name][i]) / len(per[name][i]) for i in range(len(summaries))] for name in per}
    return {
        "pairs": {name: np.array(v) for name, v in pair_scores.items()},
        "summaries": summary_scores,
        "means": {name: float(np.mean(v)) for name, v in summary_scores.items()},
    }
