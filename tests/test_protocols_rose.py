"""RoSE's protocol study (§5) imported through the app: its figures, held exactly.

The ratings are RoSE's own (../shared/data/rose-protocols/protocol-comparison.json: 100 CNN/DM
examples x 12 systems, each protocol score the mean of three ratings, `gold` the reference rated
as a system). Summary length is its words (whitespace tokens, `Summary.word_count`): that length
reproduces §5's system-level correlations with length (characters give 0.821 and 0.872)."""

import json

import numpy as np
import pytest
from scipy.stats import pearsonr

from annotation.importing.errors import DatasetImportError
from annotation.importing.protocols import read_protocol_file
from annotation.models import ProtocolRating, RatingRound, SummaryACUScore
from annotation.services.ratings import export_ratings, import_ratings
from hits.services.dataset_import import import_dataset
from scoring.protocols.report import Settings, build_report, correlation_value
from scoring.protocols.selectors import pick_round, protocol_data
from tests.conftest import SHARED

ROSE = SHARED / "data" / "rose-protocols" / "protocol-comparison.json"
QUICK = Settings(n_resamples=200, power_sizes=(10, 100), power_trials=40, power_resamples=200)


@pytest.fixture
def rose(db):
    import_dataset(ROSE, name="rose-protocols", fmt="rose-protocols")
    from annotation.models import Dataset

    return Dataset.objects.get(name="rose-protocols")


@pytest.fixture
def raw():
    return json.loads(ROSE.read_text())


def _by_hand(raw, key, systems):
    """documents x systems straight from the file (the test's own reading, not the app's)."""
    if key == "length":
        return np.array([[len(e["system_outputs"][s].split()) for s in systems] for e in raw], dtype=float)
    return np.array([[e["annotations"][s][key] for s in systems] for e in raw], dtype=float)


def test_import_stores_every_rating_and_acu_score(rose):
    round_ = RatingRound.objects.get(dataset=rose)
    assert round_.kind == RatingRound.Kind.IMPORTED
    assert rose.documents.count() == 100 and rose.systems.count() == 12
    assert ProtocolRating.objects.filter(round=round_).count() == 100 * 12 * 3
    assert set(ProtocolRating.objects.filter(round=round_).values_list("ratings", flat=True)) == {3}
    assert SummaryACUScore.objects.filter(round=round_).count() == 1200


def test_section_5_system_level_figures_exactly(rose):
    report = build_report(protocol_data(pick_round(rose)), QUICK)
    assert report["documents"] == 100 and len(report["systems"]) == 12

    def r(a, b):
        return round(correlation_value(report, "system", a, b), 3)

    assert r("prior", "ref_free") == 0.926
    assert round(report["length"]["system"]["prior"]["value"], 3) == 0.831
    assert round(report["length"]["system"]["ref_free"]["value"], 3) == 0.861
    assert r("ref_free", "ref_based") == -0.247
    assert r("ref_based", "acu") == 0.764
    for entry in report["correlations"]["system"]:  # the bootstrap interval brackets the value
        assert entry["low"] <= entry["value"] <= entry["high"], entry


def test_summary_level_matrix_rankings_and_power_match_the_file(rose, raw):
    report = build_report(protocol_data(pick_round(rose)), QUICK)
    systems = report["systems"]
    keys = {"prior": "prior", "ref_free": "ref_free", "ref_based": "ref_based", "acu": "normalized_acu"}
    hand = {k: _by_hand(raw, v, systems) for k, v in keys.items()}
    assert len(report["correlations"]["summary"]) == 6
    for entry in report["correlations"]["summary"]:
        per_doc = [
            pearsonr(x, y)[0] if np.ptp(x) and np.ptp(y) else 0.0
            for x, y in zip(hand[entry["a"]], hand[entry["b"]], strict=True)
        ]
        assert entry["value"] == pytest.approx(np.mean(per_doc), abs=1e-12)
        assert entry["documents"] == 100
    length = _by_hand(raw, "length", systems)
    for name, ranking in report["rankings"].items():
        means = hand[name].mean(axis=0)
        # best first; systems whose means are equal (to rounding: sums of thirds) share a rank, by name
        exact = np.round(means, 9)
        assert [row["system"] for row in ranking] == [systems[j] for j in np.lexsort((systems, -exact))]
        assert [row["rank"] for row in ranking] == [
            1 + int((exact > exact[systems.index(row["system"])]).sum()) for row in ranking
        ]
        assert [row["mean"] for row in ranking] == pytest.approx(sorted(means, reverse=True))
    # Ref-free ranks the longer systems first: the system-level correlation with length, by hand
    assert report["length"]["system"]["ref_free"]["value"] == pytest.approx(
        pearsonr(hand["ref_free"].mean(axis=0), length.mean(axis=0))[0]
    )
    for name, power in report["power"].items():
        buckets = np.array([b["power"] for b in power["buckets"]]).T  # sizes x buckets
        assert (
            buckets.shape == (2, 5)
            and sum(b["pairs"] for b in power["buckets"]) == 66
            and ((buckets >= 0) & (buckets <= 1)).all()
        )
        assert power["mean"][1] > power["mean"][0], name  # 100 documents detect more than 10
        assert buckets[1, -1] >= buckets[1, 0], name  # large differences are found more often


def test_export_reads_back_the_same_ratings(rose, tmp_path):
    round_ = pick_round(rose)
    path = tmp_path / "ratings.json"
    path.write_text(json.dumps(export_ratings(round_)))
    again = import_ratings(rose, read_protocol_file(path), name="again")
    assert again.ratings == 3600 and again.acu_scores == 1200
    first = build_report(protocol_data(round_), QUICK)
    second = build_report(protocol_data(RatingRound.objects.get(pk=again.round_id)), QUICK)
    assert second["correlations"] == first["correlations"] and second["rankings"] == first["rankings"]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda e: e[3]["annotations"]["bart"].update(prior=6), "outside 1 to 5"),
        (lambda e: e[3]["annotations"]["bart"].update(prior="4"), "must be a number"),
        (lambda e: e[3]["annotations"].update(nosuch={"prior": 3}), "no output"),
        (lambda e: e[5]["system_outputs"].update(bart="A different summary."), "differs from the dataset's"),
        (lambda e: e.append(dict(e[0])), "duplicate example_id"),
        (lambda e: e[2]["annotations"]["bart"].pop("normalized_acu"), "without the other"),
    ],
)
def test_a_bad_rating_file_writes_nothing(rose, raw, tmp_path, change, message):
    change(raw)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    before = ProtocolRating.objects.count()
    with pytest.raises(DatasetImportError, match=message):
        import_ratings(rose, read_protocol_file(path), name="bad")
    assert ProtocolRating.objects.count() == before
    assert not RatingRound.objects.filter(name="bad").exists()


def test_a_round_name_is_not_reused_without_replace(rose, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(export_ratings(pick_round(rose))))
    with pytest.raises(DatasetImportError, match="has a rating round named 'imported'"):
        import_ratings(rose, read_protocol_file(path))
    replaced = import_ratings(rose, read_protocol_file(path), replace=True)
    assert RatingRound.objects.filter(dataset=rose).count() == 1 and replaced.ratings == 3600


def test_the_llm_subset_rates_the_reference_under_two_protocols_only(db):
    """RoSE's LLM file: bart, brio, gpt3, t0 and the reference; the reference has Prior and Ref-free
    ratings only (its Ref-based and ACU scores are empty lists): it joins those comparisons and no other."""
    path = SHARED / "data" / "rose-protocols" / "protocol-comparison-llm.json"
    import_dataset(path, name="rose-llm", fmt="rose-protocols")
    round_ = RatingRound.objects.get(dataset__name="rose-llm")
    assert ProtocolRating.objects.filter(round=round_).count() == 100 * (4 * 3 + 2)
    assert SummaryACUScore.objects.filter(round=round_).count() == 400
    report = build_report(protocol_data(round_), QUICK, with_power=False)
    raw = json.loads(path.read_text())
    five, four = ["bart", "brio", "gpt3", "reference", "t0"], ["bart", "brio", "gpt3", "t0"]
    assert report["systems"] == five
    by_hand = {
        ("prior", "ref_free"): pearsonr(
            _by_hand(raw, "prior", five).mean(axis=0), _by_hand(raw, "ref_free", five).mean(axis=0)
        )[0],
        ("ref_based", "acu"): pearsonr(
            _by_hand(raw, "ref_based", four).mean(axis=0), _by_hand(raw, "normalized_acu", four).mean(axis=0)
        )[0],
        ("prior", "ref_based"): pearsonr(
            _by_hand(raw, "prior", four).mean(axis=0), _by_hand(raw, "ref_based", four).mean(axis=0)
        )[0],
    }
    for (a, b), value in by_hand.items():
        assert correlation_value(report, "system", a, b) == pytest.approx(value, abs=1e-12), (a, b)
    assert [r["system"] for r in report["rankings"]["prior"]].count("reference") == 1
    assert "reference" not in [r["system"] for r in report["rankings"]["ref_based"]]
    assert all(e["documents"] == 100 for e in report["correlations"]["summary"])


def test_a_bad_example_is_numbered_from_one(tmp_path, raw):
    """The first example's problem read "example 0: 'source' is missing ..."; a duplicate of the
    first read "(first: example 0)"."""
    raw[0]["source"] = ""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(DatasetImportError, match=r"example 1: 'source' is missing"):
        read_protocol_file(path)
    raw[0]["source"] = "A source."
    raw.append(dict(raw[0]))
    path.write_text(json.dumps(raw))
    with pytest.raises(DatasetImportError, match=rf"example {len(raw)}: duplicate example_id .* \(first: example 1\)"):
        read_protocol_file(path)
