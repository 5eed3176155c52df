"""How many ratings each protocol's score holds, through the rating export and import: the
protocols of one summary may hold different numbers of ratings (a round whose Prior batch had three
places and Ref-free two; a file whose means hold different counts), and each keeps its own."""

import json

import pytest

from annotation.importing.errors import DatasetImportError
from annotation.importing.protocols import read_protocol_file
from annotation.models import ProtocolRating, RatingRound
from annotation.services.ratings import export_ratings, import_ratings
from hits.services.dataset_import import import_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

SOURCE = "A storm hit the coast on Monday. Thousands lost power. Schools closed for two days."
REFERENCE = "A storm hit the coast. Thousands lost power."


def _file(tmp_path, annotations, name="ratings.json"):
    example = {
        "example_id": "d1",
        "source": SOURCE,
        "reference": REFERENCE,
        "system_outputs": {"a": "A storm hit the coast.", "b": "Schools closed."},
        "annotations": annotations,
    }
    path = tmp_path / name
    path.write_text(json.dumps([example]))
    return path


def _counts(round_):
    return {
        (s, p): n
        for s, p, n in ProtocolRating.objects.filter(round=round_, rater="").values_list(
            "summary__system__name", "protocol", "ratings"
        )
    }


def test_each_protocol_of_a_summary_exports_its_own_number_of_ratings(tmp_path):
    """Three raters under Prior and two under Ref-free: the export said 2 ratings for both (the
    count of whichever protocol came last)."""
    raters = {"prior": {"w1": 4, "w2": 3, "w3": 5}, "ref_free": {"w1": 2, "w2": 4}}
    path = _file(tmp_path, {"a": {"raters": raters}, "b": {"raters": {"prior": {"w1": 1}}}})
    import_dataset(path, name="counts", fmt="rose-protocols")
    exported = export_ratings(RatingRound.objects.get(dataset__name="counts"))
    annotations = exported[0]["annotations"]
    assert annotations["a"]["ratings"] == {"prior": 3, "ref_free": 2}
    assert annotations["a"]["prior"] == 4 and annotations["a"]["ref_free"] == 3
    assert annotations["b"]["ratings"] == {"prior": 1}


def test_means_with_different_counts_read_back_the_same(tmp_path):
    path = _file(
        tmp_path, {"a": {"prior": 4, "ref_free": 3.5, "ratings": {"prior": 3, "ref_free": 2}}, "b": {"prior": 2}}
    )
    import_dataset(path, name="counts", fmt="rose-protocols")
    dataset_round = RatingRound.objects.get(dataset__name="counts")
    assert _counts(dataset_round) == {("a", "prior"): 3, ("a", "ref_free"): 2, ("b", "prior"): 3}
    again = tmp_path / "again.json"
    again.write_text(json.dumps(export_ratings(dataset_round)))
    imported = import_ratings(dataset_round.dataset, read_protocol_file(again), name="again")
    assert _counts(RatingRound.objects.get(pk=imported.round_id)) == _counts(dataset_round)


def test_a_file_of_the_earlier_export_gives_one_count_for_every_protocol(tmp_path):
    path = _file(tmp_path, {"a": {"prior": 4, "ref_free": 3.5, "ratings": 5}, "b": {"prior": 2}})
    import_dataset(path, name="counts", fmt="rose-protocols")
    assert _counts(RatingRound.objects.get(dataset__name="counts")) == {
        ("a", "prior"): 5,
        ("a", "ref_free"): 5,
        ("b", "prior"): 3,
    }


@pytest.mark.parametrize(
    "ratings, message",
    [
        ({"acu": 3}, r"a whole number or an object \{protocol: number of ratings\}"),
        ({"prior": 0}, r"\['ratings'\]\['prior'\] must be a whole number from 1 to 50"),
        ("3", r"\['ratings'\] must be a whole number from 1 to 50"),
    ],
)
def test_a_bad_count_is_refused_naming_it(tmp_path, ratings, message):
    path = _file(tmp_path, {"a": {"prior": 4, "ratings": ratings}})
    with pytest.raises(DatasetImportError, match=message):
        read_protocol_file(path)
