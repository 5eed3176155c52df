"""Issue 44: bench/drafter_bench.py on any pyramid folder (references tagged with <t> ... </t> or
not), and the paired comparison of two unit sets with bootstrap intervals over documents."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scoring.drafts.comparison import FIGURES, compare, figures, per_document

BENCH = Path(__file__).resolve().parents[2] / "bench" / "drafter_bench.py"


def run_bench(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH), *map(str, args)], capture_output=True, text=True, timeout=600, check=True
    )


def untagged_copy(realsumm_path: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "untagged"
    shutil.copytree(realsumm_path, folder)
    lines = (folder / "references.txt").read_text(encoding="utf-8").splitlines()
    plain = [" ".join(re.sub(r"</?t>", " ", line).split()) for line in lines]
    (folder / "references.txt").write_text("\n".join(plain) + "\n", encoding="utf-8")
    return folder


def test_the_bench_reads_references_without_tags_and_says_so(realsumm_path, tmp_path):
    tagged = run_bench(realsumm_path, "--documents", "0:12", "--json")
    plain = run_bench(untagged_copy(realsumm_path, tmp_path), "--documents", "0:12", "--json")
    assert "no <t>" not in tagged.stderr
    assert "100 of 100 references have no <t>" in plain.stderr
    a, b = json.loads(tagged.stdout)["drafter"], json.loads(plain.stdout)["drafter"]
    assert a["f1"] > 0.4 and b["f1"] > 0.4  # not the 0.000 of a folder read as one empty sentence each
    assert abs(a["f1"] - b["f1"]) < 0.1
    assert json.loads(plain.stdout)["references_per_cpu_second"] > 0


def test_the_bench_compares_against_a_unit_file_with_intervals(realsumm_path, tmp_path):
    out = json.loads(
        run_bench(
            realsumm_path,
            "--documents",
            "3:15",
            "--against",
            realsumm_path / "SCUs.txt",
            "--resamples",
            "300",
            "--json",
        ).stdout
    )
    c = out["comparison"]
    assert c["documents"] == 12 and c["resamples"] == 300
    assert c["against"]["f1"] == {"value": 1.0, "ci": [1.0, 1.0]}  # the human units against themselves
    assert c["drafter"]["f1"]["value"] == pytest.approx(out["drafter"]["f1"])
    for k in FIGURES:
        for side in ("drafter", "against", "difference"):
            low, high = c[side][k]["ci"]
            assert low <= c[side][k]["value"] <= high
    short = tmp_path / "short.txt"
    short.write_text("a unit\tanother\nthird\n", encoding="utf-8")
    with pytest.raises(subprocess.CalledProcessError) as refused:
        run_bench(realsumm_path, "--documents", "3:15", "--against", short)
    assert "has 2 lines; the folder has 100 references" in refused.value.stderr
    with pytest.raises(subprocess.CalledProcessError) as refused:
        run_bench(realsumm_path, "--documents", "fifty")
    assert "--documents takes START:END" in refused.value.stderr


def sample(seed: int, n: int = 40, m: int = 6):
    rng = np.random.default_rng(seed)
    human = rng.integers(5, 12, n)
    units = rng.integers(3, 12, n)
    matched = np.minimum(human, units) - rng.integers(0, 3, n).clip(0, None)
    X, Y = rng.random((n, m)), rng.random((n, m))
    return per_document(matched.clip(0, None), units, human, X, Y)


def test_the_comparison_is_the_micro_figures_with_paired_document_intervals():
    a, b = sample(1), sample(2)
    out = compare(a, b, n_resamples=2_000, rng=0)
    point = figures(np.ones((1, len(a.matched))), a)
    assert out["a"]["precision"]["value"] == pytest.approx(a.matched.sum() / a.units.sum())
    assert out["a"]["recall"]["value"] == pytest.approx(a.matched.sum() / a.human.sum())
    assert out["a"]["f1"]["value"] == pytest.approx(point["f1"][0])
    assert out["a"]["summary_pearson"]["value"] == pytest.approx(a.pearson.mean())
    for k in FIGURES:
        assert out["difference"][k]["value"] == pytest.approx(out["a"][k]["value"] - out["b"][k]["value"])
        low, high = out["a"][k]["ci"]
        assert low < out["a"][k]["value"] < high  # resampling 40 documents moves every figure
    # a set against itself: every resample's difference is 0
    same = compare(a, a, n_resamples=500, rng=0)
    assert all(same["difference"][k]["ci"] == [0.0, 0.0] for k in FIGURES)
    # the same seed gives the same intervals
    assert compare(a, b, n_resamples=500, rng=3) == compare(a, b, n_resamples=500, rng=3)
    with pytest.raises(ValueError, match="same documents"):
        compare(a, sample(3, n=10), n_resamples=10)


def bench_refusal(*args) -> str:
    """The bench's message for bad input: a non-zero exit with one line on stderr, no traceback."""
    done = subprocess.run([sys.executable, str(BENCH), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_the_bench_refuses_bad_input_with_one_line(realsumm_path, tmp_path):
    assert "no such folder" in bench_refusal(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "references.txt" in bench_refusal(empty)
    assert "not a pyramid folder" in bench_refusal(empty)
    assert "STUs.txt" in bench_refusal(realsumm_path, "--documents", "50:100", "--against", tmp_path / "STUs.txt")
    assert "START < END" in bench_refusal(realsumm_path, "--documents", "5:2")
    assert "0 to 99" in bench_refusal(realsumm_path, "--documents", "200:300")
    assert "--resamples" in bench_refusal(realsumm_path, "--against", realsumm_path / "SCUs.txt", "--resamples", "0")
    assert "--errors" in bench_refusal(realsumm_path, "--errors", "-1")
    assert "nosuchmodel" in bench_refusal(realsumm_path, "--drafter", "parsed", "--parser-model", "nosuchmodel")
