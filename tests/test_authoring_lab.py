"""The authoring flow as a lab's authors meet it: a stale tab's *Done*, Back after a submission, a
session that ended on a button, a lead who also writes, references gone while a page is open."""

import pytest
from django.urls import reverse

from annotation.models import Reference, ReviewComment
from annotation.services import authoring

from .authoring_data import unauthored_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def setup(tmp_path, author, make_user):
    """A dataset of two references: the author writes the first, bea the second (so she proofreads)."""
    dataset = unauthored_dataset(tmp_path, documents=2)
    other = make_user("bea-author", "author")
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    authoring.assign_references(dataset=dataset, author_ids=[other.pk], count=1)
    return dataset, Reference.objects.get(writer=author), other


def written(reference, author, text="Koirala sleeps outdoors."):
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": text}]
    reference.refresh_from_db()
    authoring.save_reference(
        reference_id=reference.pk, user=author, base_version=reference.version, sentences=sentences
    )
    reference.refresh_from_db()
    return reference


def page_version(client, reference) -> int:
    html = client.get(reverse("authoring_write", args=[reference.pk])).content.decode()
    marker = 'name="version" value="'
    start = html.index(marker, html.index('id="submit-form"')) + len(marker)
    return int(html[start : html.index('"', start)])


def test_done_from_a_tab_opened_before_the_reviewer_sent_it_back_sends_nothing(client, author, setup):
    """A stale tab's *Done* resubmitted at once: the reviewer's comments were marked "answered by a
    revision" though the writer never saw them."""
    _, reference, reviewer = setup
    written(reference, author)
    client.force_login(author)
    stale = page_version(client, reference)  # a second tab, open since before the first submission
    authoring.submit_for_review(reference_id=reference.pk, user=author, base_version=stale)
    authoring.add_comment(reference_id=reference.pk, user=reviewer, text="Split “sleeps outdoors” — 😀 é.")
    authoring.request_changes(reference_id=reference.pk, user=reviewer)

    url = reverse("authoring_submit", args=[reference.pk])
    response = client.post(url, {"version": stale}, follow=True)
    assert "nothing was sent" in response.content.decode()
    reference.refresh_from_db()
    assert reference.status == Reference.Status.CHANGES
    assert ReviewComment.objects.get(reference=reference).resolved_at is None
    assert response.context["state"]["comments"][0]["text"] == "Split “sleeps outdoors” — 😀 é."  # shown there

    client.post(url, {"version": page_version(client, reference)})  # read, then Done again
    reference.refresh_from_db()
    assert reference.status == Reference.Status.IN_REVIEW


def test_authoring_pages_are_never_cached(client, author, setup):
    """Back after *Done* showed the editor as it was, editable, with *Done* again."""
    _, reference, reviewer = setup
    written(reference, author)
    client.force_login(author)
    for url in [reverse("authoring_queue"), reverse("authoring_write", args=[reference.pk])]:
        assert "no-store" in client.get(url)["Cache-Control"], url
    authoring.submit_for_review(reference_id=reference.pk, user=author)
    client.force_login(reviewer)
    assert "no-store" in client.get(reverse("authoring_review", args=[reference.pk]))["Cache-Control"]


def test_a_button_pressed_after_the_session_ended_comes_back_to_its_page(client, author, lead, setup):
    """Signed in again, the sign-in page sends the person to the button's URL with a GET: it was an
    empty 405 page. Now it is the reference's page, with a message, and nothing is changed."""
    _, reference, reviewer = setup
    written(reference, author)
    submit = reverse("authoring_submit", args=[reference.pk])
    assert client.post(submit, {"version": reference.version})["Location"].startswith(reverse("login"))
    client.force_login(author)
    response = client.get(submit, follow=True)
    assert response.redirect_chain[-1][0] == reverse("authoring_write", args=[reference.pk])
    assert "Nothing was sent yet" in response.content.decode()
    reference.refresh_from_db()
    assert reference.status == Reference.Status.WRITING

    authoring.submit_for_review(reference_id=reference.pk, user=author)
    for user, name in [(reviewer, "authoring_review_action"), (lead, "authoring_lead_action")]:
        client.force_login(user)
        response = client.get(reverse(name, args=[reference.pk, "approve"]), follow=True)
        assert response.redirect_chain[-1][0] == reverse("authoring_review", args=[reference.pk])
        assert "Nothing was" in response.content.decode()
    reference.refresh_from_db()
    assert reference.status == Reference.Status.IN_REVIEW


def test_the_get_after_sign_in_is_handled_once_for_every_authoring_button():
    """The three authoring buttons (Done, the reviewer's and the lead's decisions) each repeated the
    lines that turn a GET after sign-in into a message and the way back; one decorator does it now,
    and every one of them goes through it to its page."""
    from pathlib import Path

    from django.urls import resolve

    import annotation.views

    expected = {
        "authoring_submit": ([1], "authoring_write"),
        "authoring_review_action": ([1, "approve"], "authoring_review"),
        "authoring_lead_action": ([1, "approve"], "authoring_review"),
    }
    for name, (args, page) in expected.items():
        view = resolve(reverse(name, args=args)).func
        assert getattr(view, "get_goes_back_to", None) == page, name
    views = Path(annotation.views.__file__).parent
    repeated = [p.name for p in views.glob("*.py") if 'request.method != "POST"' in p.read_text()]
    assert repeated == ["after_sign_in.py"]


def test_a_lead_who_wrote_the_reference_cannot_approve_it(client, lead, setup):
    """The review page turned the writer away, but the lead's approve accepted their own ACUs."""
    _, reference, _ = setup
    lead.groups.add(*type(lead.groups.first()).objects.filter(name="author"))
    reference.writer = lead
    reference.save(update_fields=["writer"])
    written(reference, lead)
    authoring.submit_for_review(reference_id=reference.pk, user=lead)
    reference.refresh_from_db()
    client.force_login(lead)
    for action, data in [("approve", {}), ("changes", {"text": "Fine."})]:
        url = reverse("authoring_lead_action", args=[reference.pk, action])
        response = client.post(url, {"version": reference.version, **data}, follow=True)
        assert "You wrote this reference" in response.content.decode()
    reference.refresh_from_db()
    assert reference.status == Reference.Status.IN_REVIEW
    assert not reference.acus.filter(status="approved").exists()


def test_a_reference_gone_while_its_page_is_open_is_a_404_not_a_500(client, author, lead, setup):
    _, reference, reviewer = setup
    gone = 999_999
    client.force_login(author)
    assert client.post(reverse("authoring_submit", args=[gone]), {"version": 3}).status_code == 404
    client.force_login(reviewer)
    for action in ["approve", "changes", "comment"]:
        response = client.post(reverse("authoring_review_action", args=[gone, action]), {"text": "x", "version": 1})
        assert response.status_code == 404, action
    client.force_login(lead)
    assert client.post(reverse("authoring_lead_action", args=[gone, "approve"]), {"version": 1}).status_code == 404


def test_a_comment_naming_no_acu_number_is_a_message(client, author, setup):
    _, reference, reviewer = setup
    written(reference, author)
    authoring.submit_for_review(reference_id=reference.pk, user=author)
    client.force_login(reviewer)
    url = reverse("authoring_review_action", args=[reference.pk, "comment"])
    response = client.post(url, {"text": "Split it.", "acu": "first"}, follow=True)
    assert response.status_code == 200 and "must be a whole number" in response.content.decode()
    assert not ReviewComment.objects.exists()
