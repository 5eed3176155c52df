"""A walkthrough of the demo's dashboards on a phone (390 x 844), measured in Chromium:

3. the Metrics page's "Is one metric better than another?" table scrolls in its box: the page is
   no wider than the screen (it was 779 px);
5. the systems chart names every one of its 4 systems (it named 2: labels that did not fit side
   by side were dropped), a long name cut with "…", and its legend and title are 12 px at least,
   in a colour readable on white;
6. the leaderboard's system names break only after an "_" ("ext_matchsumm_out", never
   "ext_matchsum m_out"), with the machine judge's column beside them.
"""

import re

import pytest

from scoring.runs import statistics

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset
from .conftest import ARTIFACTS, login
from .test_charts_editor_browser import CHART, assert_no_overlap, x_labels

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}

# Per system-name cell: its text and the character before each line break inside it.
NAME_BREAKS = """() => [...document.querySelectorAll('#leaderboard td.system')].map(td => {
  const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
  const chars = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
      chars.push({c: node.data[i], top: Math.round(r.getBoundingClientRect().top)});
    }
  }
  const before = [];
  for (let i = 1; i < chars.length; i++) if (chars[i].top > chars[i - 1].top + 2) before.push(chars[i - 1].c);
  return {name: td.textContent, before: before};
})"""


def overflow(page) -> int:
    return page.evaluate("() => document.scrollingElement.scrollWidth - window.innerWidth")


def contrast(color: str) -> float:
    """The contrast ratio of a CSS colour (#rgb, #rrggbb or rgb()) against white."""
    if color.startswith("#"):
        digits = color[1:]
        if len(digits) == 3:
            digits = "".join(d * 2 for d in digits)
        rgb = [int(digits[i : i + 2], 16) for i in (0, 2, 4)]
    else:
        rgb = [int(float(v)) for v in re.findall(r"[\d.]+", color)[:3]]

    def linear(v):
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    luminance = 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2])
    return 1.05 / (luminance + 0.05)


@pytest.fixture
def judged_demo():
    """The demo dataset (4 systems, REALSumm's ids) scored, with a lexical judge run: the
    leaderboard gets its machine column."""
    from hits.models import JudgeRun
    from scoring.machine.runs import run_judge_run, start_judge_run
    from scoring.runs.services import compute_scores

    dataset = demo_dataset("realsumm-demo")
    compute_scores(dataset, n_resamples=200)
    run = run_judge_run(start_judge_run(dataset, "lexical").pk)
    assert run.status == JudgeRun.Status.DONE
    return dataset, run


@pytest.fixture
def metric_tests(judged_demo):
    """The judged demo with ROUGE stored and the metric-against-metric tests computed."""
    from scoring.models import ScoringRun
    from scoring.runs.metrics import compute_rouge

    dataset, run = judged_demo
    compute_rouge(dataset)
    metric_run = statistics.start(
        dataset, ScoringRun.Kind.METRICS, {"n_resamples": 200, "n_permutations": 200, "seed": 0, "method": "kendall"}
    )
    statistics.run_metric_correlations(metric_run.pk)
    return dataset, run


def test_metric_tests_scroll_in_their_box_on_a_phone(live_server, browser, lead, metric_tests):
    dataset, _ = metric_tests
    page = browser.new_context(viewport=PHONE).new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/metrics/")
    assert page.locator("#metric-tests tbody tr").count() > 1
    page.screenshot(path=str(ARTIFACTS / "walk-metrics-390.png"), full_page=True)
    assert overflow(page) <= 0, f"{overflow(page)} px wider than the screen"
    box = page.evaluate(
        "() => { const b = document.querySelector('#metric-tests').closest('.table-scroll');"
        " return b && [b.scrollWidth > b.clientWidth, b.getBoundingClientRect().right]; }"
    )
    assert box and box[0] and box[1] <= PHONE["width"], box  # the table scrolls inside its box
    page.locator("#metric-tests").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "walk-metric-tests-390.png"))
    page.context.close()


@pytest.mark.parametrize("width", [390, 900, 1280])
def test_the_systems_chart_names_every_system_and_names_break_only_at_underscores(
    live_server, browser, lead, judged_demo, width
):
    dataset, _ = judged_demo
    names = sorted(dataset.systems.values_list("name", flat=True))
    page = browser.new_context(viewport={**PHONE, "width": width}).new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/systems/")
    page.wait_for_function("document.querySelector('canvas[data-chart=leaderboard-chart]').width > 0")
    page.screenshot(path=str(ARTIFACTS / f"walk-systems-{width}.png"), full_page=True)
    page.locator("canvas[data-chart=leaderboard-chart]").screenshot(path=str(ARTIFACTS / f"walk-chart-{width}.png"))
    assert overflow(page) <= 0

    # 6. With the machine judge's column: a name breaks only after an "_", if at all.
    assert page.locator("#leaderboard th.machine").count() == 1
    page.locator("#leaderboard").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"walk-leaderboard-{width}.png"))
    cells = page.evaluate(NAME_BREAKS)
    assert sorted(c["name"] for c in cells) == names
    for cell in cells:
        assert set(cell["before"]) <= {"_"}, f"{cell['name']} breaks mid-word at {width} px"
    # 5. Every system named under its point, none over another; a long name cut with "…".
    labels = x_labels(page, "leaderboard-chart")
    assert len(labels) == len(names) == 4, [label["label"] for label in labels]
    for label in labels:
        text = label["label"]
        assert text in names or (text.endswith("…") and any(n.startswith(text[:-1]) for n in names)), text
    assert {n for n in names if any(n == la["label"] or n.startswith(la["label"][:-1]) for la in labels)} == set(names)
    assert_no_overlap(labels)
    chart = CHART % "leaderboard-chart"
    # Each as drawn: its own font and colour, else Chart.js's defaults.
    drawn = "o => [(o.font && o.font.size) || Chart.defaults.font.size, o.color || Chart.defaults.color]"
    legend = page.evaluate(f"() => ({drawn})({chart}.legend.options.labels)")
    title = page.evaluate(f"() => ({drawn})({chart}.titleBlock.options)")
    for size, color in (legend, title):
        assert size >= 12 and contrast(color) >= 7, (size, color)

    page.context.close()
