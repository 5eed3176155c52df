"""Issue 47, item 14: the triage chart's axes write every tick with the same digits ("0.0" ... "1.0"),
and a line without any value (τ not measured) leaves no legend entry without a line."""

from types import SimpleNamespace

from scoring.machine.pages import triage_chart


def run_with(rows):
    return SimpleNamespace(figures={"triage": rows}, judge="nli", version=1, pk=7)


def test_tick_digits_and_no_empty_line():
    rows = [
        {"c": 0.6, "saved_share": 0.2, "agreement": 0.9, "system_kendall": None},
        {"c": 0.8, "saved_share": 0.5, "agreement": 0.85, "system_kendall": None},
    ]
    chart = triage_chart(run_with(rows))
    assert chart["options"]["scales"]["y"]["decimals"] == 1 and chart["options"]["scales"]["x"]["decimals"] == 2
    labels = [d["label"] for d in chart["data"]["datasets"]]
    assert labels == ["crowd judgments saved", "agreement with the human labels"]
    rows[1]["system_kendall"] = 0.67
    labels = [d["label"] for d in triage_chart(run_with(rows))["data"]["datasets"]]
    assert labels[-1] == "system-level Kendall τ with the human ranking"
    assert all(d["data"] for d in triage_chart(run_with(rows))["data"]["datasets"])
