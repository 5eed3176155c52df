"""What the systems and workers pages read of a run is stored with it (scoring.results.page_data): the same
parts as the outputs, the scatter as the text json_script would write; pages read the stored
column (the digest only for runs stored before it). The leaderboard and aggregation rows built in
Python read as the template wrote them; the judge runs and the round picker come from written
queries equal to the ORM's."""

import json
import re
from datetime import timedelta

import pytest
from django.template import engines
from django.urls import reverse
from django.utils import timezone
from django.utils.html import json_script

from annotation.models import Dataset
from hits import versions
from hits.models import Batch, JudgeRun
from scoring.machine import runs as judge_runs
from scoring.models import ScoringRun
from scoring.results import charts, dashboard, leaderboard, page_data
from scoring.runs import services
from scoring.runs.services import compute_scores

from .crowd_data import simulated_round

pytestmark = pytest.mark.django_db

# The leaderboard's and the aggregation table's bodies as the template wrote them before
# scoring.results.leaderboard built them (templates/scoring/systems.html).
OLD_LEADERBOARD = """{% load numbers %}  <tbody>{% for name, s, machine in systems %}
  <tr><td data-value="{{ forloop.counter }}">{{ forloop.counter }}</td><td>{{ name }}</td><td class="num" data-value="{{ s.acu }}">{{ s.acu|fixed:4 }}</td>
    <td class="num">{% if s.acu_ci %}[{{ s.acu_ci.0|fixed:3 }}, {{ s.acu_ci.1|fixed:3 }}]{% if s.acu_ci_degenerate %} <span class="flag" title="zero-width interval">degenerate</span>{% endif %}{% else %}–{% endif %}</td>
    <td class="num" data-value="{{ s.normalized_acu }}">{{ s.normalized_acu|fixed:4 }}</td>
    <td class="num">{% if s.normalized_acu_ci %}[{{ s.normalized_acu_ci.0|fixed:3 }}, {{ s.normalized_acu_ci.1|fixed:3 }}]{% if s.normalized_acu_ci_degenerate %} <span class="flag" title="zero-width interval">degenerate</span>{% endif %}{% else %}–{% endif %}</td>
    <td class="num" data-value="{{ s.length }}">{{ s.length|fixed:1 }}</td><td class="num{% if s.small %} small-n{% endif %}" data-value="{{ s.documents }}">{{ s.documents }}{% if s.small %} <span class="flag" title="fewer than {{ small_threshold }} documents">small n</span>{% endif %}</td>{% for m in machine %}<td class="num machine" data-value="{{ m|default_if_none:'' }}">{% if m is not None %}{{ m|fixed:4 }}{% else %}–{% endif %}</td>{% endfor %}</tr>
  {% endfor %}</tbody>"""
OLD_AGGREGATION = """{% load numbers %}  <tbody>{% for name, a in aggregation_rows %}<tr><td>{{ name }}</td><td class="num" data-value="{{ a.majority }}">{{ a.majority|fixed:4 }}</td><td class="num" data-value="{{ a.dawid_skene }}">{{ a.dawid_skene|fixed:4 }}</td><td class="num" data-value="{{ a.difference }}">{{ a.difference|fixed:4 }}</td></tr>{% endfor %}</tbody>"""


@pytest.fixture
def crowd():
    return simulated_round()


def _render(source: str, context: dict) -> str:
    return engines["django"].from_string(source).render(context)


def test_a_run_stores_its_pages_parts_and_the_scatter_as_json_script_writes_it(crowd):
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    run.refresh_from_db()
    systems = json.loads(run.systems_page)
    chart = systems.pop(page_data.CHARTS)["length_scatter"]
    assert systems == {p: run.outputs[p] for p in page_data.SYSTEMS_PARTS if run.outputs.get(p) is not None}
    assert set(systems) >= {"systems", "pairwise", "counts"}
    expected = json_script(charts.stored_length_scatter(run.outputs["length_scatter"]), "scatter-chart")
    assert page_data.script_tag(chart, "scatter-chart") == expected
    assert json.loads(run.workers_page) == {"workers": run.outputs["workers"]}


def test_the_systems_page_embeds_the_stored_scatter_text(crowd, client, lead):
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    client.force_login(lead)
    url = reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}"
    page = client.get(url).content.decode()
    assert json_script(charts.stored_length_scatter(run.outputs["length_scatter"]), "scatter-chart") in page
    # The page embeds what the run stored, not a chart encoded now.
    stored = json.loads(run.systems_page)
    stored[page_data.CHARTS]["length_scatter"] = page_data.script_json({"type": "scatter", "marker": "<&>"})
    ScoringRun.objects.filter(pk=run.pk).update(systems_page=json.dumps(stored))
    page = client.get(url).content.decode()
    assert (
        '<script id="scatter-chart" type="application/json">{"type": "scatter", "marker": "\\u003C\\u0026\\u003E"}'
        in page
    )
    # A run stored before the column: the chart encoded from its part, the same text as stored.
    ScoringRun.objects.filter(pk=run.pk).update(systems_page="", workers_page="")
    before = client.get(url).content.decode()
    assert json_script(charts.stored_length_scatter(run.outputs["length_scatter"]), "scatter-chart") in before


def test_pages_read_their_stored_column_and_the_digest_for_older_runs(crowd):
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    run.refresh_from_db()
    parts = (*page_data.SYSTEMS_PARTS, "length_scatter")
    read = services.latest_run(dataset, batch, parts=parts)
    assert read.outputs == {p: run.outputs[p] for p in page_data.SYSTEMS_PARTS if run.outputs.get(p) is not None}
    assert read.page_charts["length_scatter"] == json.loads(run.systems_page)[page_data.CHARTS]["length_scatter"]
    assert {"systems_page", "workers_page", "digest"} <= read.get_deferred_fields()  # read as its parts only
    workers = services.latest_run(dataset, batch, parts=("workers", "alpha"))
    assert workers.outputs == {"workers": run.outputs["workers"], "alpha": run.outputs["alpha"]}
    # The stored column answers, not the digest ...
    marked = {**json.loads(run.systems_page), "counts": {"marker": 1}}
    ScoringRun.objects.filter(pk=run.pk).update(
        systems_page=json.dumps(marked), workers_page=json.dumps({"workers": {"rows": [], "marker": 2}})
    )
    assert services.latest_run(dataset, batch, parts=parts).outputs["counts"] == {"marker": 1}
    assert services.latest_run(dataset, batch, parts=("workers",)).outputs["workers"]["marker"] == 2
    # ... but for parts it does not hold (the overview's alpha, the export's summaries)
    assert services.latest_run(dataset, batch, parts=("counts", "summaries")).outputs["counts"] == run.outputs["counts"]
    # A run stored before the columns: its digest, and no stored chart.
    ScoringRun.objects.filter(pk=run.pk).update(systems_page="", workers_page="")
    older = services.latest_run(dataset, batch, parts=parts)
    assert older.outputs["counts"] == run.outputs["counts"] and older.outputs["length_scatter"]
    assert not hasattr(older, "page_charts")
    assert dashboard.length_scatter_script(older) == dashboard.length_scatter_script(read)


def test_the_page_column_is_chosen_only_when_it_holds_every_part():
    assert page_data.page_for((*page_data.SYSTEMS_PARTS, "length_scatter")) == "systems_page"
    assert page_data.page_for(("systems", "alpha")) == "systems_page"
    assert page_data.page_for(("workers", "alpha")) == "workers_page"
    assert page_data.page_for(("alpha",)) is None
    assert page_data.page_for(("systems", "workers")) is None
    assert page_data.page_for(("summaries",)) is None


def _leaderboard_rows() -> list[tuple[str, dict, list]]:
    systems = {
        "best <b>&": {
            "acu": 0.61234,
            "acu_ci": [0.55, 0.66666],
            "normalized_acu": 0.5,
            "normalized_acu_ci": [0.5, 0.5],
            "length": 61.25,
            "documents": 12,
        },
        "plain": {
            "acu": 0.4,
            "acu_ci": None,
            "normalized_acu": 0.31245,
            "normalized_acu_ci": [0.2, 0.4],
            "length": None,
            "documents": 1234,
        },
        "zero": {"acu": 0.0, "acu_ci": [0.0, 0.0], "normalized_acu": 0.0, "length": 3.0, "documents": None},
    }
    rows = leaderboard._rows(systems)
    machine = {"best <b>&": [0.5, None], "plain": [None, 0.12345], "zero": [1.0, 0.0]}
    return [(name, s, machine[name]) for name, s in rows]


def test_the_leaderboard_rows_read_as_the_template_wrote_them(crowd):
    rows = _leaderboard_rows()
    for threshold in (30, 5):
        old = _render(OLD_LEADERBOARD, {"systems": rows, "small_threshold": threshold})
        assert old == f"  <tbody>{leaderboard.leaderboard_rows_html(rows, threshold)}</tbody>"
    assert "best &lt;b&gt;&amp;" in leaderboard.leaderboard_rows_html(rows, 30)
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    view = leaderboard.systems_view(run.outputs)
    real = [(name, s, []) for name, s in view["systems"]]
    assert _render(OLD_LEADERBOARD, {"systems": real, "small_threshold": 30}) == (
        f"  <tbody>{leaderboard.leaderboard_rows_html(real, 30)}</tbody>"
    )
    aggregation = view["aggregation_rows"] + [
        ("neg <i>", {"majority": 0.25, "dawid_skene": 0.3, "difference": -0.05}),
        ("none", {"majority": None, "dawid_skene": 0.3, "difference": None}),
    ]
    assert _render(OLD_AGGREGATION, {"aggregation_rows": aggregation}) == (
        f"  <tbody>{leaderboard.aggregation_rows_html(aggregation)}</tbody>"
    )


def test_the_newest_finished_judge_run_of_each_judge_and_the_busy_count(crowd):
    dataset, _ = crowd
    assert judge_runs.latest_and_running(dataset) == ([], 0)
    start = timezone.now() - timedelta(hours=1)

    def run(judge, model, status, minute):
        machine = Batch.objects.create(dataset=dataset, name=f"machine {judge} {minute}", kind=Batch.Kind.MACHINE)
        made = JudgeRun.objects.create(batch=machine, judge=judge, model=model, status=status)
        JudgeRun.objects.filter(pk=made.pk).update(created_at=start + timedelta(minutes=minute))
        return made

    older = run("lexical", "", "done", 1)
    newer = run("lexical", "", "done", 2)
    nli_a = run("nli", "a", "done", 3)
    same_time = run("nli", "b", "done", 3)  # a tie on created_at: the higher id first
    run("nli", "b", "failed", 4)
    run("lexical", "", "running", 5)
    run("nli", "a", "queued", 6)
    run("nli", "a", "running", 7)
    latest, busy = judge_runs.latest_and_running(dataset)
    assert [r.pk for r in latest] == [same_time.pk, nli_a.pk, newer.pk]
    assert busy == 3 and older.pk not in [r.pk for r in latest]
    JudgeRun.objects.exclude(status="done").delete()
    assert judge_runs.latest_and_running(dataset)[1] == 0


def test_the_round_picker_lists_the_crowd_and_imported_rounds_oldest_first(crowd):
    dataset, batch = crowd
    Batch.objects.create(dataset=dataset, name="machine: lexical v1", kind=Batch.Kind.MACHINE)
    later = Batch.objects.create(dataset=dataset, name="second <round>", kind=Batch.Kind.CROWD)
    fast = dashboard.round_choices(dataset)
    expected = [
        {"pk": b.pk, "name": b.name}
        for b in dataset.batches.exclude(kind=Batch.Kind.MACHINE).order_by("created_at", "pk")
    ]
    assert fast == expected and fast[-1]["pk"] == later.pk and batch.pk in [r["pk"] for r in fast]
    assert all(r["name"] != "machine: lexical v1" for r in fast)


def test_the_pages_show_the_same_with_and_without_the_stored_columns(crowd, client, lead):
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    client.force_login(lead)

    def pages():
        out = {}
        for name in ("dashboard_systems", "dashboard_workers"):
            for query in ("", f"?round={batch.pk}", f"?round={batch.pk}&documents=common"):
                body = client.get(reverse(name, args=[dataset.pk]) + query).content.decode()
                body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", body)
                out[name, query] = re.sub(r'name="token" value="[^"]*-(\d+)"', r"\1", body)
        return out

    stored = pages()
    ScoringRun.objects.filter(dataset=dataset).update(systems_page="", workers_page="")
    assert pages() == stored
    assert run.outputs["systems"] and 'id="leaderboard"' in stored["dashboard_systems", f"?round={batch.pk}"]


def test_the_version_read_with_the_run_decides_staleness(crowd):
    dataset, batch = crowd
    compute_scores(dataset, batch, n_resamples=50, trigger="test")
    compute_scores(dataset, None, n_resamples=50, trigger="test")
    read = services.latest_run(dataset, batch, parts=("alpha",))
    assert read.current_version == versions.current(dataset.pk, batch.pk) == read.inputs["version"]
    assert dashboard.scores_run(dataset, batch, refresh=False, parts=("alpha",))[1] is False
    assert dashboard.scores_run(dataset, None, refresh=False, parts=("workers",))[1] is False
    versions.bump(dataset.pk, batch.pk)
    assert dashboard.scores_run(dataset, batch, refresh=False, parts=("alpha",))[1] is True
    assert dashboard.scores_run(dataset, None, refresh=False, parts=("workers",))[1] is True


def test_the_scope_and_the_latest_power_run_are_the_orms_rows(crowd, client, lead):
    dataset, batch = crowd
    other = Batch.objects.create(dataset=Dataset.objects.create(name="other"), name="elsewhere", kind=Batch.Kind.CROWD)
    assert dashboard.scope_rows(dataset.pk, batch.pk) == (dataset, batch)
    assert dashboard.scope_rows(dataset.pk, None) == (dataset, None)
    assert dashboard.scope_rows(dataset.pk, other.pk) == (dataset, None)
    assert dashboard.scope_rows(999_999, None) == (None, None)
    client.force_login(lead)
    url = reverse("dashboard_systems", args=[dataset.pk])
    for query in (f"?round={other.pk}", "?round=x1", "?round=99999999999999999999999"):
        assert client.get(url + query).status_code == 404
    assert client.get(reverse("dashboard_systems", args=[999_999])).status_code == 404
    assert dashboard.latest_of_kind(dataset, batch, ScoringRun.Kind.POWER) is None
    for scope in (batch, None, batch):
        ScoringRun.objects.create(dataset=dataset, batch=scope, kind=ScoringRun.Kind.POWER, outputs={"n": 1})
    for scope in (batch, None):
        orm = ScoringRun.objects.filter(dataset=dataset, batch=scope, kind=ScoringRun.Kind.POWER).first()
        read = dashboard.latest_of_kind(dataset, scope, ScoringRun.Kind.POWER)
        assert read.pk == orm.pk and read.outputs == orm.outputs and read.batch_id == orm.batch_id
