"""A pyramid folder archived on a Mac imports as the folder itself: the AppleDouble "._NAME" file
macOS's tar writes beside each file with extended attributes (a downloaded file's quarantine) is
not a system's summaries or labels."""

import io
import tarfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Dataset
from hits.services.dataset_import import import_dataset, import_upload

from .snapshots import dataset_snapshot

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

# The start of an AppleDouble file as macOS writes it (magic, version, "Mac OS X", entries).
APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \x00\x02\x00\x00\x00\t\x00\x00\x002\x00\x00\x0e\xb0"


def _mac_tar(folder) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for path in sorted(folder.rglob("*")):
            name = f"realsumm/{path.relative_to(folder)}"
            if path.is_file():
                info = tarfile.TarInfo(f"{name.rsplit('/', 1)[0]}/._{path.name}")
                info.size = len(APPLE_DOUBLE)
                tf.addfile(info, io.BytesIO(APPLE_DOUBLE))
            tf.add(path, arcname=name, recursive=False)
    return buffer.getvalue()


def test_a_pyramid_folder_tarred_on_a_mac_imports_as_the_folder(realsumm_path):
    """It was refused: "summaries/._abs_bart_out.summary, line 1: bytes that are not UTF-8"."""
    upload = SimpleUploadedFile("realsumm.tar.gz", _mac_tar(realsumm_path))
    summary = import_upload(upload, name="from-a-mac", fmt="pyramid")
    import_dataset(realsumm_path, name="folder")
    assert summary.systems == 25
    assert dataset_snapshot(Dataset.objects.get(name="from-a-mac")) == dataset_snapshot(
        Dataset.objects.get(name="folder")
    )
