"""Turning an uploaded file into a path the importer reads: a JSONL file, or a pyramid
folder unpacked from a zip or tar archive (refusing paths that escape the folder).

Archives are bounded before anything is extracted: at most IMPORT_ARCHIVE_MAX_MEMBERS
members, IMPORT_ARCHIVE_MAX_BYTES expanded in all and IMPORT_ARCHIVE_MAX_RATIO times the
archive's own size (a zip or tar bomb is refused, not unpacked); extraction itself counts the
bytes it writes, so sizes a zip header understates are caught as well."""

import shutil
import tarfile
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.template.defaultfilters import filesizeformat

from .importing.errors import DatasetImportError
from .importing.formats import SINGLE_FILE_FORMATS

# The import formats a lead picks on the Import page and in the API (FORMATS reads each).
FORMAT_CHOICES = [
    ("rose", "RoSE JSONL (.jsonl)"),
    ("pyramid", "Pyramid folder, zipped (.zip, .tar.gz)"),
    ("rose-protocols", "RoSE protocol comparison with its ratings (.json)"),
]


def upload_too_large(upload, command: str) -> str | None:
    """The message refusing an upload over IMPORT_UPLOAD_MAX_BYTES (it names the command that
    imports larger files), or None when it fits."""
    limit = settings.IMPORT_UPLOAD_MAX_BYTES
    if upload.size <= limit:
        return None
    return (
        f"The file is {filesizeformat(upload.size)}; the limit is {filesizeformat(limit)}. "
        f"Use the {command} command for larger files."
    )


def _bounds(archive: Path) -> int:
    """The most bytes this archive may expand to."""
    return min(settings.IMPORT_ARCHIVE_MAX_BYTES, max(1, archive.stat().st_size) * settings.IMPORT_ARCHIVE_MAX_RATIO)


def _refuse_big(total: int, limit: int, count: int, name: str) -> None:
    if count > settings.IMPORT_ARCHIVE_MAX_MEMBERS:
        raise DatasetImportError(
            f"the archive holds more than {settings.IMPORT_ARCHIVE_MAX_MEMBERS} files; a pyramid folder needs far fewer",
            name,
        )
    if total > limit:
        raise DatasetImportError(
            f"the archive expands to more than {filesizeformat(limit)} (a compression bomb?); nothing was unpacked",
            name,
        )


def _unpack_zip(zf: zipfile.ZipFile, target: Path, archive: Path, original_name: str) -> None:
    members = zf.infolist()
    limit = _bounds(archive)
    _refuse_big(sum(m.file_size for m in members), limit, len(members), original_name)
    for member in members:
        if not (target / member.filename).resolve().is_relative_to(target.resolve()):
            raise DatasetImportError(f"unsafe path {member.filename!r} in the archive", original_name)
    written = 0
    for member in members:
        path = (target / member.filename).resolve()
        if member.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(member) as src, open(path, "wb") as out:
            while chunk := src.read(1 << 20):
                written += len(chunk)
                _refuse_big(written, limit, 0, original_name)
                out.write(chunk)


def _unpack_tar(tf: tarfile.TarFile, target: Path, archive: Path, original_name: str) -> None:
    limit, total, members = _bounds(archive), 0, []
    for member in tf:  # reads headers in order; stops as soon as a bound is passed
        members.append(member)
        total += max(0, member.size)
        _refuse_big(total, limit, len(members), original_name)
    tf.extractall(target, members=members, filter="data")


def _safe_name(name: str) -> str:
    """The upload's file name as a short, printable, single path component (for messages)."""
    cleaned = "".join(c for c in Path(str(name).replace("\\", "/")).name if c.isprintable() and c not in "/\\")
    return cleaned[:60] or "upload.jsonl"


def _find_root(folder: Path, original_name: str = "") -> Path:
    """The folder holding ids.txt (archives often wrap everything in one top folder). An archive
    of several pyramid folders (a dataset and its copy, two datasets) is refused naming them:
    which one was meant is not for the import to guess."""
    candidates = sorted(
        (p.parent for p in folder.rglob("ids.txt") if "__MACOSX" not in p.parts), key=lambda p: (len(p.parts), str(p))
    )
    if not candidates:
        raise DatasetImportError("the archive holds no ids.txt (a pyramid folder needs one)", original_name or None)
    if len(candidates) > 1:
        names = ", ".join(f"{p.relative_to(folder).as_posix() or '.'}/" for p in candidates[:5])
        raise DatasetImportError(
            f"the archive holds {len(candidates)} pyramid folders ({names}); upload an archive of one", original_name
        )
    return candidates[0]


def _unpack(archive: Path, target: Path, original_name: str) -> None:
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            _unpack_zip(zf, target, archive, original_name)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tf:
            _unpack_tar(tf, target, archive, original_name)
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
        original_name = _safe_name(upload.name)
        if fmt in SINGLE_FILE_FORMATS:
            named = workdir / original_name
            saved.rename(named)
            yield named
        else:
            unpacked = workdir / "unpacked"
            unpacked.mkdir()
            try:
                _unpack(saved, unpacked, original_name)
            except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
                raise DatasetImportError(f"cannot unpack the archive: {exc}", original_name) from None
            yield _find_root(unpacked, original_name)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
