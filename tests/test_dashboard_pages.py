"""The systems and workers pages stay small whatever the size of the round (issue 14): the
systems page draws the scatter sample its run stored (never the per-summary values), builds
the significance matrix in Python, and the workers page shows 50 workers a page, sorted and
searched on the server, every worker reachable."""

import json
import random
import re

import numpy as np
import pytest
from django.db import connection
from django.template.defaultfilters import floatformat
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from hits.models import Assignment, Worker
from hits.services.simulate import simulate_crowd
from scoring.models import ScoringRun, ScoringRunDetail
from scoring.results import charts, leaderboard, worker_pages
from scoring.runs import services
from scoring.runs.selectors import run_part, run_summaries
from scoring.runs.services import compute_scores

from .crowd_data import batch_of, demo_dataset, published_batch, simulated_round

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowd():
    return simulated_round()


def _row(i: int, **values) -> dict:
    row = {
        "worker_id": 10_000 + i,
        "worker": f"w{i:03d}",
        "provider": "prolific",
        "assignments": i % 7,
        "labels": 10,
        "agreement": None if i % 10 == 0 else round(0.5 + (i % 13) / 30, 4),
        "gold_accuracy": None,
        "median_seconds": 30.0 + i,
        "hourly": 9.5,
        "flags": ["failed gold"] if i % 9 == 0 else [],
        "notes": ["low agreement"] if i % 7 == 0 else [],
        "excluded": False,
        "blocked": False,
        "machine_qc": None,
    }
    return {**row, **values}


# --- systems page -----------------------------------------------------------------------------


def test_a_run_stores_the_scatter_sample_it_draws(crowd):
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    part, summaries = run_part(run, "length_scatter"), run_summaries(run)
    step = services.scatter_step(len(summaries["ids"]))
    assert part["words"] == summaries["words"][::step]
    assert part["acu"] == [round(v, services.SCATTER_DIGITS) for v in summaries["acu"][::step]]
    chart = charts.stored_length_scatter(part)
    assert [list(p) for p in chart["data"]["datasets"][1]["data"]] == [
        [w, round(v, services.SCATTER_DIGITS)]
        for w, v in zip(summaries["words"], summaries["normalized_acu"], strict=True)
    ][::step]


def test_the_scatter_sample_of_a_large_round_is_bounded():
    n = 22_000
    step = n // services.SCATTER_SAMPLE
    part = services.scatter_sample(list(range(n)), [i / n for i in range(n)], [0.5] * n)
    assert len(part["words"]) == len(range(0, n, step)) <= 2 * services.SCATTER_SAMPLE
    assert part["words"][:3] == [0, step, 2 * step] and part["acu"][1] == round(step / n, services.SCATTER_DIGITS)


def test_the_systems_page_never_reads_the_per_summary_values(crowd, client, lead, django_assert_max_num_queries):
    dataset, batch = crowd
    compute_scores(dataset, batch, n_resamples=50, trigger="test")
    client.force_login(lead)
    url = reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}"
    client.get(url)
    with django_assert_max_num_queries(14), CaptureQueriesContext(connection) as queries:
        page = client.get(url).content.decode()
    assert 'id="scatter-chart"' in page
    assert not [q["sql"] for q in queries.captured_queries if "summaries" in q["sql"]]


def test_the_systems_page_draws_the_stored_scatter_sample(crowd, client, lead):
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    client.force_login(lead)
    page = client.get(reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    expected = charts.stored_length_scatter(run_part(run, "length_scatter"))
    assert len(expected["data"]["datasets"][0]["data"]) == len(run_summaries(run)["ids"])
    drawn = json.loads(re.search(r'id="scatter-chart" type="application/json">(.*?)</script>', page).group(1))
    assert drawn == json.loads(json.dumps(expected))


def test_the_paired_tests_draw_enough_resamples_for_the_holm_family(crowd, client, lead):
    """A run asked for 50 resamples: its intervals take 50, but its paired tests draw enough that
    an adjusted p of 0 reads below half the level (`family_resamples`), so the page can show a
    pair significant after Holm's correction and has nothing to warn about."""
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    pairs = leaderboard.with_holm(run.outputs["pairwise"])["holm_pairs"]
    drawn = run.outputs["pairwise"]["resamples"]
    assert drawn == 80 * pairs > 50 and 2 * pairs / drawn == 0.025
    client.force_login(lead)
    url = reverse("dashboard_systems", args=[dataset.pk])
    page = client.get(url, {"round": batch.pk}).content.decode()
    assert f", {drawn:,} resamples (enough for the {pairs} pairs to resolve after Holm" in page
    assert "the intervals take 50)" in page and "Too few resamples" not in page


def test_a_run_stored_before_the_tests_drew_their_own_resamples_warns_when_they_cannot_resolve(crowd, client, lead):
    """A run stored before the paired block kept its own resamples (it drew the run's: 50): an
    adjusted p of 0 only says "below 2 x pairs / 50", above 0.05, so no cell can read significant;
    the page says so and that a recompute draws enough; the toggle keeps the round, shows the raw p."""
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    outputs = dict(run.outputs)
    outputs["pairwise"] = {k: v for k, v in outputs["pairwise"].items() if k != "resamples"}
    p = np.array([[np.nan if v is None else v for v in row] for row in outputs["pairwise"]["p"]])
    outputs["pairwise"]["p"] = np.where(np.isnan(p), None, np.round(p * 50) / 50).tolist()
    type(run).objects.filter(pk=run.pk).update(outputs=outputs)
    pairs = leaderboard.with_holm(outputs["pairwise"])["holm_pairs"]
    client.force_login(lead)
    url = reverse("dashboard_systems", args=[dataset.pk])
    page = client.get(url, {"round": batch.pk}).content.decode()
    assert f"Too few resamples for {pairs} pairs: this run drew 50," in page
    assert f"a run computed now draws {80 * pairs:,} for this many pairs" in page
    matrix = page[page.index('id="significance-matrix"') :].split("</table>")[0]
    assert 'class="sig strong"' not in matrix and 'class="sig yes"' not in matrix
    assert f'href="{url}?round={batch.pk}&amp;p=raw#significance"' in page
    raw = client.get(url, {"round": batch.pk, "p": "raw"}).content.decode()
    assert "Too few resamples" not in raw and f'href="{url}?round={batch.pk}#significance"' in raw


def test_fixed_reads_as_floatformat():
    rng = random.Random(14)
    values = [rng.random() for _ in range(2000)] + [k / 10_000 for k in range(0, 10_001, 7)] + [0.0125, 0.0005, 1.0]
    for v in values:
        for digits in (0, 3, 4):
            assert leaderboard.fixed(v, digits) == floatformat(v, digits), (v, digits)
    assert leaderboard.fixed(None, 3) == ""


def test_the_matrix_cells_say_p_n_and_level_and_escape_names():
    from django.template.loader import render_to_string

    outputs = {
        "systems": {"<b>A</b>": {"acu": 0.6}, "B&C": {"acu": 0.4}},
        "pairwise": {
            "systems": ["<b>A</b>", "B&C"],
            "p": [[None, 0.00449], [0.99, None]],
            "n": [[None, 12], [12, None]],
        },
    }
    row = leaderboard.systems_view(outputs)["matrix"][0]
    context = {"row": row, "resamples": 10_000, "below": 0.0002, "marked": "holm"}
    html = render_to_string("scoring/_significance_row.html", context)
    # One pair: its Holm-adjusted p is the two-sided p, 2 x 0.00449.
    assert html.strip() == (
        "<tr><th>&lt;b&gt;A&lt;/b&gt;</th>"
        '<td class="sig self" title="&lt;b&gt;A&lt;/b&gt; better than &lt;b&gt;A&lt;/b&gt;: p: –"></td>'
        '<td class="sig strong" data-n="12" title="&lt;b&gt;A&lt;/b&gt; better than B&amp;C: p: 0.004,'
        ' Holm-adjusted p: 0.009, n = 12 shared documents">0.009*</td></tr>'
    )
    raw = render_to_string("scoring/_significance_row.html", {**context, "marked": "raw"})
    assert ' n = 12 shared documents">0.004*</td>' in raw


def _four_systems() -> dict:
    """Four systems, best first; raw one-sided p of the favoured direction 0.001, 0.01, 0.02,
    0.3, 0.4, and none for C-D (no shared document): 5 pairs in the family. Two-sided 0.002,
    0.02, 0.04, 0.6, 0.8; Holm: 0.01, 0.08, 0.12, 1.0, 1.0 (0.6 x 2 = 1.2, capped)."""
    names = ["A", "B", "C", "D"]
    favoured = {(0, 1): 0.01, (0, 2): 0.001, (0, 3): 0.02, (1, 2): 0.3, (1, 3): 0.4}
    p = [[None] * 4 for _ in range(4)]
    n = [[30] * 4 for _ in range(4)]
    for (i, j), v in favoured.items():
        p[i][j], p[j][i] = v, 1 - v
    n[2][3] = n[3][2] = 0
    return {
        "systems": {name: {"acu": 0.6 - 0.1 * k} for k, name in enumerate(names)},
        "pairwise": {"systems": names, "p": p, "n": n},
    }


def test_the_matrix_marks_significance_at_the_holm_adjusted_p_by_default():
    """Raw p of A over B is 0.01 (coloured significant before); Holm over the 5 pairs with a
    test makes it 0.08: not significant unless the lead asks for the raw p."""
    outputs = _four_systems()
    view = leaderboard.systems_view(outputs)
    assert view["marked"] == "holm" and view["holm_pairs"] == 5
    cells = {(row["system"], c["against"]): c for row in view["matrix"] for c in row["cells"]}
    assert cells["A", "B"]["p"] == 0.01 and cells["A", "B"]["p_holm"] == pytest.approx(0.08)
    assert cells["A", "C"]["p_holm"] == pytest.approx(0.01) and cells["A", "D"]["p_holm"] == pytest.approx(0.12)
    assert cells["B", "C"]["p_holm"] == cells["B", "D"]["p_holm"] == 1.0
    assert cells["B", "A"]["p_holm"] == 1.0  # against the direction the data favour
    assert cells["C", "D"]["p_holm"] is None and cells["C", "D"]["level"] is None
    assert [cells["A", x]["level"] for x in "BCD"] == ["no", "yes", "no"]
    raw = leaderboard.systems_view(outputs, marked="raw")
    raw_cells = {(row["system"], c["against"]): c for row in raw["matrix"] for c in row["cells"]}
    assert raw["marked"] == "raw" and [raw_cells["A", x]["level"] for x in "BCD"] == ["yes", "strong", "yes"]
    # Stored runs keep their keys: with_holm only adds p_holm and holm_pairs.
    assert outputs["pairwise"].keys() == {"systems", "p", "n"}
    added = leaderboard.with_holm(outputs["pairwise"])
    assert (
        added.keys() - outputs["pairwise"].keys() == {"p_holm", "holm_pairs"} and added["p"] is outputs["pairwise"]["p"]
    )


def test_the_common_documents_matrix_is_adjusted_over_its_own_pairs():
    outputs = _four_systems()
    outputs["common"] = {
        "documents": 40,
        "systems": outputs["systems"],
        "pairwise": {"systems": ["A", "B"], "p": [[None, 0.02], [0.98, None]]},
    }
    outputs["counts"] = {"documents_differ": True}
    view = leaderboard.systems_view(outputs, "common")
    assert view["holm_pairs"] == 1 and view["matrix"][0]["cells"][1]["p_holm"] == pytest.approx(0.04)
    methods = leaderboard.methods({"n_resamples": 1000}, 2, view["holm_pairs"])
    assert methods["pairwise"]["holm"]["pairs"] == 1 and methods["pairwise"]["holm"]["zero_reads_below"] == 0.002


def test_the_methods_state_the_holm_correction():
    holm = leaderboard.methods({"n_resamples": 10_000, "seed": 0}, 4)["pairwise"]["holm"]
    assert holm["key"] == "p_holm" and holm["method"] == "Holm (1979) step-down"
    assert holm["controls"] == "family-wise error rate" and holm["pairs"] == 6 and holm["level"] == 0.05
    assert holm["zero_reads_below"] == pytest.approx(2 * 6 / 10_000)
    assert leaderboard.methods({"n_resamples": 10_000}, 4, 5)["pairwise"]["holm"]["pairs"] == 5


# --- workers page -----------------------------------------------------------------------------


def test_flagged_workers_come_first_then_by_worker_id():
    rows = [_row(i) for i in range(120)]
    page = worker_pages.table_page(rows, {}, None)
    flagged = [r["worker"] for r in rows if r["flags"]]
    assert [r["worker"] for r in page["rows"][: len(flagged)]] == flagged
    assert page["rows"][len(flagged)]["worker"] == "w001"
    assert (page["page"], page["pages"], page["first"], page["last"], len(page["rows"])) == (1, 3, 1, 50, 50)


def test_every_worker_is_on_exactly_one_page():
    rows = [_row(i) for i in range(120)]
    seen = []
    for n in (1, 2, 3):
        seen += [r["worker"] for r in worker_pages.table_page(rows, {"page": str(n), "sort": "-agreement"}, 7)["rows"]]
    assert sorted(seen) == sorted(r["worker"] for r in rows)
    last = worker_pages.table_page(rows, {"page": "99"}, None)  # past the end: the last page
    assert last["page"] == 3 and len(last["rows"]) == 20 and last["next_url"] is None


@pytest.mark.parametrize("sort", ["agreement", "-agreement"])
def test_a_sorted_column_keeps_missing_values_last(sort):
    rows = [_row(i) for i in range(120)]
    ordered = worker_pages.sort_rows(rows, sort)
    values = [r["agreement"] for r in ordered]
    known = [v for v in values if v is not None]
    assert values[: len(known)] == sorted(known, reverse=sort.startswith("-"))
    assert all(v is None for v in values[len(known) :]) and len(values) == 120


def test_headers_links_and_search_keep_the_table_state():
    rows = [_row(i) for i in range(120)]
    page = worker_pages.table_page(rows, {"sort": "agreement", "page": "2", "q": " W01"}, 7)
    assert page["query"] == "W01" and page["matched"] == 10 and page["pages"] == 1 and page["page"] == 1
    assert all("w01" in r["worker"] for r in page["rows"])
    assert page["headers"]["agreement"] == {"url": "?round=7&sort=-agreement&q=W01", "aria": "ascending"}
    assert page["headers"]["worker"]["url"] == "?round=7&sort=worker&q=W01"
    assert page["state_query"] == "?round=7&sort=agreement&q=W01"
    links = worker_pages.table_page(rows, {"page": "2"}, None)
    assert links["previous_url"] == "?" and links["next_url"] == "?page=3"
    assert worker_pages.page_numbers(10, 40) == [1, None, 8, 9, 10, 11, 12, None, 40]
    assert worker_pages.table_page(rows, {"sort": "nonsense; DROP", "page": "-3"}, None)["sort"] == "-flags"
    assert worker_pages.back_query({"round": "7", "sort": "-flags", "page": "1", "q": ""}) == "?round=7"


def _with_many_workers(dataset, batch, n=130) -> ScoringRun:
    """The round's run with `n` more (synthetic) worker rows beside the real ones."""
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    workers = run_part(run, "workers")
    workers["rows"] += [_row(i) for i in range(n)]
    ScoringRunDetail.objects.filter(pk=run.pk).update(workers=workers)
    return run


def test_the_workers_page_shows_50_workers_and_links_every_page(crowd, client, lead, django_assert_max_num_queries):
    dataset, batch = crowd
    run = _with_many_workers(dataset, batch)
    total = len(run_part(run, "workers")["rows"])  # the real rows and the 130 added
    client.force_login(lead)
    url = reverse("dashboard_workers", args=[dataset.pk])
    client.get(url + f"?round={batch.pk}")
    with django_assert_max_num_queries(12):
        page = client.get(url + f"?round={batch.pk}").content.decode()
    assert page.count("<tr data-worker=") == worker_pages.PER_PAGE
    assert f"Workers 1–50 of {total}" in page
    pages = -(-total // worker_pages.PER_PAGE)
    assert f'href="?round={batch.pk}&amp;page={pages}"' in page
    last = client.get(url + f"?round={batch.pk}&page={pages}").content.decode()
    assert last.count("<tr data-worker=") == total - (pages - 1) * worker_pages.PER_PAGE
    found = client.get(url + f"?round={batch.pk}&q=w12").content.decode()
    assert sorted(re.findall(r'<tr data-worker="([^"]+)"', found)) == [f"w{i}" for i in range(120, 130)]
    spammer = Worker.objects.filter(assignments__hit__batch=batch, external_id__contains="spam").first()
    first = re.search(r'<tr data-worker="([^"]+)"', page).group(1)
    assert first == "w000"  # flagged on gold first; the spammer (no gold in the round) is only noted
    assert "worker-note" in page.split(f'data-worker="{spammer.external_id}"')[1].split("</tr>")[0]


def test_an_action_returns_to_the_same_page_of_the_table(crowd, client, lead, eager_celery):
    dataset, batch = crowd
    _with_many_workers(dataset, batch)
    worker = Worker.objects.filter(assignments__hit__batch=batch, assignments__status__in=Assignment.COUNTED).first()
    client.force_login(lead)
    action = reverse("dashboard_worker_action", args=[dataset.pk, worker.pk, "block"])
    response = client.post(action + f"?round={batch.pk}&sort=-agreement&page=2&q=", {"reason": "test"})
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard_workers", args=[dataset.pk]) + (
        f"?round={batch.pk}&sort=-agreement&page=2"
    )
    worker.refresh_from_db()
    assert worker.blocked_at is not None


def test_the_fixed_filter_reads_as_floatformat_for_any_value():
    from scoring.templatetags.numbers import fixed as fixed_filter

    for value in (0.12345, 1.0, 0.0, -0.0004, -0.12345, None, "", "x", 3, float("nan"), float("inf")):
        for digits in (1, 3, 4):
            assert fixed_filter(value, digits) == floatformat(value, digits), (value, digits)


def test_the_percent_filter_keeps_a_small_share_visible():
    from scoring.templatetags.numbers import percent

    assert [percent(v) for v in (0.0, 0.0042, 0.163, 1.0)] == ["0.0%", "0.4%", "16.3%", "100.0%"]
    assert percent(0.12345, 2) == "12.35%"
    assert [percent(v) for v in (None, "x", float("nan"))] == ["-", "-", "-"]


def test_an_adjusted_p_of_zero_is_coloured_by_the_bound_its_resamples_give_it():
    """No resample on the other side: the Holm-adjusted p is 0, but it only says "below 2 x pairs
    / resamples" (5 pairs here); too few resamples cannot show that pair significant."""
    outputs = _four_systems()
    p = outputs["pairwise"]["p"]
    p[0][2], p[2][0] = 0.0, 1.0

    def a_over_c(resamples):
        view = leaderboard.systems_view(outputs, resamples=resamples)
        return next(c for c in view["matrix"][0]["cells"] if c["against"] == "C")

    assert a_over_c(100)["p_holm"] == 0 and a_over_c(100)["level"] == "no"  # below 0.1
    assert a_over_c(500)["level"] == "yes" and a_over_c(10_000)["level"] == "strong"  # below 0.02, 0.001
    assert leaderboard.systems_view(outputs, marked="raw", resamples=100)["matrix"][0]["cells"][2]["level"] == "strong"
    assert leaderboard.holm_method(5, 100)["resamples_to_resolve"] == 400  # what a run computed now draws
    assert leaderboard.holm_method(300, 10_000)["resamples_to_resolve"] == 24_000


def _workers_page(client, lead, dataset, batch) -> str:
    compute_scores(dataset, batch)
    client.force_login(lead)
    return client.get(reverse("dashboard_workers", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()


def test_a_round_without_gold_says_why_no_one_can_be_flagged(client, lead):
    dataset = demo_dataset()
    batch = published_batch(dataset, gold_share=0.0)
    simulate_crowd(batch, workers=3, accuracy=0.9, spammers=1, seed=4)
    page = _workers_page(client, lead, dataset, batch)
    assert 'id="no-gold"' in page and "give the next batch a gold share" in page  # the demo has expert labels
    assert "import them or run an expert round" not in page
    assert "Nobody here has judged a gold HIT yet" in page
    assert "Without the 0 flagged" not in page and 'id="alpha-without-acu"' not in page


def test_a_round_with_gold_and_no_flag_says_no_worker_is_flagged(client, lead):
    dataset = demo_dataset()
    batch = published_batch(dataset, gold_share=0.5)
    simulate_crowd(batch, workers=3, accuracy=1.0, spammers=0, seed=4)
    page = _workers_page(client, lead, dataset, batch)
    assert batch.hits.exclude(gold_answers=None).exists()
    assert 'id="no-gold"' not in page
    assert "No worker&#x27;s gold shows an accuracy below 0.7" in page or "No worker's gold shows" in page
    assert 'id="alpha-without-acu"' not in page


def test_all_judgments_says_it_pools_the_expert_labels_with_the_crowd(crowd, client, lead):
    dataset, batch = crowd  # the demo's imported expert labels and a crowd round
    client.force_login(lead)
    url = reverse("dashboard", args=[dataset.pk])
    assert 'id="pooled-experts-note"' in client.get(url).content.decode()
    assert 'id="pooled-experts-note"' not in client.get(url + f"?round={batch.pk}").content.decode()
    batch.delete()  # the expert labels alone: nothing is pooled
    assert 'id="pooled-experts-note"' not in client.get(url).content.decode()


def test_the_round_picker_leaves_drafts_out_but_keeps_the_one_shown(crowd, client, lead):
    dataset, _ = crowd
    draft = batch_of(dataset, assignments=3)
    client.force_login(lead)
    url = reverse("dashboard", args=[dataset.pk])
    assert f'<option value="{draft.pk}"' not in client.get(url).content.decode()
    assert f'<option value="{draft.pk}" selected' in client.get(url + f"?round={draft.pk}").content.decode()
