"""Author text: hints linear in the text, ACU length bounded, text kept as typed, numbers in the
autosave and suggest bodies refused with a 400 (issue 26, items 3, 9 and 10)."""

import json
import re

import pytest
from django.urls import reverse

from annotation import hints, text
from annotation.models import ACU, Reference
from annotation.services import authoring
from annotation.services.acus import edit_acu
from annotation.services.authoring import AuthoringError

from .authoring_data import unauthored_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def reference(tmp_path, author):
    dataset = unauthored_dataset(tmp_path, documents=1)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    return Reference.objects.get(writer=author)


def payload(reference, texts, version=0):
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": t} for t in texts]
    return sentences


def _count_word_scans(monkeypatch) -> dict:
    """Counts characters scanned by word tokenisation in annotation.hints (the module's word
    pattern and annotation.text.words): the work the hints do on a text."""
    scanned = {"chars": 0}
    pattern = hints._WORD

    class Counting:
        def finditer(self, s, *args):
            scanned["chars"] += len(s)
            return pattern.finditer(s, *args)

    real_words = text.words

    def counting_words(s):
        scanned["chars"] += len(s)
        return real_words(s)

    monkeypatch.setattr(hints, "_WORD", Counting(), raising=False)  # main had no such pattern
    monkeypatch.setattr(hints, "words", counting_words)
    monkeypatch.setattr(text, "words", counting_words)  # content_words calls it
    return scanned


def test_joiner_hint_scans_the_text_a_constant_number_of_times(monkeypatch):
    scanned = _count_word_scans(monkeypatch)
    for n in (1_000, 4_000):
        scanned["chars"] = 0
        body = "and " * n
        assert hints.joins_two_facts(body) is None
        # Re-tokenising before every "and" scanned n * len/2 characters; linear is a few passes.
        assert scanned["chars"] <= 3 * len(body), (n, scanned["chars"])
    assert hints.joins_two_facts("The mayor resigned on Monday and the council elected a successor.") == "and"


def test_reference_hints_are_linear_in_the_acu_length(monkeypatch):
    scanned = _count_word_scans(monkeypatch)
    long_acu = "and " * 12_000
    hints.reference_hints([("A sentence about the mayor.", [long_acu, "The mayor resigned."])], 7.0)
    assert scanned["chars"] <= 10 * len(long_acu)


def test_an_acu_of_12000_ands_is_refused_with_a_message(client, author, reference):
    client.force_login(author)
    body = json.dumps({"version": 0, "sentences": payload(reference, ["and " * 12_000])})
    response = client.post(reverse("authoring_save", args=[reference.pk]), body, content_type="application/json")
    assert response.status_code == 400
    assert "at most 1,000 are allowed" in response.json()["error"]
    assert not reference.acus.exists()
    reference.refresh_from_db()
    assert reference.version == 0
    # The bound holds in the other places ACUs are saved: the service and the model (admin forms).
    acu = authoring.save_reference(
        reference_id=reference.pk, user=author, base_version=0, sentences=payload(reference, ["A fact."])
    )["sentences"][0]["acus"][0]
    with pytest.raises(ValueError, match="at most 1,000"):
        edit_acu(acu_id=acu["id"], text="x" * 1_001)
    row = ACU.objects.get(pk=acu["id"])
    row.text = "x" * 1_001
    with pytest.raises(Exception, match="at most 1000"):
        row.full_clean()
    edit_acu(acu_id=acu["id"], text="x" * 1_000)  # the bound itself is allowed


def test_stored_hints_are_not_recomputed_per_request(monkeypatch, client, author, reference):
    calls = {"n": 0}
    real = authoring.reference_hints

    def counting(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(authoring, "reference_hints", counting)
    authoring.save_reference(
        reference_id=reference.pk,
        user=author,
        base_version=0,
        sentences=payload(reference, ["The mayor resigned on Monday and the council elected a successor."]),
    )
    after_save = calls["n"]
    client.force_login(author)
    for _ in range(3):
        page = client.get(reverse("authoring_write", args=[reference.pk]))
        assert page.status_code == 200 and "Joins two facts" in page.content.decode()
    assert calls["n"] == after_save  # the three page views read the stored hints


def test_autosave_keeps_text_as_typed(client, author, reference):
    typed = "10\u00a0km at 5\u202fpm\u2028then\tmore"
    client.force_login(author)
    body = json.dumps({"version": 0, "sentences": payload(reference, [f"  {typed}  "])})
    response = client.post(reverse("authoring_save", args=[reference.pk]), body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["sentences"][0]["acus"][0]["text"] == typed
    assert list(reference.acus.values_list("text", flat=True)) == [typed]


@pytest.mark.parametrize("bad", ["\x00", "\x07", "\x1b[31m", "\x7f", "\x85"])
def test_autosave_refuses_control_characters_with_a_message(client, author, reference, bad):
    client.force_login(author)
    body = json.dumps({"version": 0, "sentences": payload(reference, [f"A fact{bad} here."])})
    response = client.post(reverse("authoring_save", args=[reference.pk]), body, content_type="application/json")
    assert response.status_code == 400
    assert re.search(r"control character \(U\+00[0-9A-F]{2} at character 7\)", response.json()["error"])
    assert not reference.acus.exists()


def test_service_refuses_control_characters(author, reference):
    with pytest.raises(AuthoringError, match="control character"):
        authoring.save_reference(
            reference_id=reference.pk, user=author, base_version=0, sentences=payload(reference, ["bell\x07"])
        )


@pytest.mark.parametrize(
    "body",
    [
        '{"version": 1e400, "sentences": []}',
        '{"version": NaN, "sentences": []}',
        '{"version": 0, "sentences": [], "dismissed": [1e400]}',
        '{"version": 0, "sentences": [], "dismissed": [-Infinity]}',
    ],
)
def test_autosave_numbers_out_of_range_are_a_400(client, author, reference, body):
    client.force_login(author)
    response = client.post(reverse("authoring_save", args=[reference.pk]), body, content_type="application/json")
    assert response.status_code == 400
    assert "whole number" in response.json()["error"]


def test_suggest_sentence_out_of_range_is_a_400(client, author, reference):
    client.force_login(author)
    response = client.post(
        reverse("authoring_suggest", args=[reference.pk]),
        '{"drafter": "rules", "sentence": 1e400}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "whole number" in response.json()["error"]
