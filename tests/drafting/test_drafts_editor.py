"""Drafts in the authoring flow: suggest, accept (edited or not), dismiss, history, hints,
pre-drafting a dataset, machine units and time with and without drafts."""

import json

import pytest
from django.urls import reverse

from annotation.drafting import service as drafting
from annotation.models import ACU, ACUChange, AuthoringTime, DraftACU, DraftJob, Reference, ReferenceSentence
from annotation.services import authoring, authoring_progress

from ..authoring_data import unauthored_dataset
from ..conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset(tmp_path):
    return unauthored_dataset(tmp_path)


@pytest.fixture
def reference(dataset, author):
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    return Reference.objects.get(writer=author)


def post_json(client, url, body):
    return client.post(url, data=json.dumps(body), content_type="application/json")


def payload(reference, accepted=None, dismissed=()):
    """Save body: sentence 1 gets the accepted drafts [(draft id, text)], the rest stay empty."""
    sentences = list(reference.sentences.all())
    return {
        "version": Reference.objects.get(pk=reference.pk).version,
        "sentences": [
            {"id": s.pk, "acus": [{"id": None, "text": t, "draft": d} for d, t in (accepted or [])] if i == 0 else []}
            for i, s in enumerate(sentences)
        ],
        "dismissed": list(dismissed),
    }


def test_writer_gets_rules_drafts_for_one_sentence_and_accepts_edits_and_dismisses(client, author, reference):
    client.login(username=author.username, password=PASSWORD)
    first = reference.sentences.first()
    resp = post_json(
        client, reverse("authoring_suggest", args=[reference.pk]), {"drafter": "rules", "sentence": first.pk}
    )
    assert resp.status_code == 200, resp.content
    data = resp.json()
    drafts = data["sentences"][0]["drafts"]
    assert data["made"] == len(drafts) >= 2
    assert all(d["drafter"] == "rules" for d in drafts)
    assert all(not s["drafts"] for s in data["sentences"][1:])  # only the asked sentence
    assert DraftACU.objects.filter(reference=reference, status="pending").count() == len(drafts)

    keep, edit, drop = drafts[0], drafts[1], drafts[-1] if len(drafts) > 2 else None
    accepted = [(keep["id"], keep["text"]), (edit["id"], edit["text"].replace(".", " in Nepal."))]
    resp = post_json(
        client,
        reverse("authoring_save", args=[reference.pk]),
        payload(reference, accepted, dismissed=[drop["id"]] if drop else []),
    )
    assert resp.status_code == 200, resp.content
    state = resp.json()
    acus = list(ACU.objects.filter(reference=reference).order_by("position"))
    assert [a.text for a in acus] == [t for _, t in accepted]
    assert {a.drafter for a in acus} == {"rules"}
    assert not any(a.machine for a in acus)
    changes = ACUChange.objects.filter(reference=reference, action=ACUChange.Action.ACCEPT).order_by("pk")
    assert [(c.old_text, c.new_text, c.drafter) for c in changes] == [
        (keep["text"], keep["text"], "rules"),
        (edit["text"], accepted[1][1], "rules"),
    ]
    if drop:
        dismissal = ACUChange.objects.get(reference=reference, action=ACUChange.Action.DISMISS)
        assert (dismissal.old_text, dismissal.drafter) == (drop["text"], "rules")
        assert DraftACU.objects.get(pk=drop["id"]).status == "dismissed"
    assert DraftACU.objects.get(pk=keep["id"]).acu_id == acus[0].pk
    # the editor's history lists the drafter; accepted drafts no longer show as drafts
    assert {h["drafter"] for h in state["history"]} == {"rules"}
    assert all(d["id"] not in (keep["id"], edit["id"]) for d in state["sentences"][0]["drafts"])


def test_suggest_for_the_whole_reference_replaces_pending_drafts_and_skips_existing_acus(client, author, reference):
    client.login(username=author.username, password=PASSWORD)
    url = reverse("authoring_suggest", args=[reference.pk])
    assert post_json(client, url, {"drafter": "rules"}).status_code == 200
    n = DraftACU.objects.filter(reference=reference).count()
    assert n >= reference.sentences.count()
    one = DraftACU.objects.filter(reference=reference).first()
    post_json(client, reverse("authoring_save", args=[reference.pk]), payload(reference, [(None, one.text)]))
    assert post_json(client, url, {"drafter": "rules"}).status_code == 200
    pending = DraftACU.objects.filter(reference=reference, status="pending")
    assert pending.count() == n - 1  # the text already written is not drafted again
    assert not pending.filter(sentence=one.sentence, text=one.text).exists()


def test_suggest_refuses_other_authors_unknown_drafters_and_unconfigured_llm(
    client, author, make_user, reference, settings
):
    other = make_user("bea-author", "author")
    client.login(username=other.username, password=PASSWORD)
    url = reverse("authoring_suggest", args=[reference.pk])
    resp = post_json(client, url, {"drafter": "rules"})
    assert resp.status_code == 400 and "another author" in resp.json()["error"]
    client.login(username=author.username, password=PASSWORD)
    resp = post_json(client, url, {"drafter": "magic"})
    assert resp.status_code == 400 and "Unknown drafter" in resp.json()["error"]
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    resp = post_json(client, url, {"drafter": "llm"})
    assert resp.status_code == 400 and "LLM_BASE_URL" in resp.json()["error"]
    assert not DraftACU.objects.exists()


def test_hints_run_on_drafts(reference, author):
    sentence = reference.sentences.first()
    authoring.save_reference(
        reference_id=reference.pk,
        user=author,
        base_version=0,
        sentences=[
            {"id": s.pk, "acus": [{"id": None, "text": "Koirala has been sleeping outdoors."}] if s == sentence else []}
            for s in reference.sentences.all()
        ],
    )
    DraftACU.objects.create(
        reference=reference, sentence=sentence, position=0, drafter="rules", text="Koirala has been sleeping outdoors!"
    )
    DraftACU.objects.create(
        reference=reference,
        sentence=sentence,
        position=1,
        drafter="rules",
        text="Koirala rescues many young victims but the old campus has crumbled badly.",
    )
    state = authoring.reference_state(reference)
    first = state["sentences"][0]
    assert "Nearly the same" in first["drafts"][0]["hints"][0]
    assert any("Joins two facts" in h for h in first["drafts"][1]["hints"])
    assert first["acus"][0]["hints"] == []  # drafts do not add hints to the written ACUs


def test_lead_predrafts_a_dataset_as_a_task_with_progress(client, lead, dataset, eager_celery):
    client.login(username=lead.username, password=PASSWORD)
    resp = client.post(reverse("authoring_overview", args=[dataset.pk]), {"predraft": "1", "drafter": "rules"})
    assert resp.status_code == 302
    job = DraftJob.objects.get(dataset=dataset)
    assert job.status == DraftJob.Status.DONE
    assert job.done == job.total == dataset.documents.count()
    sentences = sum(d.reference.sentences.count() for d in dataset.documents.all())
    assert job.drafts == DraftACU.objects.count() >= sentences
    progress = client.get(reverse("authoring_draft_job", args=[dataset.pk, job.pk])).json()
    assert progress["finished"] and progress["drafts"] == job.drafts
    # a second run skips the drafted sentences
    again = drafting.predraft_dataset(DraftJob.objects.create(dataset=dataset, drafter="rules").pk)
    assert again.drafts == 0 and DraftACU.objects.count() == job.drafts
    assert "Pre-drafting" in client.get(reverse("authoring_overview", args=[dataset.pk])).content.decode()


def test_machine_units_are_marked_and_become_human_when_edited(reference, author):
    sentences = list(reference.sentences.all())
    made = drafting.fill_machine_units(sentence_ids=[s.pk for s in sentences[1:]], drafter="rules")
    machine = ACU.objects.filter(reference=reference, machine=True)
    assert made == machine.count() >= len(sentences) - 1
    assert set(machine.values_list("drafter", flat=True)) == {"rules"}
    assert ACUChange.objects.filter(action=ACUChange.Action.MACHINE).count() == made
    assert not ACU.objects.filter(sentence=sentences[0]).exists()
    assert drafting.fill_machine_units(sentence_ids=[s.pk for s in sentences], drafter="rules") > 0  # sentence 1 only
    assert ACU.objects.filter(reference=reference, machine=True).count() > made
    state = authoring.reference_state(reference)
    unit = state["sentences"][1]["acus"][0]
    assert unit["machine"] and unit["drafter"] == "rules"
    body = [
        {
            "id": s["id"],
            "acus": [
                {"id": a["id"], "text": a["text"] + (" Really." if a["id"] == unit["id"] else "")} for a in s["acus"]
            ],
        }
        for s in state["sentences"]
    ]
    authoring.save_reference(reference_id=reference.pk, user=author, base_version=state["version"], sentences=body)
    edited = ACU.objects.get(pk=unit["id"])
    assert not edited.machine and edited.author == author and edited.drafter == "rules"


def test_time_with_and_without_drafts(dataset, author):
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    refs = list(Reference.objects.filter(writer=author).order_by("document__position"))
    DraftACU.objects.create(
        reference=refs[0], sentence=refs[0].sentences.first(), position=0, drafter="rules", text="A b."
    )
    DraftACU.objects.create(
        reference=refs[1], sentence=refs[1].sentences.first(), position=0, drafter="rules", text="A b."
    )
    for ref, seconds in zip(refs, [60, 120, 300, 240], strict=False):
        AuthoringTime.objects.create(reference=ref, user=author, kind="writing", seconds=seconds)
    out = authoring_progress.time_with_and_without_drafts(dataset)
    assert out["with"] == {"references": 2, "median_minutes": 1.5, "median_minutes_per_acu": None}
    assert out["without"]["references"] == 2 and out["without"]["median_minutes"] == 4.5
    assert out["saved_percent"] == pytest.approx(100 * (4.5 - 1.5) / 4.5)


def test_machine_units_are_shown_as_such_on_the_review_and_document_pages(client, lead, reference):
    drafting.fill_machine_units(sentence_ids=[reference.sentences.first().pk], drafter="rules")
    client.login(username=lead.username, password=PASSWORD)
    review = client.get(reverse("authoring_review", args=[reference.pk])).content.decode()
    document = client.get(
        reverse("document_detail", args=[reference.document.dataset_id, reference.document_id])
    ).content.decode()
    assert "machine · rules" in review and "machine · rules" in document


def test_rules_drafts_of_one_sentence_name_who_the_reference_means(reference, author, dataset):
    """The rules drafter reads the whole reference (names carried to "The Welshman", "He"), even when
    one sentence is asked for; machine units never carry a name from another reference."""
    first, second, *_ = reference.sentences.order_by("position")
    ReferenceSentence.objects.filter(pk=first.pk).update(text="Joe Calzaghe won his first world title in 1997 .")
    ReferenceSentence.objects.filter(pk=second.pk).update(text="The Welshman retired unbeaten in 2009 .")
    made = drafting.suggest(reference_id=reference.pk, user=author, drafter="rules", sentence_id=second.pk)
    texts = set(DraftACU.objects.filter(reference=reference).values_list("text", flat=True))
    # a single adjunct stays in its clause and the role reads "the Welshman" (issue 44)
    assert made == len(texts) and "Joe Calzaghe retired unbeaten in 2009." in texts
    assert "Joe Calzaghe is the Welshman." in texts
    assert not DraftACU.objects.filter(sentence=first).exists()

    other = Reference.objects.filter(document__dataset=dataset).exclude(pk=reference.pk).first()
    opening = other.sentences.order_by("position").first()
    ReferenceSentence.objects.filter(pk=opening.pk).update(text="He retired from boxing in 2009 .")
    drafting.fill_machine_units(sentence_ids=[second.pk, opening.pk], drafter="rules")
    assert "Joe Calzaghe retired unbeaten in 2009." in set(
        ACU.objects.filter(sentence=second).values_list("text", flat=True)
    )
    theirs = list(ACU.objects.filter(sentence=opening, machine=True).values_list("text", flat=True))
    assert theirs and not any("Calzaghe" in t for t in theirs)


def test_a_save_with_a_draft_id_that_is_no_whole_number_is_refused_with_a_message(client, author, reference):
    """The editor sends each accepted draft's id; anything else is refused with a message (never
    Python's int() error) and never taken as another draft (1.5 or true were draft 1)."""
    client.login(username=author.username, password=PASSWORD)
    post_json(client, reverse("authoring_suggest", args=[reference.pk]), {"drafter": "rules"})
    draft = DraftACU.objects.filter(reference=reference).order_by("pk").first()
    for bad in ("abc", 1.5, True, {"id": draft.pk}, [draft.pk]):
        resp = post_json(
            client, reverse("authoring_save", args=[reference.pk]), payload(reference, [(bad, draft.text)])
        )
        assert resp.status_code == 400, bad
        assert resp.json()["error"] == "A draft id must be a whole number; reload the page.", bad
    assert not ACU.objects.exists() and not ACUChange.objects.exists()
    assert DraftACU.objects.get(pk=draft.pk).status == "pending"
    resp = post_json(
        client, reverse("authoring_save", args=[reference.pk]), payload(reference, [(str(draft.pk), draft.text)])
    )
    assert resp.status_code == 200 and ACU.objects.get().drafter == draft.drafter


def test_the_lead_page_words_slower_drafts_and_the_last_budget_as_people_read_them(client, lead, dataset, author):
    """Writing with drafts slower than without reads "% more", not "-50% saved"; the last budget's
    share reads as the percentage the lead typed ("40% of sentences"), not "0.40"."""
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    refs = list(Reference.objects.filter(writer=author).order_by("document__position"))
    DraftACU.objects.create(
        reference=refs[0], sentence=refs[0].sentences.first(), position=0, drafter="rules", text="A b."
    )
    for ref, seconds in zip(refs[:2], [180, 120], strict=True):
        AuthoringTime.objects.create(reference=ref, user=author, kind="writing", seconds=seconds)
    DraftJob.objects.create(
        dataset=dataset,
        kind=DraftJob.Kind.BUDGET,
        drafter="rules",
        status=DraftJob.Status.DONE,
        params={"share": 0.4, "authors": [], "judge": "lexical", "criterion": "abs"},
        result={"human": 4, "machine": 6, "machine_units": 9, "method": "by length", "judge": "lexical"},
    )
    client.login(username=lead.username, password=PASSWORD)
    page = " ".join(client.get(reverse("authoring_overview", args=[dataset.pk])).content.decode().split())
    assert '<b id="time-saved">50%</b> more time' in page and "-50%" not in page
    assert "Last budget (40% of sentences)" in page
