"""Issue 47, "Must show": a study that goes wrong the ways a real one does, in Chromium at 1280 and 390 px.

A pyramid folder without ACUs (zipped, 2 documents x 2 systems) imported on /datasets/import/ → its two
authors write the ACUs and each proofreads the other's → a batch published → a careless worker's work
rejected by the lead, the batch page saying it cannot finish by itself → a new worker lets a task expire
(its deadline moved into the past, as a slow worker's would be) and the place reopens for another →
the batch done → the RoSE JSONL export re-imported under another name, and the leaderboard, agreement
and workers pages read the same figures on both. axe-core scans every page (conftest.py); screenshots
in test-artifacts/i47-wrong-NN-*.png.
"""

import re
import shutil
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import ACU, Dataset, Reference
from hits.models import Assignment, Batch

from .test_first_study_e2e_browser import fits, open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCUMENTS = [
    ("harbour", "A storm closed the harbour on Monday. Ferries resume on Friday.", "A storm closed the harbour."),
    ("museum", "The museum reopened after repairs. Entry is free this week.", "The museum reopened after repairs."),
]
ACUS = {"harbour": "A storm closed the harbour.", "museum": "The museum reopened."}
SYSTEMS = ["short", "long"]  # system k's summary is its document's sentence k: only sentence 0 states the ACU


def summary(document: str, k: int) -> str:
    return document.split(". ")[k].rstrip(".") + "."


STATES_THE_ACU = {summary(d[1], 0) for d in DOCUMENTS}


def pyramid_zip(tmp_path):
    """A pyramid folder with no SCUs.txt and no labels, zipped as a lab would upload it."""
    root = tmp_path / "news"
    (root / "summaries").mkdir(parents=True)
    (root / "ids.txt").write_text("".join(f"{d[0]}\n" for d in DOCUMENTS))
    (root / "documents.txt").write_text("".join(f"{d[1]}\n" for d in DOCUMENTS))
    (root / "references.txt").write_text("".join(f"<t> {d[2]} </t>\n" for d in DOCUMENTS))
    for k, system in enumerate(SYSTEMS):
        lines = [summary(d[1], k) for d in DOCUMENTS]
        (root / "summaries" / f"{system}.summary").write_text("\n".join(lines) + "\n")
    return shutil.make_archive(str(tmp_path / "news"), "zip", root)


def answer(page, careful: bool):
    """A careful worker marks the ACU present where the summary states it; a careless one, never."""
    page.wait_for_selector(".acu-row.current")
    present = careful and page.inner_text(".summary-text").strip() in STATES_THE_ACU
    for _ in range(page.locator(".acu-row").count()):
        page.keyboard.press("y" if present else "n")
    page.keyboard.press("Enter")
    page.wait_for_selector("#task-notice:has-text('your answers are saved')")


def work(page, base, count, careful=True):
    for _ in range(count):
        page.goto(f"{base}/work/")
        page.click("#start-next")
        answer(page, careful)


def import_file(page, base, name, path, fmt):
    page.goto(f"{base}/datasets/import/")
    page.fill("#id_name", name)
    page.select_option("#id_format", fmt)
    page.set_input_files("#id_file", str(path))
    page.click("button:text('Import')")
    page.wait_for_selector(".messages li")
    return page.inner_text(".messages li")


def test_a_study_that_goes_wrong(live_server, browser, shoot, lead, author, worker, make_user, tmp_path, eager_celery):
    base = live_server.url
    other = make_user("bea-author", "author")
    careless = make_user("carl-careless", "worker")

    # 1. A pyramid folder without ACUs, imported on the page.
    lead_page = open_as(browser, base, lead)
    said = import_file(lead_page, base, "news", pyramid_zip(tmp_path), "pyramid")
    assert "2 documents, 2 systems, 4 summaries" in said, said
    dataset = Dataset.objects.get(name="news")
    assert not ACU.objects.filter(reference__document__dataset=dataset).exists()
    shoot(lead_page, "i47-wrong-01-imported")

    # 2. The dataset's two authors write its ACUs; each reference is proofread by the other one.
    lead_page.goto(f"{base}/datasets/{dataset.pk}/authoring/")
    assign = lead_page.locator("form", has=lead_page.locator("button:text-is('Assign')"))
    for person in (author, other):
        assign.locator(f"input[name=authors][value='{person.pk}']").check()
    assign.locator("button:text-is('Assign')").click()
    lead_page.wait_for_selector(".messages li:has-text('Assigned')")
    for writer, proofreader in ((author, other), (other, author)):
        page = open_as(browser, base, writer)
        page.on("dialog", lambda d: d.accept())  # sentences without an ACU: Done asks first
        for ref in Reference.objects.filter(document__dataset=dataset, writer=writer):
            page.goto(f"{base}/authoring/references/{ref.pk}/")
            page.wait_for_selector("#save-state.saved")
            page.keyboard.press("n")  # the new ACU box, the "n" not typed into it
            page.keyboard.type(ACUS[ref.document.external_id])
            page.keyboard.press("Enter")
            page.wait_for_selector("#save-state.saved")
            page.click("#submit-form button")
            page.wait_for_selector(f".messages li:has-text('Sent to review ({proofreader.username})')")
        page.context.close()
    for proofreader in (author, other):
        page = open_as(browser, base, proofreader)
        for ref in Reference.objects.filter(document__dataset=dataset, reviewer=proofreader):
            assert ref.writer in (author, other) and ref.writer != proofreader
            page.goto(f"{base}/authoring/references/{ref.pk}/review/")
            page.click("button:text('Approve')")
            page.wait_for_selector(".messages li:has-text('Approved')")
        page.context.close()
    refs = Reference.objects.filter(document__dataset=dataset)
    written = ACU.objects.filter(reference__document__dataset=dataset)
    assert sorted(written.values_list("text", flat=True)) == sorted(ACUS.values())
    assert {r.status for r in refs} == {"approved"} and {r.reviewer for r in refs} == {author, other}

    # 3. A batch of 4 HITs x 2 places, published; a careful worker and a careless one (on a phone).
    lead_page.goto(f"{base}/datasets/{dataset.pk}/batches/new")
    lead_page.fill("#id_name", "News round")
    lead_page.fill("#id_assignments", "2")
    lead_page.click("button:text('Create draft')")
    lead_page.wait_for_selector("#batch-stage")
    batch = Batch.objects.get(dataset=dataset, kind=Batch.Kind.CROWD)
    lead_page.click("#publish")
    lead_page.wait_for_selector(".messages li:has-text('Published')")
    page = open_as(browser, base, worker)
    work(page, base, 4)
    page.context.close()
    phone = open_as(browser, base, careless, width=390)
    work(phone, base, 3, careful=False)
    phone.goto(f"{base}/work/")
    phone.click("#start-next")
    phone.wait_for_selector(".acu-row.current")
    shoot(phone, "i47-wrong-02-task-390")
    fits(phone, 390)
    answer(phone, careful=False)
    phone.context.close()

    # 4. The lead rejects the careless work: the batch page says what its places wait for.
    bad = Assignment.objects.filter(hit__batch=batch, worker__user=careless)
    assert bad.count() == 4
    lead_page.goto(f"{base}/batches/{batch.pk}/")
    for a in bad:
        lead_page.check(f"input[name=assignment][value='{a.pk}']")
    lead_page.fill("#id_feedback", "Every fact marked absent, even the ones the summary states.")
    lead_page.click("#review-form button[value=reject]")
    lead_page.locator("#assignments").wait_for()
    assert set(bad.values_list("status", flat=True)) == {"rejected"}
    waiting = lead_page.inner_text("#waiting-places")
    assert "cannot finish by itself" in waiting and "add workers" in waiting, waiting
    assert "Workers are taking its HITs" not in lead_page.inner_text("main")
    shoot(lead_page, "i47-wrong-03-batch-waits")
    fits(lead_page)
    small = open_as(browser, base, lead, width=390)
    small.goto(f"{base}/batches/{batch.pk}/")
    assert "cannot finish by itself" in small.inner_text("#waiting-places")
    shoot(small, "i47-wrong-04-batch-waits-390")
    fits(small, 390)

    # 5. The lead adds workers; one lets a task expire, and its place goes to another.
    slow, spare = make_user("sam-slow", "worker"), make_user("pia-spare", "worker")
    phone = open_as(browser, base, slow, width=390)
    phone.goto(f"{base}/work/")
    phone.click("#start-next")
    phone.wait_for_selector(".acu-row.current")
    late = Assignment.objects.get(worker__user=slow, status=Assignment.Status.ASSIGNED)
    Assignment.objects.filter(pk=late.pk).update(deadline=timezone.now() - timedelta(minutes=2))
    phone.reload()
    assert "This task expired" in phone.inner_text("#task-expired")
    shoot(phone, "i47-wrong-05-task-expired-390")
    fits(phone, 390)
    work(phone, base, 3)
    phone.context.close()
    page = open_as(browser, base, spare)
    work(page, base, 1)
    page.context.close()
    taken = Assignment.objects.get(hit=late.hit, worker__user=spare)
    assert taken.status == Assignment.Status.SUBMITTED  # the expired place, reopened for another worker
    assert Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED).count() == 8
    lead_page.goto(f"{base}/batches/{batch.pk}/")
    assert lead_page.locator("#waiting-places").count() == 0
    shoot(lead_page, "i47-wrong-06-batch-done")
    small.goto(f"{base}/batches/{batch.pk}/")
    fits(small, 390)
    shoot(small, "i47-wrong-07-batch-done-390")
    small.context.close()

    # 6. Exported from the dataset page, re-imported under another name: the same figures on every page.
    lead_page.goto(f"{base}/datasets/{dataset.pk}/")
    with lead_page.expect_download() as info:
        lead_page.click("text=Export RoSE JSONL")
    exported = tmp_path / "news-export.jsonl"
    info.value.save_as(str(exported))
    said = import_file(lead_page, base, "news-copy", exported, "rose")
    assert "2 documents, 2 systems, 4 summaries" in said, said
    copy = Dataset.objects.get(name="news-copy")
    seen = {}
    for ds in (dataset, copy):
        lead_page.goto(f"{base}/datasets/{ds.pk}/dashboard/systems/")
        rows = lead_page.locator("#leaderboard tbody tr")
        board = [r.inner_text() for r in rows.all()]
        shoot(lead_page, f"i47-wrong-08-leaderboard-{ds.name}")
        lead_page.goto(f"{base}/datasets/{ds.pk}/dashboard/")
        alpha = [lead_page.inner_text(f"#alpha-{level}") for level in ("acu", "summary")]
        shoot(lead_page, f"i47-wrong-08-agreement-{ds.name}")
        lead_page.goto(f"{base}/datasets/{ds.pk}/dashboard/workers/")
        table = lead_page.locator("#workers tbody tr")
        people = sorted(r.inner_text() for r in table.all())
        seen[ds.name] = (board, alpha, people)
        shoot(lead_page, f"i47-wrong-08-workers-{ds.name}")
    board, alpha, people = seen["news"]
    assert len(board) == 2 and all(re.search(r"\d\.\d{4}", row) for row in board), board
    assert all(re.fullmatch(r"-?\d\.\d{4}", a) for a in alpha), alpha  # both alphas measured, not "–"
    assert len(people) == 4 and any("carl-careless" in row for row in people), people
    careless = next(row for row in people if "carl-careless" in row)
    assert "4 rejected" in careless and re.search(r"\d\.\d{3}", careless), careless  # agreement measured
    # The export carries the rejected work too: every figure of the three pages is the same, the
    # careless worker's row (4 rejected, the agreement the decision rests on) included, but the rate
    # per hour: a RoSE file carries the work's seconds, not its pay, so the copy measures no rate
    # (the original's is a rate only when the browser's work took a measurable second: machine speed).
    rate = 5  # the workers table's columns: worker, assignments, agreement, gold, median s, rate / hour, ...
    copy_board, copy_alpha, copy_people = seen["news-copy"]
    assert [row.split("\t")[rate] for row in copy_people] == ["–"] * 4, copy_people
    assert (copy_board, copy_alpha) == (board, alpha)
    assert [row.split("\t")[:rate] + row.split("\t")[rate + 1 :] for row in copy_people] == [
        row.split("\t")[:rate] + row.split("\t")[rate + 1 :] for row in people
    ]
    lead_page.context.close()
