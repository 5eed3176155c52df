"""Every `.inline-form` (a row of a label, a box or a select and a button) at 1280 and 390 px: the
controls on one visual line share their bottom edge, and nothing sticks out of a phone's width.

app.css defined `.inline-form` twice; the second (`align-items:center`) won, so a button, which
keeps its 1rem top margin everywhere, was centred with that margin and sat 8 px below the box or
select beside it (the same defect as Prolific's Add places row, fixed with `.count-form`). Each page
is opened with the data that shows its forms: the lead pages' demo world (tests/browser/
test_lead_pages_phone_browser.py) plus an expert round, a lexical judge run (the triage form),
metric scores (the correlation form) and RoSE's protocol file (the rating round picker and power
form). Labels stacked above their boxes (`.field`) and checkboxes are not controls of the line."""

import json

import pytest

from annotation.models import Dataset, Summary
from hits.services import expert
from hits.services.dataset_import import import_dataset
from scoring.machine.runs import run_judge_run, start_judge_run
from scoring.runs.metrics import import_metric_scores

from ..authoring_data import unlabelled_dataset
from ..conftest import PASSWORD, SHARED
from .conftest import ARTIFACTS, login
from .test_lead_pages_phone_browser import lead_world  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ROSE_PROTOCOLS = SHARED / "data" / "rose-protocols" / "protocol-comparison.json"
TOLERANCE = 1.5  # px: the controls of one line share their bottom edge


def _metric_scores(dataset, tmp_path):
    lines = {}
    for s in Summary.objects.filter(document__dataset=dataset).select_related("document", "system"):
        doc = lines.setdefault(s.document.external_id, {"example_id": s.document.external_id, "length": {}})
        doc["length"][s.system.name] = float(s.word_count)
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in lines.values()))
    import_metric_scores(dataset, path)


@pytest.fixture
def forms_world(lead_world, tmp_path):  # noqa: F811
    dataset = lead_world["dataset"]
    unlabelled = lead_world["unlabelled"] = unlabelled_dataset(tmp_path, name="gold-to-label", documents=2)
    lead_world["expert"] = expert.create_round(unlabelled, count=1, experts=1, seed=0)
    run_judge_run(start_judge_run(dataset, "lexical").pk)
    _metric_scores(dataset, tmp_path)
    import_dataset(ROSE_PROTOCOLS, name="rose-protocols", fmt="rose-protocols")
    lead_world["protocols"] = Dataset.objects.get(name="rose-protocols")
    return lead_world


# Each page and the forms it must show (ids, or how many unnamed ones).
PAGES = {
    "batch": (lambda w: f"/batches/{w['open'].pk}/", ["#priority-form", "#budget-form"]),
    "expert-round": (lambda w: f"/expert/{w['expert'].pk}/", [1]),
    "people": (lambda w: "/people/", ["#add-person"]),
    "authoring-review": (lambda w: f"/authoring/references/{w['in_review']().pk}/review/", [3]),
    "dataset": (lambda w: f"/datasets/{w['unlabelled'].pk}/", ["#alpha-form", "#expert-form", "#judge-form"]),
    "systems": (lambda w: f"/datasets/{w['dataset'].pk}/dashboard/systems/?round={w['done'].pk}", [2]),
    "protocols": (
        lambda w: f"/datasets/{w['protocols'].pk}/dashboard/protocols/",
        ["#rating-round-picker", "#rating-import", 3],
    ),
    "metrics": (lambda w: f"/datasets/{w['dataset'].pk}/dashboard/metrics/", ["#rouge-form", "#metrics-upload", 3]),
    "workers": (lambda w: f"/datasets/{w['dataset'].pk}/dashboard/workers/?round={w['done'].pk}", ["#worker-search"]),
}

# Per .inline-form: its visible controls (no hidden inputs, checkboxes or radios), grouped into
# visual lines (controls whose boxes overlap vertically), each with its rectangle.
MEASURE = """() => [...document.querySelectorAll('form.inline-form')].map((form, i) => {
    const controls = [...form.querySelectorAll('input, select, button, textarea')]
        .filter(e => !['hidden', 'checkbox', 'radio'].includes(e.type))
        .map(e => ({e, r: e.getBoundingClientRect()}))
        .filter(c => c.r.width > 0 && c.r.height > 0)
        .map(c => ({name: c.e.id || c.e.name || c.e.textContent.trim().slice(0, 30) || c.e.tagName,
                    top: c.r.top, bottom: c.r.bottom, right: c.r.right}))
        .sort((a, b) => a.top - b.top);
    const lines = [];
    for (const c of controls) {
        const line = lines.find(l => c.top < Math.max(...l.map(x => x.bottom)) && c.bottom > Math.min(...l.map(x => x.top)));
        if (line) line.push(c); else lines.push([c]);
    }
    return {form: form.id || `inline-form ${i + 1}`, lines, right: form.getBoundingClientRect().right};
})"""


def _misaligned(forms):
    out = []
    for form in forms:
        for line in form["lines"]:
            bottoms = [c["bottom"] for c in line]
            if max(bottoms) - min(bottoms) > TOLERANCE:
                out.append((form["form"], [(c["name"], round(c["bottom"], 1)) for c in line]))
    return out


@pytest.mark.parametrize("name", list(PAGES))
def test_an_inline_forms_controls_share_their_bottom_edge(live_server, browser, shoot, forms_world, lead, name):
    url, expected = PAGES[name]
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    response = page.goto(live_server.url + url(forms_world))
    assert response and response.status == 200, f"{name}: HTTP {response and response.status}"
    named = {f["form"] for f in page.evaluate(MEASURE)}
    for want in expected:
        if isinstance(want, int):
            assert len(named) == want, f"{name}: {len(named)} inline forms, expected {want}: {sorted(named)}"
        else:
            assert want[1:] in named, f"{name}: no {want} among {sorted(named)}"
    failures = []
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 860})
        forms = page.evaluate(MEASURE)
        assert all(f["lines"] for f in forms), f"{name}: an inline form without a visible control: {forms}"
        shoot(page, f"inline-forms-{name}-{width}")
        for i, form in enumerate(page.locator("form.inline-form").all()):
            form.scroll_into_view_if_needed()
            form.screenshot(path=str(ARTIFACTS / f"inline-forms-{name}-{width}-form{i + 1}.png"))
        if _misaligned(forms):
            failures.append(f"{width} px: controls of one line not bottom-aligned: {_misaligned(forms)}")
        if page.evaluate("document.documentElement.scrollWidth") > width:
            failures.append(f"{width} px: the page scrolls sideways")
        sticking = [(f["form"], c["name"], round(c["right"])) for f in forms for line in f["lines"] for c in line]
        sticking = [s for s in sticking if s[2] > width] + [
            (f["form"], round(f["right"])) for f in forms if f["right"] > width
        ]
        if sticking:
            failures.append(f"{width} px: sticks out: {sticking}")
    context.close()
    assert not failures, f"{name}: " + "; ".join(failures)
