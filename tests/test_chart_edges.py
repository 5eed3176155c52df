"""Issue 47 (seen in the study walk's screenshots): the agreement chart's time ticks all differ
when runs share a minute, and points on the edge of a score axis (a score of 1.0) are drawn
whole, not cut at the plot's edge."""

import pytest

from scoring.results import charts

pytestmark = pytest.mark.portable


def test_runs_in_one_minute_get_distinct_tick_labels():
    times = ["2026-12-05T10:46:01", "2026-12-05T10:46:07", "2026-12-05T10:46:07.5", "2026-12-05T10:47:00"]
    labels = charts.run_labels(times)
    assert labels == [
        "2026-12-05 10:46:01",
        "2026-12-05 10:46:07",
        "2026-12-05 10:46:07 #2",
        "2026-12-05 10:47:00",
    ]
    assert charts.run_labels(["2026-12-05T10:46:01", "2026-12-05T10:47:30"]) == [
        "2026-12-05 10:46",
        "2026-12-05 10:47",
    ]
    trend = charts.alpha_trend(
        [{"at": f"2026-12-05T10:46:{i:02d}", "acu_level": 0.5, "summary_level": 0.6} for i in range(20)],
        {"acu_level": 0.7528, "summary_level": 0.7571},
    )
    assert len(set(trend["xLabels"])) == 20


def test_points_on_the_axis_edge_are_not_clipped():
    systems = {
        name: {"acu": v, "normalized_acu": v, "acu_ci": [v, v], "normalized_acu_ci": [v, v]}
        for name, v in (("a", 1.0), ("b", 0.0))
    }
    board = charts.leaderboard(systems)
    assert board["options"]["scales"]["y"]["max"] == 1  # the value sits on the edge of the axis
    assert all(d["clip"] is False for d in board["data"]["datasets"])
    scatter = charts.sampled_length_scatter([10, 20], [1.0, 0.5], [1.0, 0.4])
    assert scatter["options"]["scales"]["y"]["max"] == 1
    assert all(d["clip"] is False for d in scatter["data"]["datasets"])


def test_the_leaderboard_png_says_what_its_intervals_are_and_their_n():
    """The chart's PNG download travels alone (into a slide, a paper): its title said "95% bootstrap
    confidence intervals" without what was resampled or how many documents."""
    from scoring.results.charts import leaderboard

    def system(acu, documents):
        return {
            "acu": acu,
            "acu_ci": [acu - 0.1, acu + 0.1],
            "normalized_acu": acu,
            "normalized_acu_ci": None,
            "documents": documents,
        }

    title = leaderboard({"a": system(0.5, 100), "b": system(0.4, 100)})["options"]["plugins"]["title"]["text"]
    assert title == ["System scores, 95% percentile bootstrap CIs", "over documents (n = 100 per system)"]
    title = leaderboard({"a": system(0.5, 50), "b": system(0.4, 100)})["options"]["plugins"]["title"]["text"]
    assert title[1] == "over documents (n = 50–100 per system)"


def test_the_agreement_chart_says_why_runs_have_no_point():
    """A round where each summary has one annotator (an imported round): every α is undefined and
    the chart was an empty plot with no word why; its subtitle now says it."""
    rose = {"acu_level": 0.7528, "summary_level": 0.7571}
    empty = charts.alpha_trend([{"at": "2026-12-05T10:46:01", "acu_level": None, "summary_level": None}], rose)
    subtitle = empty["options"]["plugins"]["subtitle"]
    assert subtitle["display"] is True
    assert subtitle["text"] == [
        "α undefined (–) in every scoring run, so no point:",
        "it needs two annotators on a unit",
    ]
    some = charts.alpha_trend(
        [
            {"at": "2026-12-05T10:46:01", "acu_level": None, "summary_level": None},
            {"at": "2026-12-05T10:47:01", "acu_level": 0.4, "summary_level": 0.5},
        ],
        rose,
    )
    assert "in 1 of 2 scoring runs" in some["options"]["plugins"]["subtitle"]["text"][0]
    full = charts.alpha_trend([{"at": "2026-12-05T10:47:01", "acu_level": 0.4, "summary_level": 0.5}], rose)
    assert "subtitle" not in full["options"]["plugins"]
