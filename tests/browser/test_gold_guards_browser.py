"""Issue 42's guards of the gold, seen in the browser at 1280 and 390 px: the lead's alert when a
qualification test spends its budget of failed attempts (Crowd batches page, batch page and
dashboard, until dismissed), the third-expert form on the expert round's page, and the *My work*
notice telling an insider which datasets are closed to them. Every page is axe-scanned (conftest)."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from annotation.models import Reference
from config.roles import WORKER
from hits.models import QualificationTest
from hits.services import expert, qualification

from ..authoring_data import unlabelled_dataset
from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch
from ..test_gold_integrity import label_round, second_expert_disagrees_on
from ..test_handout import make_workers
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [1280, 390]


def fits(page) -> None:
    """Nothing scrolls sideways: the page is no wider than the window."""
    assert page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth") <= 0


def fail_attempt(test: QualificationTest, worker) -> None:
    """One attempt with every fact of the worker's sheet answered wrong."""
    sheet = qualification.worker_sheet(test, worker)
    answers = {
        qualification.answer_key(item.pk, acu): not truth for item in sheet for acu, truth in item.answers.items()
    }
    attempt = qualification.submit_attempt(test=test, worker=worker, answers=answers)
    assert not attempt.passed


@pytest.mark.parametrize("width", WIDTHS)
def test_the_lead_sees_a_spent_test_budget_on_three_pages_until_dismissed(live_server, page, shoot, lead, width):
    page.set_viewport_size({"width": width, "height": 860})
    dataset = demo_dataset(f"gold-{width}")
    test = qualification.build_test(dataset=dataset, name="Screening", items=3, seed=11, failure_budget=2)
    batch = published_batch(dataset, assignments=3, qualification_test=test)
    for worker in make_workers(2, prefix=f"fail{width}"):
        fail_attempt(test, worker)
    test.refresh_from_db()
    assert test.budget_spent_at is not None and test.auto_rotations == 1

    login(page, live_server.url, lead.username, PASSWORD)
    alert = f"#test-alert-{test.pk}"
    said = "Qualification test “Screening” spent its budget of 2 failed attempts."
    for name, url in (
        ("batches", reverse("batch_list", args=[dataset.pk])),
        ("batch", reverse("batch_detail", args=[batch.pk])),
        ("dashboard", reverse("dashboard", args=[dataset.pk])),
    ):
        page.goto(f"{live_server.url}{url}")
        assert said in page.inner_text(alert), name
        assert page.get_attribute(alert, "role") == "alert"
        assert page.is_visible(f"{alert} button:has-text('Dismiss')")
        shoot(page, f"i42-test-alert-{name}-{width}")
        fits(page)

    page.click(f"{alert} button:has-text('Dismiss')")
    page.wait_for_url(f"**{reverse('batch_list', args=[dataset.pk])}")
    assert "The alert about “Screening” is dismissed." in page.inner_text("body")
    assert page.query_selector(alert) is None
    shoot(page, f"i42-test-alert-dismissed-{width}")
    assert QualificationTest.objects.get(pk=test.pk).budget_spent_at is None
    for url in (reverse("batch_detail", args=[batch.pk]), reverse("dashboard", args=[dataset.pk])):
        page.goto(f"{live_server.url}{url}")
        assert page.query_selector(alert) is None, url


@pytest.mark.parametrize("width", WIDTHS)
def test_the_lead_names_a_third_expert_who_then_decides(
    live_server, page, shoot, lead, author, make_user, tmp_path, width
):
    page.set_viewport_size({"width": width, "height": 860})
    dataset = unlabelled_dataset(tmp_path, name=f"experts-{width}", documents=1)
    third = make_user(f"third-expert-{width}", "author")
    Reference.objects.filter(document__dataset=dataset).update(writer=third, reviewer=author)
    batch = expert.create_round(dataset, count=2, experts=2, seed=0)
    split = label_round(batch, author)[0]
    second_expert_disagrees_on(split, batch, make_user(f"second-expert-{width}", "author"))

    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}{reverse('expert_round', args=[batch.pk])}")
    assert "where the experts disagree" in page.inner_text("#expert-disagreements")
    assert "or a third expert you name" in page.inner_text("#expert-referee")
    options = page.eval_on_selector_all("#referee-choice option", "els => els.map(e => e.textContent)")
    assert options == ["None: leads decide", author.username, third.username]  # the dataset's own authors
    shoot(page, f"i42-third-expert-form-{width}")
    fits(page)
    page.select_option("#referee-choice", label=third.username)
    page.click("#expert-referee button:has-text('Save')")
    page.wait_for_selector("#expert-referee b")
    assert f"Third expert: {third.username} decides where the experts disagree" in page.inner_text("#expert-referee")
    assert page.eval_on_selector("#referee-choice", "e => e.selectedOptions[0].textContent") == third.username
    shoot(page, f"i42-third-expert-named-{width}")
    fits(page)

    page.context.clear_cookies()
    login(page, live_server.url, third.username, PASSWORD)
    page.goto(f"{live_server.url}{reverse('expert_round', args=[batch.pk])}")
    assert page.query_selector("#referee-choice") is None  # only a lead names them
    page.click("#expert-disagreements a:has-text('decide them')")
    page.wait_for_url(f"**{reverse('expert_review', args=[batch.pk])}")
    assert page.locator("input[name^='acu-']").count() == 4  # two split facts, two choices each
    shoot(page, f"i42-third-expert-review-{width}")
    fits(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_my_work_tells_an_insider_which_datasets_are_closed_and_why(
    live_server, page, shoot, make_user, tmp_path, width
):
    page.set_viewport_size({"width": width, "height": 860})
    own = unlabelled_dataset(tmp_path, name=f"own-{width}", documents=2)
    published_batch(own, assignments=3)
    writer = make_user(f"wren-writer-{width}", "author")
    writer.groups.add(Group.objects.get(name=WORKER))
    first = Reference.objects.filter(document__dataset=own).first()
    Reference.objects.filter(pk=first.pk).update(writer=writer)

    login(page, live_server.url, writer.username, PASSWORD)
    page.goto(f"{live_server.url}{reverse('work')}")
    page.click("#start-next")
    page.wait_for_url(f"**{reverse('work')}")
    notice = page.inner_text("#insider-batches")
    assert "The batches of these datasets are not offered to you" in notice
    assert f"{own.name}: you write or proofread its references." in notice  # their reason, not every reason
    assert "you lead it" not in notice and "Other datasets' batches stay open to you." in notice
    assert f"The open batches of {own.name} are not offered to you" in page.inner_text("body")  # the message
    shoot(page, f"i42-insider-notice-{width}")
    fits(page)
