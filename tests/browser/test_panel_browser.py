"""A participant panel in a real browser (issue 31): the lead creates a panel batch, three
participants arrive through the study link with made-up panel ids, one fails the screening test,
two work their sessions (one leaves and returns), both get the completion code; the lead approves
one, rejects one, bonuses one, downloads both lists, marks them paid, and the ledger and the
batch's spend agree."""

from decimal import Decimal
from pathlib import Path

import pytest

from hits.models import Assignment, Batch, LedgerEntry
from hits.providers.panel.config import completion_code
from hits.providers.panel.models import PanelPayment, PanelSession
from hits.selectors.figures import batch_spend as spend
from hits.services.qualification import build_test

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset
from .conftest import answer_test_sheet, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CODE = "CONNECT-ACU-7"
DONE = "https://connect.example/complete?cc={code}"
SCREENED_OUT = "https://connect.example/screened-out"


def answer_screening(page, test, right: bool):
    answer_test_sheet(page, test, right)
    page.click("#submit-screening")


def work_task(page, n: int, total: int):
    page.locator("#session-progress").filter(has_text=f"Task {n} of {total}").wait_for()
    page.locator(".acu-row.current").first.wait_for()
    for i in range(page.locator(".acu-row").count()):
        page.keyboard.press("y" if i % 2 else "n")
    page.keyboard.press("Enter")


def test_a_panel_study_from_link_to_payment(live_server, page, shoot, lead, eager_celery, tmp_path):
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="Panel screening", items=1, pass_score=1.0, max_attempts=1)
    landed = []

    def panel_site(route):  # stands in for the panel's pages (no network here)
        landed.append(route.request.url)
        route.fulfill(
            status=200,
            content_type="text/html",
            body="<!doctype html><html lang='en'><title>Panel</title><h1 id='panel-done'>Back at the panel</h1>",
        )

    page.route("https://connect.example/**", panel_site)
    page.on("dialog", lambda dialog: dialog.accept())

    # ---- the lead creates and publishes a panel batch
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/batches/new")
    assert "closed:" in page.locator("#id_provider option[value=mturk]").inner_text()
    page.select_option("#id_provider", "panel")
    page.fill("#id_name", "Connect round")
    page.fill("#id_assignments", "2")
    page.check(f"input[name=systems][value='{dataset.systems.get(name='abs_bart_out').pk}']")
    page.select_option("#id_qualification_test", str(test.pk))
    page.fill("#id_panel_panel_name", "CloudResearch Connect")
    page.fill("#id_panel_id_parameter", "participantId")
    page.fill("#id_panel_completion_code", CODE)
    page.fill("#id_panel_completion_url", DONE)
    page.fill("#id_panel_tasks_per_session", "2")
    page.select_option("#id_panel_pay_per", "session")
    page.fill("#id_panel_screened_out_url", SCREENED_OUT)
    shoot(page, "panel-new-batch")
    page.click("#batch-form button[type=submit]")
    page.locator("#panel-section").wait_for()
    batch = Batch.objects.get(name="Connect round")
    page.click("#publish")
    page.locator("#panel-section").wait_for()
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.PUBLISHED
    link = page.input_value("#study-link")
    assert link.endswith("participantId=") and "?e=" in link
    assert page.get_attribute("#test-link", "href") == f"{link}TEST-{batch.pk}"
    page.click("#copy-link")
    page.locator("#copy-status").filter(has_text="Copied.").wait_for()
    session_pay = page.inner_text("#session-pay")
    shoot(page, "panel-batch-page")

    # ---- participant 1 fails the screening test
    page.goto(link + "FAIL-101")
    answer_screening(page, test, right=False)
    assert "Not passed" in page.inner_text("#screening-result")
    assert page.get_attribute("#screened-out", "href") == SCREENED_OUT
    shoot(page, "panel-screened-out")
    page.goto(link + "FAIL-101")  # no second attempt, no task
    assert page.locator("#start-task").count() == 0

    # ---- participant 2 passes and works the whole session
    page.goto(link + "WORK-202")
    answer_screening(page, test, right=True)
    assert "Passed" in page.inner_text("#screening-result")
    assert PanelSession.objects.count() == 0  # no place yet: only when a task starts
    page.click("#start-task")
    work_task(page, 1, 2)
    shoot(page, "panel-task")
    work_task(page, 2, 2)
    code_202 = completion_code(batch, "WORK-202")  # each participant's own code, the lead's at its start
    assert code_202.startswith(CODE + "-")
    page.locator("#completion-code").filter(has_text=code_202).wait_for()
    shoot(page, "panel-complete")
    page.wait_for_url(DONE.format(code=code_202))
    page.locator("#panel-done").wait_for()

    # ---- participant 3 passes, works one task, leaves, returns with the same link, finishes
    page.goto(link + "WORK-303")
    answer_screening(page, test, right=True)
    page.click("#start-task")
    work_task(page, 1, 2)
    page.locator("#session-progress").filter(has_text="Task 2 of 2").wait_for()
    page.goto("about:blank")  # leaves
    page.goto(link + "WORK-303")  # comes back through the panel's link: the task they hold
    work_task(page, 2, 2)
    code_303 = completion_code(batch, "WORK-303")
    page.locator("#completion-code").filter(has_text=code_303).wait_for()
    page.wait_for_url(DONE.format(code=code_303))
    assert landed == [DONE.format(code=code_202), DONE.format(code=code_303)] and code_202 != code_303
    assert set(PanelSession.objects.values_list("worker__external_id", "status")) == {
        ("WORK-202", "completed"),
        ("WORK-303", "completed"),
    }
    assert not Assignment.objects.filter(worker__external_id="FAIL-101").exists()

    # ---- the lead approves one, rejects one, bonuses one
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    sessions_table = page.inner_text("#panel-sessions")
    assert "WORK-202" in sessions_table and "2/2" in sessions_table
    good = list(Assignment.objects.filter(worker__external_id="WORK-202").order_by("pk"))
    bad = list(Assignment.objects.filter(worker__external_id="WORK-303").order_by("pk"))
    for a in good:
        page.check(f"input[name=assignment][value='{a.pk}']")
    page.click("#review-form button[value=approve]")
    page.locator("#assignments").wait_for()
    for a in bad:
        page.check(f"input[name=assignment][value='{a.pk}']")
    page.fill("#id_feedback", "The answers do not match the summaries.")
    page.click("#review-form button[value=reject]")
    page.locator("#assignments").wait_for()
    page.select_option("#bonus-assignment", str(good[0].pk))
    page.fill("#bonus-amount", "0.50")
    page.fill("#bonus-reason", "Careful work")
    page.click("#bonus-form button[type=submit]")
    page.locator("#panel-section").wait_for()
    assert set(Assignment.objects.filter(pk__in=[a.pk for a in good]).values_list("status", flat=True)) == {"approved"}
    assert set(Assignment.objects.filter(pk__in=[a.pk for a in bad]).values_list("status", flat=True)) == {"rejected"}
    shoot(page, "panel-lists")

    # ---- both lists downloaded, their contents checked, then marked paid
    files = {}
    for name in ("approval-list", "bonus-list"):
        with page.expect_download() as info:
            page.click(f"#{name}")
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        files[name] = Path(path).read_text(encoding="utf-8")
    assert files["approval-list"] == "WORK-202\n"
    assert files["bonus-list"] == "WORK-202,0.50\n"
    rewards = LedgerEntry.objects.filter(batch=batch, kind="reward")
    assert sum(rewards.values_list("amount", flat=True)) == Decimal(session_pay.lstrip("$"))  # the study reward
    # The codes entered at the panel are checked: WORK-303's code under WORK-202's id is refused.
    page.fill("#panel-codes", f"WORK-202,{code_303}")
    page.click("#mark-paid")
    page.locator("#panel-section").wait_for()
    assert "not the code made for them: WORK-202" in page.inner_text("body")
    assert not PanelPayment.objects.exists()
    page.fill("#panel-codes", f"WORK-202,{code_202}\nWORK-303,{code_303}")
    page.click("#mark-paid")
    page.locator("#panel-section").wait_for()
    assert "paid at the panel" in page.inner_text("body")
    page.reload()
    page.locator("#panel-paid").wait_for()

    # ---- the ledger and the batch's spend agree
    entries = LedgerEntry.objects.filter(batch=batch)
    assert set(entries.values_list("kind", flat=True)) == {"reward", "bonus"}
    assert all("to pay at the panel" in note for note in entries.values_list("note", flat=True))
    total = sum(entries.values_list("amount", flat=True))
    assert spend(batch)["total"] == total == Decimal(session_pay.lstrip("$")) + Decimal("0.50")
    assert PanelPayment.objects.filter(batch=batch).count() == entries.count() == 3
    assert page.inner_text("#panel-paid") == f"${total:.2f}"
    assert f"spent ${total:.2f}" in page.inner_text(".stats")
    assert page.locator("#mark-paid").count() == 0  # nothing left to pay
    shoot(page, "panel-paid")
