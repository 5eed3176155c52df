"""A simulated protocol study on REALSumm's documents: raters follow a known mix of length
preference, reference similarity (the normalized ACU score of the REALSumm labels) and a taste of
their own, and the Protocols report recovers it within its intervals.

Each rater's 1-5 score of a summary is round(3 + w_length z(words) + w_acu z(normalized ACU) +
w_taste taste + noise), clipped to 1-5, with z standardized over all summaries, taste the rater's
own N(0, 1) value of the summary (the same under Prior and Ref-free: a preference) and noise
N(0, 0.4); three raters of a pool of six per example rate all its systems (one task per example)."""

import json

import numpy as np
import pytest

from annotation.importing.protocols import read_protocol_file
from annotation.models import Summary
from annotation.services.ratings import import_ratings
from scoring.protocols.report import Settings, build_report
from scoring.protocols.selectors import pick_round, protocol_data
from scoring.runs.selectors import run_summaries
from scoring.runs.services import compute_scores

MIX = {"prior": (0.6, 0.0, 0.5), "ref_free": (0.4, 0.3, 0.3), "ref_based": (0.0, 0.6, 0.0)}  # length, acu, taste
RATERS = [f"rater-{k}" for k in range(6)]


def _z(x):
    return (x - x.mean()) / x.std()


def _simulated_file(dataset, path, seed=0):
    run = compute_scores(dataset, n_resamples=100)
    part = run_summaries(run)
    acu = dict(zip(part["ids"], part["normalized_acu"], strict=True))
    summaries = list(
        Summary.objects.filter(document__dataset=dataset, pk__in=acu)
        .select_related("document", "system")
        .order_by("document__position", "system__name")
    )
    words = _z(np.array([s.word_count for s in summaries], dtype=float))
    score = _z(np.array([acu[s.pk] for s in summaries], dtype=float))
    rng = np.random.default_rng(seed)
    taste = {r: rng.normal(size=len(summaries)) for r in RATERS}
    examples: dict[int, dict] = {}
    for k, s in enumerate(summaries):
        doc = s.document
        example = examples.setdefault(
            doc.pk,
            {
                "example_id": doc.external_id,
                "source": doc.source,
                "reference": "r.",
                "system_outputs": {},
                "annotations": {},
            },
        )
        example["system_outputs"][s.system.name] = s.text
        raters = [RATERS[(doc.position + i) % len(RATERS)] for i in range(3)]
        entry = {"raters": {}}
        for protocol, (w_length, w_acu, w_taste) in MIX.items():
            latent = 3 + w_length * words[k] + w_acu * score[k]
            entry["raters"][protocol] = {
                r: float(np.clip(np.rint(latent + w_taste * taste[r][k] + rng.normal(0, 0.4)), 1, 5)) for r in raters
            }
        example["annotations"][s.system.name] = entry
    path.write_text(json.dumps(list(examples.values())))
    return len(summaries)


@pytest.fixture
def simulated(realsumm, tmp_path):
    n = _simulated_file(realsumm, tmp_path / "simulated.json")
    import_ratings(realsumm, read_protocol_file(tmp_path / "simulated.json"), name="simulated")
    settings = Settings(n_resamples=500, power_sizes=(10, 50), power_trials=20, power_resamples=200, min_examples=20)
    return n, build_report(protocol_data(pick_round(realsumm)), settings)


def test_the_report_recovers_the_mix_within_its_intervals(simulated):
    n, report = simulated
    assert n == 2500 and report["documents"] == 100 and len(report["systems"]) == 25
    assert report["acu_source"].startswith("scoring run")
    for protocol, (w_length, w_acu, _) in MIX.items():
        got = report["mix"][protocol]
        assert got["length"]["low"] <= w_length <= got["length"]["high"], (protocol, got)
        assert got["acu"]["low"] <= w_acu <= got["acu"]["high"], (protocol, got)
    length = report["length"]["summary"]
    assert length["prior"]["low"] > 0.3 and length["ref_free"]["low"] > 0.2  # they follow length
    assert length["ref_based"]["low"] < 0 < length["ref_based"]["high"]  # it does not
    acu = {(e["a"], e["b"]): e for e in report["correlations"]["summary"] if "acu" in (e["a"], e["b"])}
    assert acu[("ref_based", "acu")]["low"] > 0.5  # Ref-based follows the reference
    assert acu[("prior", "acu")]["high"] < 0.1


def test_the_case_study_sees_the_raters_taste(simulated):
    _, report = simulated
    case = report["case_study"]
    assert len(case["raters"]) == 6 and all(r["examples"] >= 20 for r in case["raters"])
    # Each rater's Ref-free agrees more with their own Prior (shared taste) than with the others' Ref-free.
    assert all(r["own_prior"] > r["others"] for r in case["raters"])
    assert case["mean"]["own_prior"] > case["mean"]["others"] + 0.1


def test_alpha_per_protocol_matches_the_raters_noise(simulated):
    _, report = simulated
    alpha = report["alpha"]
    assert set(alpha) == {"prior", "ref_free", "ref_based"}
    for protocol in alpha:
        assert alpha[protocol]["ratings"] == 2500 * 3
        assert 0 < alpha[protocol]["interval"] < 1 and 0 < alpha[protocol]["ordinal"] < 1
    # Prior's private taste is the largest share of its variance: it agrees least.
    assert alpha["prior"]["interval"] < alpha["ref_based"]["interval"]
