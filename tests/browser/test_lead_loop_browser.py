"""Issue 13 in Chromium: the lead's whole loop without a dead end, and money that always reads right.

One test per numbered item of the issue (item 3, the README, is tests/test_readme_commands.py, which
runs its commands), each asserting what a person sees.
"""

import re
from decimal import Decimal
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from annotation.models import Reference
from annotation.services import authoring
from hits.batch_fields import BatchSpec
from hits.models import Assignment, Batch, LedgerEntry
from hits.services import review
from hits.services.batches import BatchError, create_batch, publish_batch
from hits.services.simulate import simulate_crowd
from scoring.models import ScoringRun
from scoring.runs.services import compute_scores

from ..authoring_data import unauthored_dataset
from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch
from .axe_scan import RUN, TAGS
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AMOUNT = re.compile(r"[$£€]\d[\d,.]*")  # "$2.80", or "$2.80000000000000" as before
MONEY = re.compile(r"^-?[$£€][\d,]+\.\d\d$")


def as_lead(page, live_server, lead):
    page.on("dialog", lambda dialog: dialog.accept())
    login(page, live_server.url, lead.username, PASSWORD)
    page.wait_for_selector("h1")


def finished_batch(dataset, systems=1, workers=3, budget=None):
    batch = published_batch(
        dataset, name="finished round", systems=list(dataset.systems.order_by("name")[:systems]), budget=budget
    )
    simulate_crowd(batch, workers=workers, accuracy=0.9, seed=3)
    return batch


def approve_all(batch):
    ids = list(Assignment.objects.filter(hit__batch=batch, status="submitted").values_list("pk", flat=True))
    done, errors = review.bulk(review.approve, ids, by=None)
    assert done == len(ids) and not errors


# 1 ---------------------------------------------------------------------------------------------


def test_1_one_author_is_told_and_the_lead_assigns_a_reviewer_or_approves(
    live_server, browser, shoot, author, lead, tmp_path
):
    dataset = unauthored_dataset(tmp_path, documents=2)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    first, second = Reference.objects.filter(document__dataset=dataset).order_by("document__position")
    for ref in (first, second):
        sentences = list(ref.sentences.all())
        authoring.save_reference(
            reference_id=ref.pk,
            user=author,
            base_version=ref.version,
            sentences=[
                {
                    "id": s.pk,
                    "acus": [
                        {
                            "id": None,
                            "text": "A very long ACU that says several things at once, which the "
                            "editor must wrap and the reviewer must see in full, and that joins two facts",
                        }
                    ]
                    if i == 0
                    else [],
                }
                for i, s in enumerate(sentences)
            ],
        )

    writer = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
    login(writer, live_server.url, author.username, PASSWORD)
    writer.set_viewport_size({"width": 900, "height": 860})
    writer.goto(f"{live_server.url}/authoring/references/{first.pk}/")
    field = writer.locator("li.acu .acu-text").first
    box = field.bounding_box()
    assert box["height"] > 50 and field.evaluate("el => el.scrollHeight <= el.clientHeight + 2")  # wrapped, all visible
    shoot(writer, "i13-1-writer-long-acu-wraps")
    writer.on("dialog", lambda d: d.accept())  # sentences without an ACU: Done asks first
    writer.click("button:text('Done: send to review')")
    notice = writer.locator(".messages li").first.inner_text()
    assert "no other author can review it" in notice and "a lead must" in notice
    writer.goto(f"{live_server.url}/authoring/references/{first.pk}/")
    assert "no other author can review it" in writer.inner_text("#review-state")
    shoot(writer, "i13-1-writer-no-reviewer")
    writer.context.close()
    authoring.submit_for_review(reference_id=second.pk, user=author)

    page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
    as_lead(page, live_server, lead)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/authoring/")
    assert "Only one author" in page.inner_text("#one-author")
    page.goto(f"{live_server.url}/authoring/references/{first.pk}/review/")
    assert "No other author can review this reference" in page.inner_text("#no-reviewer")
    assert page.locator(".acu-review .hints li").count() >= 1  # the reviewer sees the atomicity hints
    shoot(page, "i13-1-lead-review-no-reviewer")
    page.click("#lead-approve")
    page.wait_for_selector(".messages li:has-text('Approved')")
    assert Reference.objects.get(pk=first.pk).status == "approved"

    # A second author, added on the People page (no admin), then assigned as reviewer.
    page.goto(f"{live_server.url}/people/")
    page.fill("#id_username", "rita-reviewer")
    page.select_option("#id_role", "author")
    page.click("#add-person button[type=submit]")
    assert "rita-reviewer can now log in as author" in page.inner_text(".messages")
    assert "Password (shown once)" in page.inner_text(".messages")
    shoot(page, "i13-1-people")
    page.goto(f"{live_server.url}/authoring/references/{second.pk}/review/")
    page.select_option("#id_reviewer", label="rita-reviewer")
    page.click("button:text('Assign reviewer')")
    page.wait_for_selector(".messages li:has-text('rita-reviewer now reviews this reference')")
    assert Reference.objects.get(pk=second.pk).reviewer.username == "rita-reviewer"
    page.fill("#id_lead_comment", "Split the ACU into its two facts.")
    page.click("button:text('Send back to')")
    page.wait_for_selector(".messages li:has-text('Sent back to the writer')")
    assert Reference.objects.get(pk=second.pk).status == "changes"
    page.context.close()


# 2 ---------------------------------------------------------------------------------------------


def test_2_batch_goes_draft_published_paid_and_links_to_its_results(live_server, page, shoot, lead):
    dataset = demo_dataset()
    draft = create_batch(
        dataset=dataset, spec=BatchSpec(name="not yet"), systems=list(dataset.systems.order_by("name")[:1])
    )
    batch = finished_batch(dataset)
    compute_scores(dataset, batch, trigger="test")
    as_lead(page, live_server, lead)

    page.goto(f"{live_server.url}/batches/{draft.pk}/")
    assert page.inner_text("#batch-stage") == "Draft"
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    assert page.inner_text("#batch-stage") == "Published"
    approve_all(batch)
    page.reload()
    assert page.inner_text("#batch-stage") == "Paid"
    assert "every approved reward is in the ledger" in page.inner_text("#stage-explained")
    page.wait_for_function("document.getElementById('round-alpha').textContent !== '…'")
    alpha = page.inner_text("#round-alpha")
    assert alpha == "–" or -1 <= float(alpha) <= 1
    shoot(page, "i13-2-batch-paid")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/batches/")
    assert page.locator("tbody tr", has_text=batch.name).locator(".badge").inner_text() == "Paid"
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    page.click("#round-results a:text('Systems and ranking')")
    page.wait_for_selector("#significance-matrix, .empty")
    assert f"round={batch.pk}" in page.url and "/dashboard/systems/" in page.url
    assert page.locator("#round option:checked").inner_text() == batch.name


# 4 ---------------------------------------------------------------------------------------------


def test_4_lead_reads_a_workers_answers_and_approves_and_bonuses_there(live_server, page, shoot, lead):
    dataset = demo_dataset()
    batch = finished_batch(dataset)
    assignment = Assignment.objects.filter(hit__batch=batch, status="submitted").order_by("pk").first()
    as_lead(page, live_server, lead)
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    page.locator("#assignments tbody tr", has=page.locator(f"input[value='{assignment.pk}']")).locator(
        "a:text('answers')"
    ).click()
    page.wait_for_selector("#answers")
    rows = page.locator("#answers tbody tr")
    assert rows.count() == assignment.hit.acu_count
    answers = rows.locator("td.answer").all_inner_texts()
    expected = {j.acu_id: j.present for j in assignment.judgments.all()}
    assert sorted(answers) == sorted("Present" if v else "Not present" for v in expected.values())
    majority = rows.locator("td:nth-child(4)").all_inner_texts()
    assert all(m.startswith(("Present", "Not present")) for m in majority)  # two other workers answered
    assert page.inner_text("#time-taken").endswith(" s")
    assert re.match(r"\d+/\d+", page.inner_text("#with-majority"))
    shoot(page, "i13-4-assignment-answers")
    page.click("button:text('Approve and pay')")
    page.wait_for_selector(".messages li:has-text('Approved 1')")
    assert page.inner_text("#assignment-status") == "Approved" and f"/assignments/{assignment.pk}/" in page.url
    page.fill("#bonus-amount", "0.25")
    page.fill("#bonus-reason", "Careful")
    page.click("button:text('Send bonus')")
    page.wait_for_selector(".messages li:has-text('Bonus of $0.25')")
    assert LedgerEntry.objects.filter(assignment=assignment, kind="bonus").count() == 1


# 5 ---------------------------------------------------------------------------------------------


def test_5_money_reads_with_two_decimals_and_a_sign_everywhere(live_server, browser, shoot, lead, worker):
    dataset = demo_dataset()
    batch = finished_batch(dataset, budget=Decimal(10))
    approve_all(batch)
    page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
    as_lead(page, live_server, lead)
    for path in (
        f"/datasets/{dataset.pk}/dashboard/?round={batch.pk}",
        f"/batches/{batch.pk}/",
        f"/batches/{batch.pk}/ledger/",
    ):
        page.goto(live_server.url + path)
        text = page.inner_text("main") if page.locator("main").count() else page.inner_text("body")
        amounts = AMOUNT.findall(text)
        assert amounts and all(MONEY.match(a.rstrip(".,")) for a in amounts), (path, amounts)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/?round={batch.pk}")
    card = page.locator("section.card", has=page.locator("h2:text('Spend')"))
    big = card.locator("p.big").inner_text()
    assert re.fullmatch(r"\$\d+\.\d\d of \$10\.00 budget \(\d+(\.\d)?%\)", big), big
    assert card.evaluate("el => el.scrollWidth <= el.clientWidth")  # nothing overflows the card
    assert re.fullmatch(r"rewards \$\d+\.\d\d · bonuses \$0\.00 · fees \$0\.00", card.locator("p").nth(1).inner_text())
    shoot(page, "i13-5-overview-spend")
    cells = page.context.request.get(f"{live_server.url}/api/batches/{batch.pk}/").json()
    assert cells["budget"] == "10.00"
    spent = sum(e.amount for e in LedgerEntry.objects.filter(batch=batch))
    assert cells["spend"] == {
        "rewards": f"{spent:.2f}",
        "bonuses": "0.00",
        "fees": "0.00",
        "total": f"{spent:.2f}",
        "budget": "10.00",
        "budget_left": f"{Decimal('10.00') - spent:.2f}",
        "currency": "USD",
    }
    page.context.close()

    page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
    login(page, live_server.url, worker.username, PASSWORD)
    page.wait_for_selector("h1:text('My work')")
    assert page.locator(".stats li").first.inner_text() == "$0.00 earned (approved work and bonuses)"
    shoot(page, "i13-5-worker-earned")
    page.context.close()


# 6 ---------------------------------------------------------------------------------------------


def test_6_publishing_is_refused_over_budget_until_the_lead_raises_it(live_server, page, shoot, lead, eager_celery):
    dataset = demo_dataset()
    draft = create_batch(dataset=dataset, spec=BatchSpec(budget=Decimal("1.00")))
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/batches/{draft.pk}/")
    alert = page.inner_text("#over-budget")
    assert "exceeds the budget $1.00" in alert and "raise the budget" in alert
    assert page.is_disabled("#publish")
    shoot(page, "i13-6-over-budget")
    # Even asked for directly, the publication is refused and nothing changes.
    with pytest.raises(BatchError, match=r"exceeds the budget \$1\.00"):
        publish_batch(draft)
    assert Batch.objects.get(pk=draft.pk).status == "draft"
    estimate = page.inner_text("#publish").removeprefix("Publish (").removesuffix(")")
    page.fill("#id_budget", estimate.lstrip("$").replace(",", ""))
    page.click("#budget-form button")
    page.wait_for_selector(f".messages li:has-text('Budget set to {estimate}')")
    assert not page.is_disabled("#publish")
    page.click("#publish")
    page.wait_for_selector(".messages li:has-text('Published')")
    assert any(f"of a {estimate} budget" in m for m in dialogs), dialogs
    assert Batch.objects.get(pk=draft.pk).status == "published"


def test_6_a_bonus_over_the_budget_asks_first(live_server, page, lead):
    dataset = demo_dataset()
    batch = finished_batch(dataset)
    approve_all(batch)
    spent = sum(e.amount for e in LedgerEntry.objects.filter(batch=batch))
    Batch.objects.filter(pk=batch.pk).update(budget=spent)
    assignment = Assignment.objects.filter(hit__batch=batch).first()
    as_lead(page, live_server, lead)
    page.goto(f"{live_server.url}/assignments/{assignment.pk}/")
    page.fill("#bonus-amount", "0.50")
    page.fill("#bonus-reason", "Thanks")
    page.click("button:text('Send bonus')")
    assert "over its budget" in page.inner_text(".messages li.error, .messages li")
    assert not LedgerEntry.objects.filter(kind="bonus").exists()
    page.fill("#bonus-amount", "0.50")
    page.fill("#bonus-reason", "Thanks")
    page.check("input[name=over_budget]")
    page.click("button:text('Send bonus')")
    page.wait_for_selector(".messages li:has-text('Bonus of $0.50')")
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1


# 7, 8 ------------------------------------------------------------------------------------------


def test_7_read_only_acus_are_as_wide_as_the_column(live_server, page, shoot, lead):
    dataset = demo_dataset()
    reference = Reference.objects.filter(document__dataset=dataset).order_by("document__position").first()
    as_lead(page, live_server, lead)
    page.goto(f"{live_server.url}/authoring/references/{reference.pk}/")
    page.wait_for_selector(".acu-text")
    widths = [box["width"] for box in (el.bounding_box() for el in page.locator(".acu-text").all())]
    column = page.locator("#editor").bounding_box()["width"]
    assert min(widths) > 0.8 * column and min(widths) > 300, (widths, column)
    shoot(page, "i13-7-read-only-acus")


def test_8_the_n_key_hint_is_readable_on_the_button(live_server, page, shoot, author, tmp_path):
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    login(page, live_server.url, author.username, PASSWORD)
    page.goto(f"{live_server.url}/authoring/")
    contrast = page.evaluate("""() => {
      const kbd = document.querySelector('#open-next kbd'), button = document.getElementById('open-next');
      const rgb = s => s.match(/[\\d.]+/g).map(Number);
      const lum = ([r, g, b]) => { const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
                                   return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
      const base = rgb(getComputedStyle(button).backgroundColor), over = rgb(getComputedStyle(kbd).backgroundColor);
      const a = over.length > 3 ? over[3] : 1;
      const bg = [0, 1, 2].map(i => over[i] * a + base[i] * (1 - a));
      const fg = rgb(getComputedStyle(kbd).color);
      const [l1, l2] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      return (l1 + 0.05) / (l2 + 0.05);
    }""")
    assert contrast >= 4.5, contrast
    page.locator("#open-next").screenshot(path=str(shoot(page, "i13-8-queue").with_name("i13-8-open-next.png")))


# 9 ---------------------------------------------------------------------------------------------


def test_9_charts_hold_every_interval_and_negative_alpha_and_download_as_png(live_server, page, shoot, lead, tmp_path):
    dataset = demo_dataset()
    batch = finished_batch(dataset, systems=2)
    for value in (-0.119, -0.326):  # two earlier runs with a negative alpha
        ScoringRun.objects.create(
            dataset=dataset,
            batch=batch,
            kind="scores",
            status="done",
            trigger="test",
            outputs={"alpha": {"acu_level": value, "summary_level": value / 2}},
        )
    compute_scores(dataset, batch, trigger="test")
    as_lead(page, live_server, lead)

    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/systems/?round={batch.pk}")
    page.wait_for_function(
        "window.Chart && Chart.getChart(document.querySelector('canvas[data-chart=leaderboard-chart]'))"
    )
    fit = page.evaluate("""() => {
      const chart = Chart.getChart(document.querySelector('canvas[data-chart=leaderboard-chart]'));
      const y = chart.scales.y, x = chart.scales.x, area = chart.chartArea;
      const ends = chart.data.datasets.flatMap(d => d.data.flatMap(p => [p.y, p.yMin, p.yMax])).filter(v => v !== null && v !== undefined);
      const xs = chart.getDatasetMeta(0).data.map(el => el.x);
      return {min: y.min, max: y.max, low: Math.min(...ends), high: Math.max(...ends), left: area.left, right: area.right, xs: xs,
              top: area.top, whiskerTop: y.getPixelForValue(Math.max(...ends))};
    }""")
    assert fit["min"] <= fit["low"] and fit["max"] >= fit["high"], fit
    assert fit["whiskerTop"] >= fit["top"]  # no whisker above the plot (over the title)
    assert len(fit["xs"]) == 2 and all(fit["left"] + 20 < x < fit["right"] - 20 for x in fit["xs"]), fit
    card = page.locator(".chart-card", has=page.locator("canvas[data-chart=leaderboard-chart]"))
    button = card.locator("button:text('Download PNG')")
    assert button.is_visible()
    # Readable: not white on the white chart, and on top (the element at its centre is the button).
    assert button.evaluate("el => getComputedStyle(el).color") != "rgb(255, 255, 255)"
    assert button.evaluate(
        "el => { const r = el.getBoundingClientRect();"
        " return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === el; }"
    )
    shoot(page, "i13-9-systems-chart")
    card.screenshot(path=str(shoot(page, "i13-9-systems-chart").with_name("i13-9-systems-chart-card.png")))
    with page.expect_download() as info:
        page.locator(".chart-card", has=page.locator("canvas[data-chart=leaderboard-chart]")).locator(
            "button:text('Download PNG')"
        ).click()
    download = info.value
    assert download.suggested_filename.endswith(".png")
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    assert saved.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and saved.stat().st_size > 2000

    page.goto(f"{live_server.url}/datasets/{dataset.pk}/dashboard/?round={batch.pk}")
    page.wait_for_function("window.Chart && Chart.getChart(document.querySelector('canvas[data-chart=trend-chart]'))")
    y_min = page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=trend-chart]')).scales.y.min")
    assert y_min <= -0.326
    shoot(page, "i13-9-trend-negative-alpha")


# 10, 11 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path, ready", [("/api/redoc/", "h1"), ("/api/docs/", ".swagger-ui .info")])
def test_10_api_docs_load_nothing_from_outside(live_server, page, shoot, lead, path, ready):
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    as_lead(page, live_server, lead)
    page.goto(live_server.url + path)
    page.wait_for_selector(ready)
    page.wait_for_load_state("networkidle")
    if path == "/api/docs/":
        # Every operation drawn before the page is scanned (axe): Swagger UI draws them after the title.
        page.wait_for_selector(".swagger-ui .opblock-summary")
        # One operation opened (no navigation, so the automatic scan does not see it): scanned here.
        page.click(".swagger-ui .opblock-post .opblock-summary-control")
        page.wait_for_selector(".swagger-ui .opblock.is-open .responses-table")
        opened = page.evaluate(RUN, TAGS)
        assert opened == [], "\n".join(f"{v['id']}: {v['nodes']}" for v in opened)
    host = urlparse(live_server.url).netloc
    outside = [
        u for u in requested if not u.startswith(("data:", f"blob:{live_server.url}")) and urlparse(u).netloc != host
    ]
    assert outside == []
    assert "ACU" in page.inner_text(ready)
    assert "{#" not in page.inner_text("body") and "swagger_ui.html" not in page.inner_text("body")  # no template text
    page.screenshot(path=str(shoot(page, "i13-10-docs").with_name(f"i13-10{path.replace('/', '-').rstrip('-')}.png")))


def test_11_datasets_address_lists_the_datasets(live_server, page, shoot, lead):
    dataset = demo_dataset()
    as_lead(page, live_server, lead)
    response = page.goto(f"{live_server.url}/datasets/")
    assert response.status == 200
    assert page.inner_text("h1") == "Datasets"
    assert dataset.name in page.locator("#datasets").inner_text()
    assert "A label round is one set of judgments" in page.inner_text("main")
    page.goto(live_server.url + "/")
    assert page.locator("#onboarding li.next").count() == 1 and "assigned" in page.inner_text("#onboarding")
    shoot(page, "i13-11-home-onboarding")


# New batch form -------------------------------------------------------------------------------


def test_new_batch_form_shows_one_provider_and_counts_live(live_server, page, shoot, lead):
    dataset = demo_dataset()
    as_lead(page, live_server, lead)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/batches/new")
    expect(page.locator("#live-estimate")).to_contain_text("HITs")  # no eval: the CSP forbids it
    assert page.locator(".field[data-provider=mturk]").first.is_hidden()
    assert page.locator(".field[data-provider=prolific]").first.is_hidden()
    assert page.inner_text("#live-estimate").startswith("40 HITs · 120 assignments · $32.40")
    page.select_option("#id_provider", "mturk")
    assert page.locator(".field[data-provider=mturk]").first.is_visible()
    assert page.locator(".field[data-provider=prolific]").first.is_hidden()
    page.select_option("#id_provider", "inhouse")
    page.fill("#id_documents", "2")
    page.fill("#id_budget", "1")
    # The count of both changes: on a busy machine the two fills can be more than the form's 250 ms
    # apart, and the count of the documents alone ("8 HITs", no budget) shows first.
    expect(page.locator("#live-estimate")).to_have_text(
        re.compile(r"^8 HITs .* over the \$1\.00 budget: publishing will be refused")
    )
    shoot(page, "i13-new-batch-form")
    page.fill("#id_documents", "")
    page.fill("#id_document_ids", "cnndm1017\nnot-a-document")
    expect(page.locator("#live-estimate")).to_contain_text("not-a-document")
    page.fill("#id_document_ids", "cnndm1017")
    expect(page.locator("#live-estimate")).to_have_text(re.compile(r"^4 HITs"))
    page.click("button:text('Create draft')")
    page.wait_for_selector("#batch-stage")
    batch = Batch.objects.latest("pk")
    assert batch.hits.count() == 4 and {h.summary.document.external_id for h in batch.hits.all()} == {"cnndm1017"}
