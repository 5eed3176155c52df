"""The lead's pages on a phone (390 px): the page body never scrolls sideways. A crowd batch's page
was about 480 px wide (its tables, the provider sections' long ids and links); wide tables now
scroll inside their own box, long ids wrap, forms stack. Each page is opened with the demo dataset
holding a published and a finished in-house batch, a Prolific and a panel batch (and, for the
authoring review, a reference sent for review); each page is also shot at 1280 px to look at."""

import pytest

from annotation.models import Reference
from annotation.services import authoring
from hits.batch_fields import BatchSpec
from hits.models import Assignment
from hits.services import batches, review
from hits.services.simulate import simulate_crowd

from ..authoring_data import unauthored_dataset
from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch, scored
from .conftest import login
from .test_prolific_browser import open_prolific_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = 390


def _prolific(dataset):
    from hits.providers.prolific.sessions import start_session

    study = "6627a1b2c3d4e5f6a7b8c9d0"  # Prolific's real ids are this long: the tables must hold them
    batch = open_prolific_batch(dataset, study_id=study, code="C1A2B3C4D5E6F7G8")
    batch.refresh_from_db()
    start_session(
        batch=batch,
        participant_id="5f8e7d6c5b4a39281706f5e4",
        study_id=study,
        session_id="789d914c0613cf2f5d83787a",
    )
    return batch


def _in_review(tmp_path, author):
    """A reference an author wrote and sent for review (the authoring review page a lead reads)."""
    dataset = unauthored_dataset(tmp_path, name="in-review", documents=2)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    ref = Reference.objects.get(writer=author, document__dataset=dataset)
    sentences = [{"id": s.pk, "acus": []} for s in ref.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": "A fact written at https://example.org/a/very/long/path/of/a/source"}]
    authoring.save_reference(reference_id=ref.pk, user=author, base_version=0, sentences=sentences)
    authoring.submit_for_review(reference_id=ref.pk, user=author)
    return ref


def _panel(dataset):
    batch = batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(
            provider="panel",
            assignments=2,
            provider_config={
                "panel_name": "Connect",
                "id_parameter": "participantId",
                "tasks_per_session": 2,
                "completion_url": "https://connect.cloudresearch.example/participant/project/complete?cc={code}",
            },
        ),
        systems=list(dataset.systems.filter(name="abs_bart_out")),
    )
    return batches.publish_batch(batch)


@pytest.fixture
def lead_world(lead, author, tmp_path):
    """The demo dataset: a published batch nobody worked, a finished one (simulated crowd, every
    assignment approved, so the ledger has rewards), a Prolific and a panel batch; scores computed."""
    dataset = demo_dataset()
    open_batch = published_batch(dataset)
    done = published_batch(dataset)
    simulate_crowd(done, workers=3, accuracy=0.9, spammers=1, seed=4)
    first = None
    for assignment in Assignment.objects.filter(hit__batch=done, status=Assignment.Status.SUBMITTED):
        first = first or assignment
        review.approve(assignment_id=assignment.pk, by=lead)
    scored(dataset, done)
    return {
        "dataset": dataset,
        "open": open_batch,
        "done": done,
        "assignment": first,
        "prolific": _prolific(dataset),
        "panel": _panel(dataset),
        "in_review": lambda: _in_review(tmp_path, author),
    }


PAGES = {
    "dataset-list": lambda w: "/datasets/",
    "dataset": lambda w: f"/datasets/{w['dataset'].pk}/",
    "batch-list": lambda w: f"/datasets/{w['dataset'].pk}/batches/",
    "batch-new": lambda w: f"/datasets/{w['dataset'].pk}/batches/new",
    "batch-published": lambda w: f"/batches/{w['open'].pk}/",
    "batch-finished": lambda w: f"/batches/{w['done'].pk}/",
    "batch-prolific": lambda w: f"/batches/{w['prolific'].pk}/",
    "batch-panel": lambda w: f"/batches/{w['panel'].pk}/",
    "ledger": lambda w: f"/batches/{w['done'].pk}/ledger/",
    "assignment-review": lambda w: f"/assignments/{w['assignment'].pk}/",
    "people": lambda w: "/people/",
    "dashboard": lambda w: f"/datasets/{w['dataset'].pk}/dashboard/?round={w['done'].pk}",
    "dashboard-systems": lambda w: f"/datasets/{w['dataset'].pk}/dashboard/systems/?round={w['done'].pk}",
    "dashboard-workers": lambda w: f"/datasets/{w['dataset'].pk}/dashboard/workers/?round={w['done'].pk}",
    "dashboard-protocols": lambda w: f"/datasets/{w['dataset'].pk}/dashboard/protocols/",
    "dashboard-metrics": lambda w: f"/datasets/{w['dataset'].pk}/dashboard/metrics/",
    "dataset-import": lambda w: "/datasets/import/",
    "authoring-overview": lambda w: f"/datasets/{w['dataset'].pk}/authoring/",
    "authoring-review": lambda w: f"/authoring/references/{w['in_review']().pk}/review/",
}


@pytest.mark.parametrize("name", list(PAGES))
def test_a_lead_page_fits_a_phone(live_server, browser, shoot, lead_world, lead, name):
    context = browser.new_context(viewport={"width": PHONE, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    login(page, live_server.url, lead.username, PASSWORD)
    response = page.goto(live_server.url + PAGES[name](lead_world))
    assert response and response.status == 200, f"{name}: HTTP {response and response.status}"
    shoot(page, f"phone-{name}-{PHONE}")
    wide = page.evaluate("document.documentElement.scrollWidth")
    if wide > PHONE:  # name what sticks out, so a failure says where to look
        culprits = page.evaluate(
            """(w) => [...document.querySelectorAll('main *')]
                .filter(e => e.getBoundingClientRect().right > w + 1)
                .slice(0, 8).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                    + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ').join('.') : '')
                    + ' ' + Math.round(e.getBoundingClientRect().right))""",
            PHONE,
        )
        pytest.fail(f"the {name} page scrolls sideways: {wide}px wide; sticking out: {culprits}")
    page.set_viewport_size({"width": 1280, "height": 860})  # the same page on a laptop, to look at
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    shoot(page, f"phone-{name}-1280")
    context.close()
