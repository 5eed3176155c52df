"""The proofreading flow as two authors meet it: what the reviewer sees of their own comments, and what
a repeated Done or decision (a second tab, a double click, Back) says."""

import pytest
from django.urls import reverse

from annotation.models import Reference, ReviewComment
from annotation.services import authoring

from .authoring_data import unauthored_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def in_review(tmp_path, author, make_user):
    """A reference `author` wrote and sent to `bea` (the dataset's second author)."""
    dataset = unauthored_dataset(tmp_path, documents=2)
    bea = make_user("bea-author", "author")
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    authoring.assign_references(dataset=dataset, author_ids=[bea.pk], count=1)
    reference = Reference.objects.get(writer=author)
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": "Koirala runs a rehabilitation center."}]
    authoring.save_reference(reference_id=reference.pk, user=author, base_version=0, sentences=sentences)
    reference = authoring.submit_for_review(reference_id=reference.pk, user=author)
    assert reference.reviewer == bea
    return reference, bea


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_the_reviewer_sees_a_comment_on_the_whole_reference(client, in_review):
    reference, bea = in_review
    client.force_login(bea)
    url = reverse("authoring_review_action", args=[reference.pk, "comment"])
    response = client.post(url, {"text": "Split the second sentence's facts."}, follow=True)
    assert _messages(response) == ["Comment saved."]
    assert "Split the second sentence&#x27;s facts." in response.content.decode()


def test_a_comment_whose_acu_was_deleted_stays_on_the_review_page(client, author, in_review):
    reference, bea = in_review
    acu = reference.acus.get()
    authoring.add_comment(reference_id=reference.pk, user=bea, text="Name the town.", acu_id=acu.pk)
    acu.delete()  # the writer deleted it in a revision: the comment keeps its text, not its ACU
    client.force_login(bea)
    page = client.get(reverse("authoring_review", args=[reference.pk])).content.decode()
    assert "Name the town." in page and "Koirala runs a rehabilitation center." in page


def test_a_sentence_without_acus_is_said_once_on_the_review_page(client, in_review):
    """The walk: the review page said "No ACU for this sentence yet." (its hint) and "No ACU for this
    sentence." (the empty list) under the same sentence."""
    reference, bea = in_review
    empty = reference.sentences.count() - 1
    assert empty >= 1
    client.force_login(bea)
    page = client.get(reverse("authoring_review", args=[reference.pk])).content.decode()
    assert page.count("No ACU for this sentence") == empty


def test_done_again_after_sending_says_it_was_already_sent(client, author, in_review):
    reference, bea = in_review
    client.force_login(author)
    response = client.post(reverse("authoring_submit", args=[reference.pk]), {"version": "1"}, follow=True)
    assert _messages(response) == ["Already sent to review (bea-author); nothing was sent again."]


def test_a_decision_repeated_from_a_second_tab_says_it_was_already_taken(client, in_review):
    reference, bea = in_review
    client.force_login(bea)
    url = reverse("authoring_review_action", args=[reference.pk, "approve"])
    first = client.post(url, {"version": str(reference.version)}, follow=True)
    assert _messages(first) == ["Approved: its ACUs can now be used in crowd tasks."]
    again = client.post(url, {"version": str(reference.version)}, follow=True)
    assert _messages(again) == ["You already approved this reference; nothing was decided again."]


def test_a_comment_is_bounded_and_refuses_control_characters(client, in_review):
    reference, bea = in_review
    client.force_login(bea)
    url = reverse("authoring_review_action", args=[reference.pk, "comment"])
    too_long = client.post(url, {"text": "x" * 4001}, follow=True)
    assert _messages(too_long) == ["A comment is 4,001 characters long; at most 4,000 are allowed."]
    nul = client.post(url, {"text": "bad\x00byte"}, follow=True)
    assert nul.status_code == 200
    assert _messages(nul) == ["A comment cannot hold control characters (U+0000)."]
    assert not ReviewComment.objects.exists()
    ok = client.post(url, {"text": "Tabs\tand\nlines stay."}, follow=True)
    assert _messages(ok) == ["Comment saved."] and ReviewComment.objects.get().text == "Tabs\tand\nlines stay."


def test_an_author_of_another_dataset_is_offered_no_decision(client, tmp_path, author, make_user):
    """A reference in review that nobody claimed (its writer is the dataset's only author): an author of
    another dataset may read it, but the page offers them no buttons the service would refuse."""
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    reference = Reference.objects.get(writer=author)
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": "A fact."}]
    authoring.save_reference(reference_id=reference.pk, user=author, base_version=0, sentences=sentences)
    assert authoring.submit_for_review(reference_id=reference.pk, user=author).reviewer is None
    stranger = make_user("cleo-author", "author")
    client.force_login(stranger)
    page = client.get(reverse("authoring_review", args=[reference.pk]))
    assert page.status_code == 200 and page.context["can_review"] is False
    assert b"review/approve" not in page.content and b"Save comment" not in page.content
    refused = client.post(reverse("authoring_review_action", args=[reference.pk, "approve"]), follow=True)
    assert _messages(refused) == ["Only the authors of this dataset proofread its references; ask the lead."]


@pytest.mark.parametrize(
    "sentences",
    ["abc", [1, 2], {"a": 1}, "acus-not-a-list", "text-a-list"],
)
def test_a_save_of_another_shape_is_a_message_and_stores_nothing(client, author, in_review, sentences):
    """The editor's autosave read as sent: a body of another shape (a stale script, a broken page) is a
    clear 400, never Python's "'str' object has no attribute 'get'" nor a list stored as the text "['a']"."""
    reference, _ = in_review
    reference.status = Reference.Status.WRITING
    reference.save(update_fields=["status"])
    ids = list(reference.sentences.values_list("pk", flat=True))
    if sentences == "acus-not-a-list":
        sentences = [{"id": pk, "acus": "xyz"} for pk in ids]
    elif sentences == "text-a-list":
        sentences = [{"id": pk, "acus": [{"id": None, "text": ["a"]}]} for pk in ids]
    client.force_login(author)
    response = client.post(
        reverse("authoring_save", args=[reference.pk]),
        {"version": reference.version, "sentences": sentences},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json() == {"error": "The change sent is not in the editor's form; reload the page."}
    assert list(reference.acus.values_list("text", flat=True)) == ["Koirala runs a rehabilitation center."]


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"guidelines": "Write short facts.\x00"}, "The guidelines cannot hold control characters (U+0000)."),
        ({"authors": ["x"]}, "Authors, count and reviewer must be chosen from the form's lists and numbers."),
        (
            {"authors": ["AUTHOR"]},
            "No reference is left to assign (each has a writer or is approved): nothing was assigned.",
        ),
    ],
)
def test_the_lead_authoring_page_answers_bad_input_with_a_message(client, lead, author, in_review, form, message):
    """Guidelines holding a NUL (PostgreSQL's "A string literal cannot contain NUL" shown, or a 500), an id
    that is not a number (Python's "invalid literal for int()"), and an assignment with nothing left to give
    (a green "Assigned: bea-author 0")."""
    reference, _ = in_review
    dataset = reference.document.dataset
    guidelines = dataset.guidelines
    client.force_login(lead)
    form = {
        k: [str(author.pk) if x == "AUTHOR" else x for x in v] if isinstance(v, list) else v for k, v in form.items()
    }
    response = client.post(reverse("authoring_overview", args=[dataset.pk]), form, follow=True)
    assert response.status_code == 200 and _messages(response) == [message]
    dataset.refresh_from_db()
    assert dataset.guidelines == guidelines


def test_the_leads_decision_repeated_says_it_was_already_taken(client, lead, in_review):
    reference, _ = in_review
    client.force_login(lead)
    url = reverse("authoring_lead_action", args=[reference.pk, "approve"])
    first = client.post(url, {"version": str(reference.version)}, follow=True)
    assert _messages(first) == ["Approved: its ACUs can now be used in crowd tasks."]
    again = client.post(url, {"version": str(reference.version)}, follow=True)
    assert _messages(again) == ["This reference was approved already; nothing was decided again."]
    assert [m.level_tag for m in again.context["messages"]] == ["info"]
