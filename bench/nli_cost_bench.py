"""What the public NLI models the nli judge can load cost on this CPU, without downloading them:
each architecture is built from its published configuration with random weights (the cost of a
forward pass does not depend on the weights), and judges REALSumm (summary, ACU) pairs as the nli
judge does (premise = summary, hypothesis = ACU, truncated to 400 tokens, batches sorted by
length). Token ids come from the packaged all-MiniLM-L6-v2 tokenizer (lengths within a few
percent of the models' own BPE / SentencePiece tokenizers on English news). One torch thread;
each model in its own child process, so its peak resident memory (weights included) is its own.

    .venv/bin/python bench/nli_cost_bench.py ../shared/data/realsumm --pairs 48
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "realsumm"

# The published configurations (config.json on the model hub) of the models docs/scoring.md lists.
MODELS = {
    "shiyue/roberta-large-tac08": (
        "roberta",
        {
            "vocab_size": 50265,
            "hidden_size": 1024,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "intermediate_size": 4096,
            "max_position_embeddings": 514,
            "type_vocab_size": 1,
            "num_labels": 3,
        },
    ),
    "MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli": (
        "deberta-v2",
        {
            "vocab_size": 128100,
            "hidden_size": 768,
            "num_hidden_layers": 12,
            "num_attention_heads": 12,
            "intermediate_size": 3072,
            "max_position_embeddings": 512,
            "relative_attention": True,
            "position_buckets": 256,
            "norm_rel_ebd": "layer_norm",
            "share_att_key": True,
            "pos_att_type": ["p2c", "c2p"],
            "position_biased_input": False,
            "max_relative_positions": -1,
            "type_vocab_size": 0,
            "num_labels": 3,
        },
    ),
    "Yale-LILY/a2cu-classifier": (
        "deberta",
        {
            "vocab_size": 50265,
            "hidden_size": 1024,
            "num_hidden_layers": 48,
            "num_attention_heads": 16,
            "intermediate_size": 4096,
            "max_position_embeddings": 512,
            "relative_attention": True,
            "pos_att_type": ["c2p", "p2c"],
            "position_biased_input": False,
            "max_relative_positions": -1,
            "type_vocab_size": 0,
            "num_labels": 3,
        },
    ),
}


def pairs(folder: Path, n: int) -> list[tuple[str, str]]:
    """(ACU, summary) pairs spread over REALSumm: every k-th of all 26,400, file order."""
    sys.path.insert(0, str(ROOT / "bench"))
    from learned_judge_bench import load

    everything = load(folder)[0]
    step = max(1, len(everything) // n)
    return everything[::step][:n]


def measure(name: str, folder: Path, n: int, batch_size: int) -> dict:
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from scoring.machine import packed

    torch.set_num_threads(1)
    kind, options = MODELS[name]
    config = AutoConfig.for_model(kind, **options)
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_config(config).eval()
    parameters = sum(p.numel() for p in model.parameters())
    tokenizer, _ = packed.load_base()
    chosen = pairs(folder, n)
    encoded = [tokenizer(summary, acu, truncation=True, max_length=400)["input_ids"] for acu, summary in chosen]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    started, cpu = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = [encoded[i] for i in order[start : start + batch_size]]
            width = max(len(c) for c in chunk)
            ids = torch.tensor([[t % options["vocab_size"] for t in c] + [1] * (width - len(c)) for c in chunk])
            mask = torch.tensor([[1] * len(c) + [0] * (width - len(c)) for c in chunk])
            model(input_ids=ids, attention_mask=mask)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "model": name,
        "parameters_millions": round(parameters / 1e6),
        "weights_mb_fp32": round(parameters * 4 / 1e6),
        "pairs": len(chosen),
        "mean_tokens": round(sum(len(e) for e in encoded) / len(encoded), 1),
        "pairs_per_cpu_second": round(len(chosen) / cpu, 2),
        "cpu_minutes_per_1000_pairs": round(cpu / len(chosen) * 1000 / 60, 1),
        "wall_seconds": round(wall, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--pairs", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--model", choices=list(MODELS), help="measure this one here (the child process)")
    args = parser.parse_args()
    if args.model:
        print(json.dumps(measure(args.model, Path(args.data), args.pairs, args.batch_size)), flush=True)
        return
    for name in MODELS:
        command = [sys.executable, __file__, args.data, "--pairs", str(args.pairs), "--model", name]
        command += ["--batch-size", str(args.batch_size)]
        out = subprocess.run(command, capture_output=True, text=True, check=False)
        lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
        print(lines[-1] if lines else json.dumps({"model": name, "error": out.stderr.strip()[-300:]}), flush=True)


if __name__ == "__main__":
    main()
