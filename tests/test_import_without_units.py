"""A pyramid folder whose ACUs will be written here imports: SCUs.txt is optional (issue 47, item 1)."""

import shutil

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import ACU, Dataset, ReferenceSentence, Summary
from hits.services.dataset_import import import_dataset

from .conftest import PASSWORD

pytestmark = pytest.mark.portable

DOCUMENTS = [
    ("n1", "The council approved the budget on Monday. Taxes stay the same.", "The council approved the budget."),
    ("n2", "A storm closed the harbour. Ferries resume on Friday.", "A storm closed the harbour."),
    ("n3", "The museum reopened after repairs. Entry is free this week.", "The museum reopened after repairs."),
    ("n4", "Two teams drew 1-1 in the final. A replay is set for May.", "The final ended in a draw."),
    ("n5", "The bakery won a national prize. Its owner thanked the town.", "A local bakery won a prize."),
]
SYSTEMS = ["alpha", "beta", "gamma", "delta"]


def news_folder(root):
    """5 documents x 4 systems of one-sentence news summaries, no units and no labels."""
    root.mkdir()
    (root / "ids.txt").write_text("".join(f"{d[0]}\n" for d in DOCUMENTS))
    (root / "documents.txt").write_text("".join(f"{d[1]}\n" for d in DOCUMENTS))
    (root / "references.txt").write_text("".join(f"<t> {d[2]} </t>\n" for d in DOCUMENTS))
    (root / "summaries").mkdir()
    for k, system in enumerate(SYSTEMS):
        lines = [d[1].split(". ")[k % 2].rstrip(".") + "." for d in DOCUMENTS]
        (root / "summaries" / f"{system}.summary").write_text("\n".join(lines) + "\n")
    return root


def _stored(name):
    dataset = Dataset.objects.get(name=name)
    return (
        dataset.documents.count(),
        Summary.objects.filter(document__dataset=dataset).count(),
        ReferenceSentence.objects.filter(reference__document__dataset=dataset).count(),
        ACU.objects.filter(reference__document__dataset=dataset).count(),
    )


@pytest.mark.django_db
def test_a_folder_without_scus_imports_with_no_units(tmp_path):
    call_command("import_dataset", str(news_folder(tmp_path / "news")), "--name", "news")
    assert _stored("news") == (5, 20, 5, 0)


@pytest.mark.django_db
def test_an_scus_file_of_empty_lines_imports_with_no_units(tmp_path):
    root = news_folder(tmp_path / "news")
    (root / "SCUs.txt").write_text("\n" * len(DOCUMENTS))
    import_dataset(root, name="blank")
    (root / "SCUs.txt").write_text("")
    import_dataset(root, name="empty")
    assert _stored("blank") == _stored("empty") == (5, 20, 5, 0)


@pytest.mark.django_db
def test_an_empty_line_leaves_only_that_document_without_units(tmp_path):
    root = news_folder(tmp_path / "news")
    (root / "SCUs.txt").write_text("The council approved the budget.\n\n\nA draw.\tIn the final.\n\n")
    import_dataset(root, name="some")
    assert _stored("some")[3] == 3


@pytest.mark.django_db
def test_labels_without_units_are_refused_with_the_reason(tmp_path):
    root = news_folder(tmp_path / "news")
    (root / "labels").mkdir()
    (root / "labels" / "alpha.label").write_text("1\n" * len(DOCUMENTS))
    with pytest.raises(CommandError) as info:
        call_command("import_dataset", str(root), "--name", "x")
    assert "SCUs.txt" in str(info.value) and "missing" in str(info.value) and "labels/alpha.label" in str(info.value)
    assert not Dataset.objects.filter(name="x").exists()


@pytest.mark.django_db
def test_the_import_page_takes_a_zipped_folder_without_units(client, make_user, tmp_path):
    make_user("lena-lead", "lead")
    client.login(username="lena-lead", password=PASSWORD)
    archive = shutil.make_archive(str(tmp_path / "news"), "zip", tmp_path, news_folder(tmp_path / "news").name)
    with open(archive, "rb") as fh:
        upload = SimpleUploadedFile("news.zip", fh.read())
    response = client.post(reverse("dataset_import"), {"name": "news", "format": "pyramid", "file": upload})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert _stored("news") == (5, 20, 5, 0)
    page = client.get(reverse("dataset_import")).content.decode()
    assert "optional <code>SCUs.txt</code>" in page and "import with no ACUs" in page
