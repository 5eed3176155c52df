"""The systems and workers pages read the parts of a run's outputs they show and the scope's version
with it; the leaderboard and aggregation rows (templates/scoring/_*_row.html partials) read as the
template wrote them before they were built in Python; the judge runs and the round picker come from
written queries equal to the ORM's."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.template import engines
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import json_script

from annotation.models import Dataset
from hits import versions
from hits.models import Batch, JudgeRun
from scoring.machine import selectors as judge_runs
from scoring.models import ScoringRun
from scoring.results import charts, dashboard, leaderboard
from scoring.runs import selectors
from scoring.runs.services import compute_scores

from .crowd_data import simulated_round

pytestmark = pytest.mark.django_db

# The leaderboard's and the aggregation table's bodies as the template wrote them before
# scoring.results.leaderboard built them (templates/scoring/systems.html).
# Classes system and ci: issue 27, item 10 (CIs on one line, long names may break).
OLD_LEADERBOARD = """{% load numbers names %}  <tbody>{% for name, s, machine in systems %}
  <tr><td data-value="{{ forloop.counter }}">{{ forloop.counter }}</td><td class="system">{{ name|breaks_at_underscores }}</td><td class="num" data-value="{{ s.acu }}">{{ s.acu|fixed:4 }}</td>
    <td class="num ci">{% if s.acu_ci %}[{{ s.acu_ci.0|fixed:3 }}, {{ s.acu_ci.1|fixed:3 }}]{% if s.acu_ci_degenerate %} <span class="flag" title="zero-width interval">degenerate</span>{% endif %}{% else %}–{% endif %}</td>
    <td class="num" data-value="{{ s.normalized_acu }}">{{ s.normalized_acu|fixed:4 }}</td>
    <td class="num ci">{% if s.normalized_acu_ci %}[{{ s.normalized_acu_ci.0|fixed:3 }}, {{ s.normalized_acu_ci.1|fixed:3 }}]{% if s.normalized_acu_ci_degenerate %} <span class="flag" title="zero-width interval">degenerate</span>{% endif %}{% else %}–{% endif %}</td>
    <td class="num" data-value="{{ s.length }}">{{ s.length|fixed:1 }}</td><td class="num{% if s.small %} small-n{% endif %}" data-value="{{ s.documents }}">{{ s.documents }}{% if s.small %} <span class="flag" title="fewer than {{ small_threshold }} documents">small n</span>{% endif %}</td>{% for m in machine %}<td class="num machine" data-value="{{ m|default_if_none:'' }}">{% if m is not None %}{{ m|fixed:4 }}{% else %}–{% endif %}</td>{% endfor %}</tr>
  {% endfor %}</tbody>"""
OLD_AGGREGATION = """{% load numbers %}  <tbody>{% for name, a in aggregation_rows %}<tr><td>{{ name }}</td><td class="num" data-value="{{ a.majority }}">{{ a.majority|fixed:4 }}</td><td class="num" data-value="{{ a.dawid_skene }}">{{ a.dawid_skene|fixed:4 }}</td><td class="num" data-value="{{ a.difference }}">{{ a.difference|fixed:4 }}</td></tr>{% endfor %}</tbody>"""


@pytest.fixture
def crowd():
    return simulated_round()


def _render(source: str, context: dict) -> str:
    return engines["django"].from_string(source).render(context)


def test_pages_read_only_their_parts_of_the_latest_run(crowd, client, lead):
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    with CaptureQueriesContext(connection) as queries:
        read = selectors.latest_run(dataset, batch, parts=leaderboard.SYSTEMS_PARTS)
    stored = {**run.outputs, "length_scatter": selectors.run_part(run, "length_scatter")}
    assert read.outputs == {p: stored[p] for p in leaderboard.SYSTEMS_PARTS if stored.get(p) is not None}
    (sql,) = [q["sql"] for q in queries.captured_queries]  # the run and the scope's version: one query
    assert not re.search(r'"outputs"(,| FROM)', sql) and "-> 'systems'" in sql  # its parts only, not the whole
    workers = selectors.latest_run(dataset, batch, parts=("workers", "alpha"))
    assert workers.outputs == {"workers": selectors.run_part(run, "workers"), "alpha": run.outputs["alpha"]}
    assert selectors.latest_run(dataset, batch).outputs == run.outputs
    client.force_login(lead)
    url = reverse("dashboard_systems", args=[dataset.pk]) + f"?round={batch.pk}"
    page = client.get(url).content.decode()
    assert json_script(charts.stored_length_scatter(stored["length_scatter"]), "scatter-chart") in page


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


def _rows_html(partial: str, rows, **context) -> str:
    """The table body as templates/scoring/systems.html renders it with its row partial."""
    loop = {
        "leaderboard": "{% for name, s, machine in systems %}\n  ",
        "aggregation": "{% for name, a in aggregation_rows %}",
    }
    source = f'  <tbody>{loop[partial]}{{% include "scoring/_{partial}_row.html" %}}{{% endfor %}}</tbody>'
    return _render(source, {**context, ("systems" if partial == "leaderboard" else "aggregation_rows"): rows})


def _same(old: str, new: str) -> bool:
    """Equal but for the white space between tags (a partial ends with a newline)."""
    return re.sub(r">\s+<", "><", old).strip() == re.sub(r">\s+<", "><", new).strip()


def test_the_leaderboard_rows_read_as_the_template_wrote_them(crowd):
    rows = _leaderboard_rows()
    for threshold in (30, 5):
        old = _render(OLD_LEADERBOARD, {"systems": rows, "small_threshold": threshold})
        assert _same(old, _rows_html("leaderboard", rows, small_threshold=threshold))
    assert "best &lt;b&gt;&amp;" in _rows_html("leaderboard", rows, small_threshold=30)
    dataset, batch = crowd
    run = compute_scores(dataset, batch, n_resamples=50, trigger="test")
    view = leaderboard.systems_view(run.outputs)
    real = [(name, s, []) for name, s in view["systems"]]
    old = _render(OLD_LEADERBOARD, {"systems": real, "small_threshold": 30})
    assert _same(old, _rows_html("leaderboard", real, small_threshold=30))
    aggregation = view["aggregation_rows"] + [
        ("neg <i>", {"majority": 0.25, "dawid_skene": 0.3, "difference": -0.05}),
        ("none", {"majority": None, "dawid_skene": 0.3, "difference": None}),
    ]
    old = _render(OLD_AGGREGATION, {"aggregation_rows": aggregation})
    assert _same(old, _rows_html("aggregation", aggregation))
    assert "neg &lt;i&gt;" in old


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
    Batch.objects.create(dataset=dataset, name="a draft", kind=Batch.Kind.CROWD, status=Batch.Status.DRAFT)
    later = Batch.objects.create(
        dataset=dataset, name="second <round>", kind=Batch.Kind.CROWD, status=Batch.Status.PUBLISHED
    )
    fast = dashboard.round_choices(dataset)
    expected = [
        {"pk": b.pk, "name": b.name, "kind": b.kind}
        for b in dataset.batches.exclude(kind=Batch.Kind.MACHINE)
        .exclude(status=Batch.Status.DRAFT)
        .order_by("created_at", "pk")
    ]
    assert fast == expected and fast[-1]["pk"] == later.pk and batch.pk in [r["pk"] for r in fast]
    assert all(r["name"] not in ("machine: lexical v1", "a draft") for r in fast)  # no one judged a draft


def test_the_version_read_with_the_run_decides_staleness(crowd):
    dataset, batch = crowd
    compute_scores(dataset, batch, n_resamples=50, trigger="test")
    compute_scores(dataset, None, n_resamples=50, trigger="test")
    read = selectors.latest_run(dataset, batch, parts=("alpha",))
    assert read.current_version == versions.current(dataset.pk, batch.pk) == read.inputs["version"]
    assert dashboard.scores_run(dataset, batch, parts=("alpha",))[1] is False
    assert dashboard.scores_run(dataset, None, parts=("workers",))[1] is False
    versions.bump(dataset.pk, batch.pk)
    assert dashboard.scores_run(dataset, batch, parts=("alpha",))[1] is True
    assert dashboard.scores_run(dataset, None, parts=("workers",))[1] is True


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
