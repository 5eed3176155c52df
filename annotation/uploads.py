"""Turning an uploaded file into a path the importer reads: a JSONL file, or a pyramid
folder unpacked from a zip or tar archive (refusing paths that escape the folder)."""

import shutil
import tarfile
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

from .importing.errors import DatasetImportError


def _find_root(folder: Path) -> Path:
    """The folder holding ids.txt (archives often wrap everything in one top folder)."""
    candidates = sorted(folder.rglob("ids.txt"), key=lambda p: len(p.parts))
    if not candidates:
        raise DatasetImportError("the archive holds no ids.txt (a pyramid folder needs one)")
    return candidates[0].parent


def _unpack(archive: Path, target: Path, original_name: str) -> None:
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if not (target / member).resolve().is_relative_to(target.resolve()):
                    raise DatasetImportError(f"unsafe path {member!r} in the archive", original_name)
            zf.extractall(target)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tf:
            tf.extractall(target, filter="data")
    else:
        raise DatasetImportError("not a .zip or .tar(.gz) archive of a pyramid folder", original_name)


@contextmanager
def uploaded_dataset_path(upload, fmt: str):
    """Yield a path for `import_dataset`; everything temporary is removed afterwards."""
    workdir = Path(tempfile.mkdtemp(prefix="acu-import-"))
    try:
        saved = workdir / "upload"
        with open(saved, "wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        if fmt == "rose":
            named = workdir / Path(upload.name).name
            saved.rename(named)
            yield named
        else:
            unpacked = workdir / "unpacked"
            unpacked.mkdir()
            try:
                _unpack(saved, unpacked, upload.name)
            except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
                raise DatasetImportError(f"cannot unpack the archive: {exc}", upload.name) from None
            yield _find_root(unpacked)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
