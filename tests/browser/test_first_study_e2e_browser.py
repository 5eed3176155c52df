"""Issue 27, "Must show": a whole first study in Chromium, every step on a page.

Import a dataset with no ACUs and no labels (3 documents x 3 systems, written here) → two
authors write and proofread its ACUs → an expert labels gold in the browser → a qualification
test is built from that gold → a batch requires it → three workers qualify and work (one
assignment runs out of time and another worker takes its place) → the leaderboard with its
intervals and the workers table with gold accuracy. A screenshot per step in test-artifacts/
(i27-study-NN-*.png).
"""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation.models import ACU, Dataset, Reference
from hits import gold
from hits.models import Assignment, Batch, QualificationTest

from ..conftest import PASSWORD
from .conftest import answer_test_sheet, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Each document: its reference (two sentences), the ACUs the author writes (two of sentence 1,
# one of sentence 2) and three systems' summaries with the facts each states.
STUDY = [
    {
        "example_id": "park",
        "source": "The city council met on Monday and approved a new park downtown. Work starts soon; "
        "the park will open in June, officials said.",
        "reference": "The city council approved a new park on Monday. The park will open in June.",
        "acus": [
            ["The city council approved a new park.", "The approval came on Monday."],
            ["The park will open in June."],
        ],
        "systems": {
            "sys-a": ("On Monday the city council approved a new park that opens in June.", [1, 1, 1]),
            "sys-b": ("The city council approved a new park.", [1, 0, 0]),
            "sys-c": ("A park will open in June.", [0, 0, 1]),
        },
    },
    {
        "example_id": "storm",
        "source": "A storm closed the airport on Friday; it stayed shut for two days. "
        "Thousands of flights were cancelled and travellers slept in the terminals.",
        "reference": "A storm closed the airport for two days. Thousands of flights were cancelled.",
        "acus": [
            ["A storm closed the airport.", "The airport was closed for two days."],
            ["Thousands of flights were cancelled."],
        ],
        "systems": {
            "sys-a": ("A storm shut the airport for two days and thousands of flights were cancelled.", [1, 1, 1]),
            "sys-b": ("A storm closed the airport.", [1, 0, 0]),
            "sys-c": ("Travellers slept in the terminals after flights were cancelled.", [0, 0, 0]),
        },
    },
    {
        "example_id": "final",
        "source": "The home team won the cup final 3-1 on Saturday. Its captain scored twice before half time.",
        "reference": "The team won the final 3-1. Its captain scored twice.",
        "acus": [["The team won the final.", "The final score was 3-1."], ["The team's captain scored twice."]],
        "systems": {
            "sys-a": ("The team won the final 3-1, its captain scoring twice.", [1, 1, 1]),
            "sys-b": ("The home team won the cup final.", [1, 0, 0]),
            "sys-c": ("The captain scored two goals as the team won 3-1.", [1, 1, 1]),
        },
    },
]
TRUTH = {s[0]: s[1] for doc in STUDY for s in doc["systems"].values()}  # summary text -> facts present


def study_file(tmp_path):
    path = tmp_path / "first-study.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for doc in STUDY:
            record = {
                "example_id": doc["example_id"],
                "source": doc["source"],
                "reference": doc["reference"],
                "reference_acus": [],
                "system_outputs": {name: text for name, (text, _) in doc["systems"].items()},
            }
            fh.write(json.dumps(record) + "\n")
    return path


def open_as(browser, base_url, user, width=1280):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    login(page, base_url, user.username, PASSWORD)
    page.wait_for_selector("h1")
    return page


def fits(page, width=1280):
    scroll = page.evaluate("document.documentElement.scrollWidth")
    wide = page.evaluate(
        f"""Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > {width} + 2
        && !e.closest('.table-scroll')).slice(0, 6).map(e => e.tagName + '#' + e.id + '.' + e.className + ' '
        + Math.round(e.getBoundingClientRect().right))"""
    )
    assert scroll <= width, f"{page.url} is {scroll} px wide: {wide}"


def answer_task(page, answers=None) -> list[int]:
    """Answer the open task page by keyboard (the summary's true facts, or `answers`) and submit."""
    page.wait_for_selector(".acu-row.current")
    truth = TRUTH[page.inner_text(".summary-text").strip()]
    given = truth if answers is None else answers
    assert page.locator(".acu-row").count() == len(given)
    for present in given:
        page.keyboard.press("y" if present else "n")
    page.keyboard.press("Enter")
    return given


def work(page, base_url, count, answers=None):
    for _ in range(count):
        page.goto(f"{base_url}/work/")
        page.click("#start-next")
        answer_task(page, answers)
        page.wait_for_selector("#task-notice:has-text('your answers are saved')")


def take_test(page, test):
    page.click("text=Take the test")
    page.wait_for_selector("button:text('Submit the test')")
    answer_test_sheet(page, test)
    page.click("button:text('Submit the test')")
    page.wait_for_selector(".messages li:has-text('You passed')")


def test_a_first_study_from_nothing(
    live_server, browser, shoot, lead, author, worker, make_user, tmp_path, eager_celery
):
    base = live_server.url
    proofreader = make_user("bea-author", "author")
    workers = [worker, make_user("willa-worker", "worker"), make_user("walt-worker", "worker")]

    # 1. The lead imports a dataset with no ACUs and no labels.
    lead_page = open_as(browser, base, lead)
    lead_page.goto(f"{base}/datasets/import/")
    lead_page.fill("#id_name", "first-study")
    lead_page.set_input_files("#id_file", str(study_file(tmp_path)))
    lead_page.click("button:text('Import')")
    lead_page.wait_for_selector("#gold")
    dataset = Dataset.objects.get(name="first-study")
    assert [li.strip() for li in lead_page.locator(".stats li").all_inner_texts()[:3]] == [
        "3 documents",
        "3 systems",
        "9 summaries",
    ]
    assert lead_page.inner_text("#gold-count").startswith("0 of 9 summaries are gold")
    assert "write and proofread the ACUs first" in lead_page.inner_text("#gold-wait")  # nothing to label yet
    shoot(lead_page, "i27-study-01-imported")

    # 2. The lead assigns the references; one author writes them by keyboard, the other proofreads.
    lead_page.goto(f"{base}/datasets/{dataset.pk}/authoring/")
    assign = lead_page.locator("form", has=lead_page.locator("button:text-is('Assign')"))
    assign.locator(f"input[name=authors][value='{author.pk}']").check()
    # Proofreading goes only to the dataset's own authors: the lead names the second one here.
    assign.locator("#id_reviewer").select_option(str(proofreader.pk))
    assign.locator("button:text-is('Assign')").click()
    lead_page.wait_for_selector(".messages li:has-text('Assigned')")
    writer = open_as(browser, base, author)
    writer.on("dialog", lambda d: d.accept())  # a sentence without an ACU: Done asks first
    for doc in STUDY:
        writer.goto(f"{base}/authoring/")
        writer.keyboard.press("n")  # the queue's next reference
        writer.wait_for_selector("#save-state.saved")
        writer.keyboard.press("n")  # the page's new ACU box
        writer.wait_for_selector("#editor .acu-new:focus")
        first, second = doc["acus"]
        for text in first:
            writer.keyboard.type(text)
            writer.keyboard.press("Enter")
        writer.keyboard.press("ArrowDown")  # the next sentence's new-ACU field
        for text in second:
            writer.keyboard.type(text)
            writer.keyboard.press("Enter")
        writer.wait_for_selector("#save-state.saved")
        if doc is STUDY[0]:
            shoot(writer, "i27-study-02-author-writes")
        writer.click("#submit-form button")
        writer.wait_for_selector(".messages li:has-text('Sent to review (bea-author)')")
    writer.context.close()
    reviewer = open_as(browser, base, proofreader)
    for reference in Reference.objects.filter(document__dataset=dataset).order_by("document__position"):
        reviewer.goto(f"{base}/authoring/references/{reference.pk}/review/")
        if reference.document.position == 0:
            shoot(reviewer, "i27-study-03-proofread")
        reviewer.click("button:text('Approve')")
        reviewer.wait_for_selector(".messages li:has-text('Approved')")
    reviewer.context.close()
    assert set(Reference.objects.filter(document__dataset=dataset).values_list("status", flat=True)) == {"approved"}
    assert ACU.objects.filter(reference__document__dataset=dataset).count() == 9

    # 3. No gold yet: the qualification page says where to make it; the dataset page offers it.
    lead_page.goto(f"{base}/datasets/{dataset.pk}/qualification/new")
    lead_page.click("button:text('Create test')")
    assert "Label some as gold in the browser" in lead_page.inner_text("section.card")
    shoot(lead_page, "i27-study-04-no-gold-yet")
    lead_page.goto(f"{base}/datasets/{dataset.pk}/")
    lead_page.fill("#id_count", "9")
    lead_page.fill("#id_experts", "1")  # one expert labels this study (two is the default)
    shoot(lead_page, "i27-study-05-gold-offered")
    lead_page.click("#expert-form button")
    lead_page.wait_for_selector("#expert-progress")
    expert_round = Batch.objects.get(dataset=dataset, kind=Batch.Kind.EXPERT)
    assert expert_round.hits.count() == 9
    assert "0 of 9 summaries labelled" in lead_page.inner_text("#expert-progress")

    # 4. An author labels the gold on the crowd's task page, summary after summary.
    expert = open_as(browser, base, author)
    expert.goto(f"{base}/datasets/{dataset.pk}/")
    expert.click(".expert-open a")
    expert.click("#expert-next button")
    for n in range(9):
        answer_task(expert)
        expert.wait_for_selector("#task-notice:has-text('your answers are saved')")
        if n == 0:
            assert "Expert round" in expert.inner_text("#expert-notice")
            shoot(expert, "i27-study-06-expert-labels")
            fits(expert)
        expert.click("#after-submit button")  # "Next summary"
    expert.wait_for_selector(".messages li:has-text('Every summary of this round is labelled')")
    assert "9 of 9 summaries labelled" in expert.inner_text("#expert-progress")
    shoot(expert, "i27-study-07-expert-round-done")
    expert.context.close()
    known = gold.known_answers(dataset)
    assert len(known) == 9
    for hit in expert_round.hits.select_related("summary"):
        acus = list(hit.summary.document.reference.acus.order_by("sentence__position", "position"))
        assert [known[hit.summary_id][a.pk] for a in acus] == [bool(v) for v in TRUTH[hit.summary.text]]

    # 5. The lead builds a qualification test from the gold and a batch that requires it.
    lead_page.goto(f"{base}/datasets/{dataset.pk}/")
    assert lead_page.inner_text("#gold-count").startswith("9 of 9 summaries are gold")
    lead_page.click("text=Build a qualification test from the gold")
    lead_page.fill("#id_items", "3")
    lead_page.click("button:text('Create test')")
    lead_page.wait_for_selector(".messages li:has-text('each attempt shows 3 of 9 gold items')")
    test = QualificationTest.objects.get(dataset=dataset)
    shoot(lead_page, "i27-study-08-test-built")
    lead_page.goto(f"{base}/datasets/{dataset.pk}/batches/new")
    lead_page.fill("#id_name", "First study")
    lead_page.fill("#id_assignments", "2")
    lead_page.select_option("#id_qualification_test", str(test.pk))
    lead_page.fill("#id_gold_share", "0.3")
    expect(lead_page.locator("#live-estimate")).to_contain_text("9 HITs · 18 assignments · $2.70")
    shoot(lead_page, "i27-study-09-new-batch")
    lead_page.click("button:text('Create draft')")
    lead_page.wait_for_selector("#batch-stage")
    batch = Batch.objects.get(dataset=dataset, kind=Batch.Kind.CROWD)
    assert batch.qualification_test_id == test.pk and batch.hits.filter(gold_answers__isnull=False).count() == 3
    lead_page.click("#publish")
    lead_page.wait_for_selector(".messages li:has-text('Published')")

    # 6. Workers qualify and work; one assignment runs out of time and another worker takes its place.
    first = open_as(browser, base, workers[0])
    take_test(first, test)
    shoot(first, "i27-study-10-qualified")
    work(first, base, 3)
    first.goto(f"{base}/work/")
    first.click("#start-next")
    first.wait_for_selector(".acu-row.current")
    late = Assignment.objects.get(worker__user=workers[0], status=Assignment.Status.ASSIGNED)
    Assignment.objects.filter(pk=late.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    answer_task(first)
    first.wait_for_selector("#task-notice:has-text('ran out')")
    assert "went back to the other workers" in first.inner_text("#task-notice")
    # No retry can succeed: Submit is off and the next task is offered instead.
    expect(first.locator("#submit-task")).to_be_disabled()
    expect(first.locator("#after-submit button")).to_be_visible()
    shoot(first, "i27-study-11-time-ran-out")
    first.context.close()
    assert Assignment.objects.get(pk=late.pk).status == Assignment.Status.EXPIRED

    second = open_as(browser, base, workers[1])
    take_test(second, test)
    work(second, base, 9)
    second.context.close()
    third = open_as(browser, base, workers[2], width=390)
    take_test(third, test)
    work(third, base, 6, answers=[0, 0, 0])  # a careless worker: nothing present
    third.goto(f"{base}/work/")
    third.click("#start-next")
    third.wait_for_selector(".messages li:has-text('No task is waiting')")
    shoot(third, "i27-study-12-worker-done-390")
    fits(third, 390)
    third.context.close()
    taken = Assignment.objects.get(hit=late.hit, worker__user=workers[2])
    assert taken.status == Assignment.Status.SUBMITTED  # the expired place, taken by another worker
    assert Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED).count() == 18

    # 7. The lead reads the batch, the leaderboard with its intervals and the workers table with the gold.
    lead_page.goto(f"{base}/batches/{batch.pk}/")
    shoot(lead_page, "i27-study-13-batch")
    fits(lead_page)
    lead_page.goto(f"{base}/datasets/{dataset.pk}/dashboard/systems/?round={batch.pk}")
    rows = lead_page.locator("#leaderboard tbody tr")
    assert rows.count() == 3
    assert rows.first.locator("td").nth(1).inner_text().strip() == "sys-a"
    intervals = [rows.nth(i).locator("td").nth(3).inner_text() for i in range(3)]
    assert all("–" in ci or "," in ci for ci in intervals), intervals
    shoot(lead_page, "i27-study-14-leaderboard")
    lead_page.goto(f"{base}/datasets/{dataset.pk}/dashboard/workers/?round={batch.pk}")
    table = lead_page.locator("#workers tbody tr")
    assert table.count() == 3
    shown = {row.get_attribute("data-worker"): row.locator("td").nth(3).inner_text().strip() for row in table.all()}
    for w in workers:  # the gold accuracy each worker earned on the gold HITs (made from the browser labels)
        done = Assignment.objects.filter(hit__batch=batch, worker__user=w, gold_total__isnull=False)
        right, total = sum(a.gold_correct for a in done), sum(a.gold_total for a in done)
        assert shown[w.username] == (f"{right / total:.3f}" if total else "–"), (w.username, shown)
    assert shown[workers[1].username] == "1.000"  # the careful worker did all 3 gold HITs, all right
    assert shown[workers[2].username] == "0.000"  # the careless one failed the gold HITs it got
    shoot(lead_page, "i27-study-15-workers")
    lead_page.goto(f"{base}/datasets/{dataset.pk}/dashboard/workers/")
    assert f"{dataset.name}/{author.username}, 9 summaries" in lead_page.inner_text("#expert-labels")
    shoot(lead_page, "i27-study-16-workers-and-experts")
    assert author.username not in [
        c.strip() for c in lead_page.locator("#workers tbody tr td:first-child").all_inner_texts()
    ]
    lead_page.context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_the_expert_pages_fit_a_phone_and_a_desktop(live_server, browser, shoot, lead, author, tmp_path, width):
    from ..authoring_data import unlabelled_dataset

    dataset = unlabelled_dataset(tmp_path, documents=2)
    base = live_server.url
    page = open_as(browser, base, lead, width=width)
    page.goto(f"{base}/datasets/{dataset.pk}/#gold")
    assert page.inner_text("#gold-count").startswith("0 of 8 summaries are gold")
    assert page.input_value("#id_count") == "8"  # what is there to label, below the 10 wanted
    fits(page, width)
    shoot(page, f"i27-expert-gold-offer-{width}")
    page.click("#expert-form button")
    page.wait_for_selector("#expert-progress")
    fits(page, width)
    page.context.close()

    page = open_as(browser, base, author, width=width)
    page.goto(f"{base}/datasets/{dataset.pk}/")
    assert page.inner_text(".expert-open a") == "Label gold: 8 of 8 summaries left"
    page.click(".expert-open a")
    assert "0 of 8 summaries labelled" in page.inner_text("#expert-progress")
    fits(page, width)
    shoot(page, f"i27-expert-round-{width}")
    page.click("#expert-next button")
    page.wait_for_selector(".acu-row.current")
    assert page.inner_text("header.topbar nav a") == "Expert round"
    fits(page, width)
    shoot(page, f"i27-expert-task-{width}")
    page.context.close()
