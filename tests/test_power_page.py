"""The systems page's power analysis: its figures against a direct numpy computation of RoSE Alg. 1
on the round's own scores, labels that say what the power is of (the test, alpha, the effect), and
a form that refuses bad input with a message instead of starting another run."""

import json
import re

import numpy as np
import pytest
from django.urls import reverse

from scoring.models import ScoringRun
from scoring.runs import statistics
from scoring.runs.services import current_scores

from .crowd_data import demo_dataset, simulated_round

pytestmark = pytest.mark.django_db


def direct_power(scores, sizes, n_trials, n_resamples, seed, alpha=0.05):
    """Alg. 1 as written, pair by pair with numpy: draw n documents, resample them, p = share of
    resample means of the better-minus-worse difference not above 0; power = share of p < alpha."""
    rng = np.random.default_rng(seed)
    means = scores.mean(axis=0)
    m = scores.shape[1]
    pairs = [(a, b) if means[a] >= means[b] else (b, a) for a in range(m) for b in range(a + 1, m)]
    power = np.zeros((len(pairs), len(sizes)))
    for j, n in enumerate(sizes):
        for _ in range(n_trials):
            docs = rng.integers(0, len(scores), n)
            idx = rng.integers(0, n, (n_resamples, n))
            for i, (a, b) in enumerate(pairs):
                d = scores[docs, a] - scores[docs, b]
                power[i, j] += np.mean(d[idx].mean(axis=1) <= 0) < alpha
    differences = np.array([means[a] - means[b] for a, b in pairs])
    return pairs, differences, power / n_trials


def test_the_pages_power_agrees_with_a_direct_computation_and_says_what_it_is_of(client, lead):
    dataset, batch = simulated_round()
    current_scores(dataset, batch, trigger="test", parts=())  # the round's scores run, which the page reads
    names, _, matrix = statistics.human_matrix_partial(dataset, batch)
    assert not np.isnan(matrix).any() and len(matrix) >= 10 and len(names) >= 3  # the complete-data path
    sizes, trials, resamples = [10, 40], 300, 400
    run = statistics.start(
        dataset, ScoringRun.Kind.POWER, {"sizes": sizes, "n_trials": trials, "n_resamples": resamples, "seed": 3}, batch
    )
    statistics.run_power(run.pk)
    run.refresh_from_db()
    assert run.status == "done", run.error
    out = run.outputs

    pairs, differences, reference = direct_power(matrix, sizes, trials, resamples, seed=11)
    assert out["pairs"] == [[names[a], names[b]] for a, b in pairs]
    assert np.allclose(out["differences"], differences, atol=1e-12)
    stored = np.array(out["pair_power"])
    p = (stored + reference) / 2  # two estimates of `trials` decisions each: within 4.5 standard errors
    assert (np.abs(stored - reference) <= 4.5 * np.sqrt(np.maximum(p * (1 - p), 0.01) * 2 / trials)).all()
    for bucket in out["buckets"]:  # each line of the chart: the mean power of its pairs
        members = [
            i for i, d in enumerate(out["differences"]) if bucket["min_difference"] <= d <= bucket["max_difference"]
        ]
        assert len(members) == bucket["pairs"]
        assert np.allclose(bucket["power"], stored[members].mean(axis=0))

    client.force_login(lead)
    page = client.get(reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    chart = json.loads(re.search(r'<script id="power-chart" type="application/json">(.*?)</script>', page, re.S)[1])
    lines = [d for d in chart["data"]["datasets"] if not d.get("reference")]
    shown = [b for b in out["buckets"] if b["pairs"]]
    assert [[pt["y"] for pt in line["data"]] for line in lines] == [b["power"] for b in shown]
    assert all(line["label"].startswith("Δ ACU score ") for line in lines)
    title = " ".join(chart["options"]["plugins"]["title"]["text"])
    assert "one-sided paired bootstrap test" in title and "α = 0.05" in title and "mean ACU score" in title
    assert chart["options"]["scales"]["y"]["title"]["text"] == "power: share of trials with p < 0.05"
    what = re.search(r'<p class="hint" id="power-what">(.*?)</p>', page, re.S)[1]
    assert "one-sided paired bootstrap test" in what and "α = 0.05" in what and "difference in mean ACU score" in what
    assert 'Trials <small class="hint">(10–5,000)</small>' in page
    assert 'Resamples <small class="hint">(10–100,000)</small>' in page


@pytest.mark.parametrize(
    "form, message",
    [
        ({"n_trials": "abc", "n_resamples": "200"}, "Trials must be a whole number from 10 to 5,000, not 'abc'"),
        ({"n_trials": "20", "n_resamples": "-5"}, "Resamples must be a whole number from 10 to 100,000, not '-5'"),
        ({"n_trials": "1", "n_resamples": "200"}, "Trials must be a whole number from 10 to 5,000, not '1'"),
        ({"n_trials": "20", "n_resamples": "1e9"}, "Resamples must be a whole number from 10 to 100,000"),
        ({"n_trials": "9000", "n_resamples": "200"}, "Trials must be a whole number from 10 to 5,000, not '9000'"),
    ],
)
def test_bad_input_in_the_power_form_starts_nothing_and_says_why(client, lead, form, message):
    """The form ignored a value it could not read (a typo ran the defaults, 1,000 trials × 100,000
    resamples) and silently moved one outside its range to the nearest bound."""
    dataset = demo_dataset()
    client.force_login(lead)
    response = client.post(reverse("dashboard_start", args=[dataset.pk, "power"]), form, follow=True)
    assert response.redirect_chain[-1][0] == reverse("dashboard_systems", args=[dataset.pk])
    said = " ".join(str(m) for m in response.context["messages"])
    assert message in said and "no power analysis was started" in said
    assert not ScoringRun.objects.filter(kind=ScoringRun.Kind.POWER).exists()


def test_the_power_form_reads_thousands_separators():
    assert statistics.power_parameters({"n_trials": "1,000", "n_resamples": " 20 000 "}) == {
        **statistics.POWER_DEFAULTS,
        "n_trials": 1000,
        "n_resamples": 20000,
    }
    assert statistics.power_parameters({}) == statistics.POWER_DEFAULTS
