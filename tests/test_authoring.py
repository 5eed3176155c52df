"""Authoring services: assignment, autosave with conflicts, history, review and time."""

from collections import Counter

import pytest

from annotation.models import ACU, ACUChange, AuthoringTime, Reference
from annotation.services import authoring, authoring_progress
from annotation.services.authoring import AuthoringError, VersionConflict

from .authoring_data import unauthored_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def dataset(tmp_path):
    return unauthored_dataset(tmp_path)


@pytest.fixture
def second_author(make_user):
    return make_user("bea-author", "author")


def structure(reference, texts_per_sentence):
    """The editor's payload: ACU texts per sentence, keeping the ids of existing ACUs."""
    return [
        {"id": s.pk, "acus": [{"id": acu_id, "text": text} for acu_id, text in texts]}
        for s, texts in zip(reference.sentences.all(), texts_per_sentence, strict=False)
    ]


def first_reference(dataset, author):
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    return Reference.objects.get(writer=author)


def test_imported_dataset_without_units_waits_for_authors(dataset):
    assert set(dataset.documents.values_list("reference__status", flat=True)) == {"todo"}
    assert not authoring.usable_for_crowd(dataset).exists()


def test_assign_by_count_and_evenly(dataset, author, second_author):
    given = authoring.assign_references(dataset=dataset, author_ids=[author.pk, second_author.pk], count=1)
    assert given == {author.username: 1, second_author.username: 1}
    given = authoring.assign_references(dataset=dataset, author_ids=[author.pk, second_author.pk])
    assert given == {author.username: 1, second_author.username: 1}
    assert Reference.objects.filter(writer__isnull=True).count() == 0
    with pytest.raises(AuthoringError):
        authoring.assign_references(dataset=dataset, author_ids=[])


def test_save_creates_edits_moves_deletes_and_keeps_history(dataset, author):
    ref = first_reference(dataset, author)
    n = ref.sentences.count()
    state = authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=0,
        sentences=structure(
            ref, [[(None, "Koirala has been sleeping outdoors."), (None, "Girls sleep outside.")]] + [[]] * (n - 1)
        ),
    )
    assert state["version"] == 1
    ref.refresh_from_db()
    assert ref.status == Reference.Status.WRITING
    a, b = [x["id"] for x in state["sentences"][0]["acus"]]
    # reorder, edit one, move one to sentence 2
    state = authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=1,
        sentences=structure(
            ref, [[(b, "Girls sleep outdoors.")], [(a, "Koirala has been sleeping outdoors.")]] + [[]] * (n - 2)
        ),
    )
    assert [x["text"] for x in state["sentences"][1]["acus"]] == ["Koirala has been sleeping outdoors."]
    assert ACU.objects.get(pk=b).position == 0 and ACU.objects.get(pk=a).sentence.position == 1
    # delete one
    authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=2,
        sentences=structure(ref, [[(b, "Girls sleep outdoors.")]] + [[]] * (n - 1)),
    )
    assert not ACU.objects.filter(pk=a).exists()
    actions = list(ACUChange.objects.filter(reference=ref).values_list("action", "old_text", "new_text"))
    assert ("edit", "Girls sleep outside.", "Girls sleep outdoors.") in actions
    assert ("delete", "Koirala has been sleeping outdoors.", "") in actions
    assert [x[0] for x in actions].count("create") == 2 and "move" in [x[0] for x in actions]


def test_autosaves_while_typing_extend_one_history_row(dataset, author):
    ref = first_reference(dataset, author)
    n = ref.sentences.count()
    state = authoring.save_reference(
        reference_id=ref.pk, user=author, base_version=0, sentences=structure(ref, [[(None, "A")]] + [[]] * (n - 1))
    )
    acu = state["sentences"][0]["acus"][0]["id"]
    for version, text in enumerate(["Al", "Ali", "Alice sat"], start=1):
        authoring.save_reference(
            reference_id=ref.pk,
            user=author,
            base_version=version,
            sentences=structure(ref, [[(acu, text)]] + [[]] * (n - 1)),
        )
    edits = ACUChange.objects.filter(acu_id=acu, action="edit")
    assert edits.count() == 1
    assert (edits.get().old_text, edits.get().new_text) == ("A", "Alice sat")


def test_stale_version_is_a_conflict_and_changes_nothing(dataset, author):
    ref = first_reference(dataset, author)
    n = ref.sentences.count()
    authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=0,
        sentences=structure(ref, [[(None, "From tab one.")]] + [[]] * (n - 1)),
    )
    with pytest.raises(VersionConflict):
        authoring.save_reference(
            reference_id=ref.pk,
            user=author,
            base_version=0,
            sentences=structure(ref, [[(None, "From tab two.")]] + [[]] * (n - 1)),
        )
    assert list(ref.acus.values_list("text", flat=True)) == ["From tab one."]


def test_only_the_writer_saves_and_only_while_editable(dataset, author, second_author):
    ref = first_reference(dataset, author)
    with pytest.raises(AuthoringError, match="another author"):
        authoring.save_reference(reference_id=ref.pk, user=second_author, base_version=0, sentences=structure(ref, []))
    with pytest.raises(AuthoringError, match="sentences"):
        authoring.save_reference(reference_id=ref.pk, user=author, base_version=0, sentences=[])


def test_review_cycle_until_usable_for_crowd(dataset, author, second_author):
    ref = first_reference(dataset, author)
    authoring.assign_references(dataset=dataset, author_ids=[second_author.pk], count=1)  # an author of the dataset
    n = ref.sentences.count()
    with pytest.raises(AuthoringError, match="at least one ACU"):
        authoring.submit_for_review(reference_id=ref.pk, user=author)
    state = authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=0,
        sentences=structure(ref, [[(None, "Koirala sleeps outside and the girls are scared.")]] + [[]] * (n - 1)),
    )
    acu = state["sentences"][0]["acus"][0]["id"]
    ref = authoring.submit_for_review(reference_id=ref.pk, user=author)
    assert ref.status == Reference.Status.IN_REVIEW and ref.reviewer == second_author
    assert list(authoring.review_queue(second_author)) == [ref] and not authoring.review_queue(author).exists()

    with pytest.raises(AuthoringError, match="another author must review"):
        authoring.approve(reference_id=ref.pk, user=author)
    with pytest.raises(AuthoringError, match="at least one comment"):
        authoring.request_changes(reference_id=ref.pk, user=second_author)
    authoring.add_comment(reference_id=ref.pk, user=second_author, acu_id=acu, text="Two facts: split it.")
    ref = authoring.request_changes(reference_id=ref.pk, user=second_author)
    assert ref.status == Reference.Status.CHANGES
    assert authoring.author_queue(author)["next"] == ref
    assert authoring.reference_state(ref)["comments"][0]["text"] == "Two facts: split it."

    state = authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=ref.version,
        sentences=structure(
            ref, [[(acu, "Koirala sleeps outside."), (None, "The girls are scared.")]] + [[]] * (n - 1)
        ),
    )
    ref = authoring.submit_for_review(reference_id=ref.pk, user=author)
    assert ref.reviewer == second_author and not ref.comments.filter(resolved_at__isnull=True).exists()
    authoring.approve(reference_id=ref.pk, user=second_author)
    ref.refresh_from_db()
    assert ref.status == Reference.Status.APPROVED
    assert set(ref.acus.values_list("status", flat=True)) == {ACU.Status.APPROVED}
    assert list(authoring.usable_for_crowd(dataset)) == [ref]
    with pytest.raises(AuthoringError):
        authoring.save_reference(
            reference_id=ref.pk, user=author, base_version=ref.version, sentences=structure(ref, [])
        )


def test_lone_author_leaves_the_review_unclaimed_until_someone_takes_it(dataset, author, make_user):
    ref = first_reference(dataset, author)
    n = ref.sentences.count()
    authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=0,
        sentences=structure(ref, [[(None, "One fact.")]] + [[]] * (n - 1)),
    )
    ref = authoring.submit_for_review(reference_id=ref.pk, user=author)
    assert ref.reviewer is None
    late = make_user("carl-author", "author")
    assert not authoring.review_queue(late).exists()  # not yet an author of this dataset
    authoring.assign_references(dataset=dataset, author_ids=[late.pk], count=1)
    assert list(authoring.review_queue(late)) == [ref]
    assert authoring.claim_review(reference_id=ref.pk, user=late).reviewer == late


def test_time_on_task_is_clamped_and_summed(dataset, author):
    ref = first_reference(dataset, author)
    authoring.record_time(reference_id=ref.pk, user=author, seconds=15)
    authoring.record_time(reference_id=ref.pk, user=author, seconds=10_000)  # a bogus report
    authoring.record_time(reference_id=ref.pk, user=author, seconds=-5)
    assert AuthoringTime.objects.get(reference=ref, user=author).seconds == 15 + authoring.MAX_TIME_REPORT


def test_overview_counts_per_author(dataset, author, second_author):
    ref = first_reference(dataset, author)
    n = ref.sentences.count()
    authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=0,
        sentences=structure(ref, [[(None, "One."), (None, "Two.")]] + [[]] * (n - 1)),
    )
    authoring.record_time(reference_id=ref.pk, user=author, seconds=90)
    authoring.submit_for_review(reference_id=ref.pk, user=author)
    overview = authoring_progress.authoring_overview(dataset)
    row = overview["rows"][0]
    assert row["author"] == author and row["assigned"] == 1 and row["in_review"] == 1
    assert row["acus"] == 2 and row["acus_per_reference"] == 2 and row["median_minutes"] == 1.5
    assert overview["totals"]["in_review"] == 1 and overview["unassigned"] == 3


def test_the_per_author_columns_add_up_to_the_states_above_them(dataset, author, second_author):
    """The page's header counts references by state; each state has its own column per author, so
    an author's "To do" is not "To do" plus "Writing" while the header shows them apart."""
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=2)
    ref = Reference.objects.filter(writer=author).first()
    n = ref.sentences.count()
    authoring.save_reference(
        reference_id=ref.pk, user=author, base_version=0, sentences=structure(ref, [[(None, "One.")]] + [[]] * (n - 1))
    )
    authoring.assign_references(dataset=dataset, author_ids=[second_author.pk], count=1)
    overview = authoring_progress.authoring_overview(dataset)
    assert Reference.objects.get(pk=ref.pk).status == Reference.Status.WRITING
    unassigned = Counter(
        Reference.objects.filter(document__dataset=dataset, writer=None).values_list("status", flat=True)
    )
    for status in Reference.Status.values:  # the rows' keys are the states' values
        per_author = sum(row[status] for row in overview["rows"])
        assert per_author + unassigned[status] == overview["totals"].get(status, 0), status
    mine = next(row for row in overview["rows"] if row["author"] == author)
    assert (mine["todo"], mine["writing"]) == (1, 1)


def test_judged_acus_cannot_change_through_the_editor(dataset, author):
    from hits.models import HIT, Assignment, Batch, Judgment, Worker

    ref = first_reference(dataset, author)
    n = ref.sentences.count()
    state = authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=0,
        sentences=structure(ref, [[(None, "Judged fact.")]] + [[]] * (n - 1)),
    )
    acu = ACU.objects.get(pk=state["sentences"][0]["acus"][0]["id"])
    batch = Batch.objects.create(dataset=dataset, name="b")
    hit = HIT.objects.create(batch=batch, summary=ref.document.summaries.first())
    worker = Worker.objects.create(provider="inhouse", external_id="w")
    Judgment.objects.create(assignment=Assignment.objects.create(hit=hit, worker=worker), acu=acu, present=True)
    with pytest.raises(AuthoringError, match="frozen"):
        authoring.save_reference(
            reference_id=ref.pk,
            user=author,
            base_version=1,
            sentences=structure(ref, [[(acu.pk, "Changed fact.")]] + [[]] * (n - 1)),
        )
    with pytest.raises(AuthoringError, match="cannot be deleted"):
        authoring.save_reference(reference_id=ref.pk, user=author, base_version=1, sentences=structure(ref, [[]] * n))


def _submitted(dataset, author, ref=None):
    ref = ref or first_reference(dataset, author)
    authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=ref.version,
        sentences=structure(ref, [[(None, "One fact.")]] + [[]] * (ref.sentences.count() - 1)),
    )
    return authoring.submit_for_review(reference_id=ref.pk, user=author)


def test_proofreading_goes_only_to_the_dataset_own_authors(dataset, author, second_author, make_user, tmp_path):
    """Issue 47 item 2: an author of another dataset never gets this dataset's references to review,
    and this dataset's author never gets theirs; the lead is told when nobody of the dataset can review."""
    other = unauthored_dataset(tmp_path, name="other")
    outsider = make_user("olga-author", "author")
    authoring.assign_references(dataset=other, author_ids=[outsider.pk], count=1)
    assert authoring.review_gap(dataset) is None  # nobody writes here yet

    ref = _submitted(dataset, author)
    assert ref.reviewer is None  # olga and bea write nothing here
    assert not authoring.review_queue(outsider).exists() and not authoring.review_queue(second_author).exists()
    with pytest.raises(AuthoringError, match="authors of this dataset"):
        authoring.claim_review(reference_id=ref.pk, user=outsider)
    gap = authoring_progress.authoring_overview(dataset)["review_gap"]
    assert gap == {"authors": [author.username], "waiting": 1, "lone": True}

    authoring.assign_references(dataset=dataset, author_ids=[second_author.pk], count=1)
    assert list(authoring.review_queue(second_author)) == [ref]
    assert authoring.review_gap(dataset) == {
        "authors": [author.username, second_author.username],
        "waiting": 1,
        "lone": False,
    }
    authoring.approve(reference_id=ref.pk, user=second_author)
    assert authoring.review_gap(dataset) is None

    theirs = _submitted(other, outsider, Reference.objects.get(writer=outsider))
    assert theirs.reviewer is None and not authoring.review_queue(author).exists()
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    nxt = _submitted(dataset, author, Reference.objects.get(writer=author, status=Reference.Status.TODO))
    assert nxt.reviewer == second_author


def test_a_named_reviewer_proofreads_without_writing(dataset, author, second_author):
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1, reviewer_id=second_author.pk)
    assert authoring.review_gap(dataset) is None
    ref = _submitted(dataset, author, Reference.objects.get(writer=author))
    assert ref.reviewer == second_author
    with pytest.raises(AuthoringError, match="does not write"):
        authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1, reviewer_id=author.pk)


def test_the_review_queue_says_just_now_for_a_reference_sent_this_minute(client, dataset, author, second_author):
    """Walk 62: the reviewer's queue read "Sent 0 minutes ago": Django's timesince writes
    "0\\xa0minutes" (a no-break space), which the template's "just now" test never matched."""
    from datetime import timedelta

    from django.utils import timezone

    ref = first_reference(dataset, author)
    authoring.assign_references(dataset=dataset, author_ids=[second_author.pk], count=1)
    n = ref.sentences.count()
    authoring.save_reference(
        reference_id=ref.pk,
        user=author,
        base_version=0,
        sentences=structure(ref, [[(None, "Koirala sleeps outside.")]] + [[]] * (n - 1)),
    )
    authoring.submit_for_review(reference_id=ref.pk, user=author)
    client.force_login(second_author)
    row = client.get("/authoring/").content.decode().split(ref.document.external_id, 1)[1]
    assert "just now" in row.split("</tr>")[0] and "0\xa0minutes" not in row and "0 minutes" not in row
    Reference.objects.filter(pk=ref.pk).update(submitted_at=timezone.now() - timedelta(minutes=12))
    row = client.get("/authoring/").content.decode().split(ref.document.external_id, 1)[1]
    assert "12\xa0minutes ago" in row.split("</tr>")[0]
