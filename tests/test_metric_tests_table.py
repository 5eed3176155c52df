"""The metric-against-metric table reads right (issue 47, item 13): green only where both tests
agree on a sample that is not small, and a Δ of 0.000 names no better metric."""

import re

from django.template.loader import render_to_string


def rows(significance, small=False):
    html = render_to_string(
        "scoring/_metric_tests.html",
        {
            "run": {
                "outputs": {"method": "kendall", "significance": significance, "small_sample": small, "documents": 50}
            }
        },
    )
    return html, re.findall(r"<tr>(.*?)</tr>", html.split("<tbody>")[1], re.S)


def test_green_only_when_both_tests_agree_and_the_sample_is_not_small():
    pair = {
        "better": "m1",
        "worse": "m2",
        "level": "system",
        "delta": 0.2,
        "p_permutation": 0.129,
        "p": 0.129,
        "p_bootstrap": 0.004,
        "documents": 5,
        "a": "m1",
        "b": "m2",
    }
    html, (row,) = rows([pair])
    assert "sig yes" not in row and "sig mixed" in row and "disagree" in row
    html, (row,) = rows([{**pair, "p_permutation": 0.01, "p": 0.01}])
    assert row.count("sig yes") == 2
    html, (row,) = rows([{**pair, "p_permutation": 0.01, "p": 0.01}], small=True)
    assert "sig yes" not in row and 'id="no-significance"' in html


def test_a_zero_delta_is_a_tie_not_a_better_metric():
    html, (tie, better) = rows(
        [
            {
                "better": "m1",
                "worse": "m2",
                "level": "summary",
                "delta": 0.0001,
                "p_permutation": 1.0,
                "p": 1.0,
                "p_bootstrap": 1.0,
                "documents": 50,
                "a": "m1",
                "b": "m2",
            },
            {
                "better": "m3",
                "worse": "m2",
                "level": "summary",
                "delta": 0.2,
                "p_permutation": 0.5,
                "p": 0.5,
                "p_bootstrap": 0.5,
                "documents": 50,
                "a": "m3",
                "b": "m2",
            },
        ]
    )
    assert ">tie<" in tie and "<b>m1</b>" not in tie
    assert "<b>m3</b>" in better and ">tie<" not in better
    assert "Better metric" not in html
