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


def test_a_p_value_of_no_resample_reads_below_one_over_the_draws_not_zero():
    """rouge against a random metric on REALSumm: no permutation and no resample on the other side,
    p = 0 stored; the table said "0.000", which a lab would quote as p = 0. It reads < 1/draws."""
    pair = {"better": "m1", "worse": "m2", "level": "system", "delta": 0.8, "p_permutation": 0.0}
    pair.update(p=0.0, p_bootstrap=0.0, documents=100, a="m1", b="m2")
    html = render_to_string(
        "scoring/_metric_tests.html",
        {
            "run": {
                "parameters": {"n_permutations": 1000, "n_resamples": 10000},
                "outputs": {"method": "kendall", "significance": [pair], "small_sample": False, "documents": 100},
            }
        },
    )
    (row,) = re.findall(r"<tr>(.*?)</tr>", html.split("<tbody>")[1], re.S)
    assert "&lt; 0.001</td>" in row and "&lt; 0.0001</td>" in row and "0.000<" not in row


def test_pvalue_filter_keeps_what_the_draws_can_tell():
    from scoring.templatetags.numbers import pvalue

    assert pvalue(0.0, 200) == "< 0.005" and pvalue(0.0004, 10000) == "0.0004"
    assert pvalue(0.0372, 10000) == "0.037" and pvalue(None, 1000) == "–" and pvalue(float("nan"), 10) == "–"


def test_the_significance_matrix_reads_p_zero_as_below_one_over_the_resamples():
    """abs_bart_out against the weakest REALSumm systems: no resample of 10,000 on the other side;
    the matrix cell said "0.000"."""
    row = {"system": "a", "cells": [{"p": 0.0, "level": "strong", "against": "b", "n": 100, "small": False}]}
    html = render_to_string("scoring/_significance_row.html", {"row": row, "resamples": 10000})
    assert ">&lt; 0.0001</td>" in html and "0.000<" not in html


def test_pvalue_holm_filter_reads_zero_as_its_bound():
    """A Holm-adjusted 0 (no resample on the other side) stands for "below 2 x pairs / resamples",
    never for 0 nor for the raw bound "< 1/resamples"."""
    from scoring.templatetags.numbers import pvalue_holm

    assert pvalue_holm(0.0, 0.0012) == "< 0.0012" and pvalue_holm(0.0, 0.06) == "< 0.06"
    assert pvalue_holm(0.00004, 0.0012) == "0.00004" and pvalue_holm(0.0372, 0.01) == "0.037"
    assert (
        pvalue_holm(1.0, 0.01) == "1.000" and pvalue_holm(None, 0.01) == "–" and pvalue_holm(float("nan"), 0.01) == "–"
    )
