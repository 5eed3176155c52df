"""A judged ACU's text is frozen, so judgments always mean the text the worker saw."""

import pytest
from django.db.models import ProtectedError

from annotation.models import ACU, Dataset, Document, Reference, ReferenceSentence
from annotation.services.acus import ACULocked, edit_acu
from hits.services.dataset_import import import_dataset

from .conftest import DEMO_ROSE


@pytest.mark.django_db
def test_judged_acu_cannot_be_edited_or_deleted():
    import_dataset(DEMO_ROSE, name="demo", fmt="rose")
    acu = ACU.objects.filter(reference__document__dataset__name="demo").first()
    assert acu.judgments.exists()
    with pytest.raises(ACULocked):
        edit_acu(acu_id=acu.pk, text="something else")
    acu.refresh_from_db()
    assert acu.text != "something else"
    with pytest.raises(ProtectedError):
        acu.delete()


@pytest.mark.django_db
def test_unjudged_acu_can_be_edited():
    dataset = Dataset.objects.create(name="fresh")
    doc = Document.objects.create(dataset=dataset, external_id="d1", position=0, source="text")
    ref = Reference.objects.create(document=doc, word_count=3)
    sentence = ReferenceSentence.objects.create(reference=ref, position=0, text="A cat sat.")
    acu = ACU.objects.create(reference=ref, sentence=sentence, position=0, text="A cat sat")
    assert edit_acu(acu_id=acu.pk, text="  A cat sat down. ").text == "A cat sat down."
    with pytest.raises(ValueError):
        edit_acu(acu_id=acu.pk, text="   ")
