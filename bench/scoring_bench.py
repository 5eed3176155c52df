"""Benchmark the numerical scoring core (scoring/*.py) at RoSE scale on synthetic data.

Data (seeded numpy Generator, so every run scores the same numbers): 2,500 documents, 22,000
system summaries (500 documents with all 12 systems, as RoSE's CNN/DM test set, and 2,000 with 8
of them), 7-9 ACUs per reference (mean 8, as bench/import_bench.py: about 528,000 labels), 3
workers per summary drawn from a pool of 300. A true label per (summary, ACU) comes from the
system's quality and the document's difficulty; each worker flips it with a personal error rate
(mean about 6%), which gives an ACU-level alpha near 0.75.

Timed (best of --repeat runs, except the power analysis which runs once), each with its peak
traced memory (tracemalloc, in a separate run):
- aggregation: majority vote per (summary, ACU) and summary scores;
- both alphas (per-unit sums of the coincidence matrix, scoring/stats/agreement.py) from (unit,
  value) arrays and from flat judgment arrays (ids grouped first); on a subset small enough for
  it, the krippendorff package side by side, on the dense workers x units matrix and on the
  units x values counts (its own coincidence path, a units x values x values array);
- system bootstrap CIs (10,000 resamples), paired tests for the 66 pairs of 12 systems on 500
  documents (100,000 resamples);
- one system-level Kendall bootstrap CI (100,000 resamples) against a plain loop over the first
  --plain-resamples of the same resamples;
- the power analysis with RoSE's defaults (B = 100,000, T = 1,000, n = 10 ... 10,000) for the
  66 pairs; --quick runs a reduced one (B = 10,000, T = 50, n = 10, 100, 1000).

OpenBLAS: this machine sets OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE for old builds, which slows the
current numpy's matrix products; for representative figures run with both unset:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/scoring_bench.py
    .venv/bin/python bench/scoring_bench.py --quick
The kernel in use is printed first.
"""

import argparse
import ctypes
import glob
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.stats.aggregation import acu_scores_by_summary, group_codes
from scoring.stats.agreement import (
    acu_level_alpha,
    alpha_interval,
    alpha_nominal,
    summary_level_alpha,
    summary_worker_scores,
)
from scoring.stats.bootstrap import paired_bootstrap, resample_indices, system_cis
from scoring.stats.correlation import bootstrap_correlations, correlation_ci
from scoring.stats.power import ROSE_SIZES, power_analysis

SEED = 20240501
N_SYSTEMS = 12


def openblas_core() -> str:
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "libscipy_openblas*"))
    try:
        lib = ctypes.CDLL(libs[0])
        lib.scipy_openblas_get_corename64_.restype = ctypes.c_char_p
        return lib.scipy_openblas_get_corename64_().decode()
    except (IndexError, OSError, AttributeError):
        return "unknown"


def synthetic(rng):
    """Flat judgment arrays, per-row ACU counts, and the complete 500 x 12 summary-score matrix."""
    n_docs, full_docs = 2500, 500
    quality = np.sort(rng.uniform(0.30, 0.50, N_SYSTEMS))
    difficulty = rng.normal(0.0, 0.12, n_docs)
    systems = [
        np.arange(N_SYSTEMS) if d < full_docs else np.sort(rng.choice(N_SYSTEMS, 8, replace=False))
        for d in range(n_docs)
    ]
    doc_of = np.repeat(np.arange(n_docs), [len(s) for s in systems])
    sys_of = np.concatenate(systems)
    n_sum = len(doc_of)
    acus_per_ref = rng.choice([7, 8, 8, 8, 9], n_docs)
    first_acu = np.concatenate([[0], np.cumsum(acus_per_ref)[:-1]])
    k = acus_per_ref[doc_of]  # ACUs of each summary's reference
    p_true = np.clip(quality[sys_of] + difficulty[doc_of] + rng.normal(0, 0.1, n_sum), 0.02, 0.98)
    error = rng.beta(1.2, 20.0, 300)  # per-worker flip rate, mean ~0.057
    workers = np.argpartition(rng.random((n_sum, 300)), 3, axis=1)[:, :3]
    # Rows ordered like the database's: by summary, worker (assignment), then ACU.
    summary = np.repeat(np.arange(n_sum), 3 * k)
    worker = np.repeat(workers.ravel(), np.repeat(k, 3))
    acu_local = np.concatenate([np.tile(np.arange(kk), 3) for kk in k])
    truth_by_pair = rng.random(k.sum()) < np.repeat(p_true, k)
    pair_start = np.concatenate([[0], np.cumsum(k)[:-1]])
    truth = truth_by_pair[pair_start[summary] + acu_local]
    present = truth ^ (rng.random(summary.size) < error[worker])
    ids = (summary + 100_001, first_acu[doc_of][summary] + acu_local + 500_001, worker + 9_001, present)
    return ids, k[summary], doc_of, sys_of, full_docs


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def traced_peak(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, peak


def report(label, seconds, peak, extra=""):
    print(f"{label:<58} {seconds * 1000:>10.1f} ms  peak {peak / 2**20:>8.1f} MiB  {extra}", flush=True)


def stage(label, fn, repeat, extra=lambda r: ""):
    result, peak = traced_peak(fn)
    report(label, best_of(fn, repeat), peak, extra(result))
    return result


def _value_counts(units, values):
    """The units x values count matrix of the pairable units: the package's `value_counts` input."""
    codes, _ = group_codes(units)
    keep = np.bincount(codes)[codes] >= 2
    unit_codes, _ = group_codes(codes[keep])
    value_codes, (domain,) = group_codes(np.asarray(values, dtype=float)[keep])
    counts = np.zeros((unit_codes.max() + 1, len(domain)))
    np.add.at(counts, (unit_codes, value_codes), 1.0)
    return counts, domain


def krippendorff_subset(ids, n_summaries, repeat):
    """Both alphas on the first summaries: the app's per-unit sums against the krippendorff package
    on the dense workers x units reliability matrix and on the units x values counts."""
    import krippendorff

    s, a, w, p = ids
    keep = s < s.min() + n_summaries
    s, a, w, p = s[keep], a[keep], w[keep], p[keep]
    units, _ = group_codes(s, a)
    w_codes, _ = group_codes(w)
    nominal = np.full((w_codes.max() + 1, units.max() + 1), np.nan)
    nominal[w_codes, units] = p
    keys, workers, scores = summary_worker_scores(s, a, w, p)
    u_codes, _ = group_codes(keys)
    wk, _ = group_codes(workers)
    interval = np.full((wk.max() + 1, u_codes.max() + 1), np.nan)
    interval[wk, u_codes] = scores
    counts = {"nominal": _value_counts(units, p), "interval": _value_counts(u_codes, scores)}
    print(
        f"krippendorff subset: {n_summaries} summaries, {keep.sum()} labels, matrices "
        f"{nominal.shape[0]}x{nominal.shape[1]} and {interval.shape[0]}x{interval.shape[1]}, value counts "
        + " and ".join(f"{c.shape[0]}x{c.shape[1]}" for c, _ in counts.values())
    )
    for name, ours, dense, level in [
        ("ACU level (nominal)", lambda: acu_level_alpha(s, a, w, p), nominal, "nominal"),
        ("summary level (interval)", lambda: summary_level_alpha(s, a, w, p), interval, "interval"),
    ]:
        matrix, domain = counts[level]
        packaged = [
            ("dense matrix", lambda dense=dense, level=level: krippendorff.alpha(dense, level_of_measurement=level)),
            (
                "value counts",
                lambda matrix=matrix, domain=domain, level=level: krippendorff.alpha(
                    value_counts=matrix, value_domain=domain, level_of_measurement=level
                ),
            ),
        ]
        t_ours = best_of(ours, repeat)
        line = f"  {name:<26} sums {ours():.12f} in {t_ours * 1000:8.2f} ms"
        for label, package in packaged:
            t_pkg = best_of(package, max(1, repeat // 3))
            line += f" | package, {label} {package():.12f} in {t_pkg * 1000:9.2f} ms ({t_pkg / t_ours:7.1f}x)"
        print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced power analysis (smoke run)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--plain-resamples", type=int, default=5000)
    parser.add_argument("--subset", type=int, default=2000, help="summaries for the krippendorff comparison")
    args = parser.parse_args()
    print(
        f"numpy {np.__version__}, OpenBLAS kernel {openblas_core()}, OPENBLAS_CORETYPE="
        f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, cores {os.cpu_count()}"
    )

    rng = np.random.default_rng(SEED)
    ids, acu_counts, doc_of, sys_of, full_docs = synthetic(rng)
    s, a, w, p = ids
    print(
        f"data: {len(np.unique(doc_of))} documents, {len(doc_of)} summaries, {s.size} labels, "
        f"{len(np.unique(w))} workers\n"
    )

    stage(
        "aggregation: majority per (summary, ACU) + summary scores",
        lambda: acu_scores_by_summary(s, a, p, acu_counts),
        args.repeat,
    )
    units, _ = group_codes(s, a)
    keys, workers, scores = summary_worker_scores(s, a, w, p, acu_counts)
    s_units, _ = group_codes(keys)
    stage(
        "alpha ACU level, nominal, from (unit, value) arrays",
        lambda: alpha_nominal(units, p),
        args.repeat,
        lambda r: f"alpha = {r:.4f}",
    )
    stage(
        "alpha summary level, interval, from (unit, value) arrays",
        lambda: alpha_interval(s_units, scores),
        args.repeat,
        lambda r: f"alpha = {r:.4f}",
    )
    stage(
        "both alphas from (unit, value) arrays",
        lambda: (alpha_nominal(units, p), alpha_interval(s_units, scores)),
        args.repeat,
    )
    stage("alpha ACU level from judgments (ids grouped)", lambda: acu_level_alpha(s, a, w, p), args.repeat)
    stage(
        "alpha summary level from judgments (ids grouped)",
        lambda: summary_level_alpha(s, a, w, p, acu_counts),
        args.repeat,
    )
    krippendorff_subset(ids, args.subset, args.repeat)

    # The complete 500 x 12 matrix of summary scores (documents with all systems).
    summary_keys, summary_scores = acu_scores_by_summary(s, a, p, acu_counts)
    full = doc_of < full_docs
    human = np.zeros((full_docs, N_SYSTEMS))
    human[doc_of[full], sys_of[full]] = summary_scores[full]
    metric = human + rng.normal(0, 0.15, human.shape) + np.linspace(0, 0.02, N_SYSTEMS)
    print()
    stage(
        "system bootstrap CIs, 500 docs x 12 systems, 10,000 resamples",
        lambda: system_cis(human, 10_000, rng=1),
        args.repeat,
    )
    stage(
        "paired bootstrap tests, 66 pairs, 500 docs, 100,000 resamples",
        lambda: paired_bootstrap(human, 100_000, rng=2),
        max(1, args.repeat // 2),
    )
    ci = stage(
        "system-level Kendall bootstrap CI, 100,000 resamples",
        lambda: correlation_ci(human, metric, "system", "kendall", 100_000, rng=3),
        args.repeat,
        lambda r: f"tau = {r[0]:.4f} [{r[1]:.4f}, {r[2]:.4f}]",
    )
    plain_kendall(human, metric, args.plain_resamples, ci)

    print()
    if args.quick:
        kwargs = {"sizes": (10, 100, 1000), "n_trials": 50, "n_resamples": 10_000}
    else:
        kwargs = {"sizes": ROSE_SIZES, "n_trials": 1000, "n_resamples": 100_000}
    label = f"power analysis, 66 pairs, B={kwargs['n_resamples']:,}, T={kwargs['n_trials']:,}, n={kwargs['sizes']}"
    print(label, flush=True)
    start = time.perf_counter()
    result, peak = traced_peak(
        lambda: power_analysis(
            human, rng=4, progress=lambda n, sec: print(f"  n = {n:>6}: {sec:8.2f} s", flush=True), **kwargs
        )
    )
    report("power analysis total", time.perf_counter() - start, peak)
    np.set_printoptions(precision=3, suppress=True)
    print("  mean resamples per (trial, pair) by size:", (result.resamples / (kwargs["n_trials"] * 66)).round(0))
    print("  power by bucket of score difference (rows: sizes; columns: quintiles, smallest first):")
    print("\n".join("    " + line for line in str(result.bucket_power).splitlines()))
    print(f"\npeak resident memory of the process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


def plain_kendall(human, metric, n_plain, ci):
    """The same Kendall bootstrap as a plain loop over its first resamples, one resample at a time.

    The loop takes the system means of each resample and calls scipy.stats.kendalltau, and, for
    the identity check, scoring.stats.correlation.kendall on the same means (scipy splits ties between
    equal rational means by their last-bit rounding; ours ties them).
    """
    from scipy.stats import kendalltau

    from scoring.stats.correlation import kendall

    def loop(corr):
        out = []
        for idx in resample_indices(len(human), 100_000, 3):
            for row in idx:
                out.append(corr(human[row].mean(axis=0), metric[row].mean(axis=0)))
                if len(out) == n_plain:
                    return np.array(out)

    start = time.perf_counter()
    plain = loop(lambda x, y: kendalltau(x, y).statistic)
    t_plain = (time.perf_counter() - start) / n_plain * 100_000
    ours = loop(kendall)
    t_vec = best_of(lambda: bootstrap_correlations(human, metric, "system", "kendall", 100_000, rng=3), 3)
    vectorized = bootstrap_correlations(human, metric, "system", "kendall", 100_000, rng=3)[:n_plain]
    gap = np.abs(plain - vectorized)
    print(
        f"  plain loop (scipy.kendalltau per resample) over the first {n_plain:,} of the same resamples: "
        f"{t_plain:.1f} s per 100,000 (extrapolated) vs vectorized {t_vec * 1000:.0f} ms: ratio {t_plain / t_vec:.0f}x"
    )
    print(
        f"  vectorized == plain loop with scoring.stats.correlation.kendall: {np.array_equal(ours, vectorized)}; "
        f"vs scipy: max |diff| {gap[gap < 1e-9].max():.1e} except {np.count_nonzero(gap >= 1e-9)} "
        f"resamples with tied system means"
    )


if __name__ == "__main__":
    main()
