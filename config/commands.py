"""What the management commands share: a row named on the command line, or a clear refusal;
a file named by --output, written whole or not at all."""

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from django.core.management.base import CommandError


def found(queryset, message: str, **lookup):
    """The first row of `queryset` matching `lookup`, or a CommandError saying `message` (a
    command's argument names no such row: a clear message, never a traceback)."""
    row = queryset.filter(**lookup).first()
    if row is None:
        raise CommandError(message)
    return row


def picked(options: dict, *names: str) -> dict:
    """The command-line options `names`, by name, for a service taking the same keywords."""
    return {name: options[name] for name in names}


@contextmanager
def output_file(name: str, newline: str | None = None):
    """A text stream for the file `name`, written beside it and renamed over it when the block
    ends, so a failed export never leaves half a file; the file gets the permissions any new file
    of the user gets (the umask's, as open() would give). A path that cannot be written (no such
    folder, a folder, no permission) is a CommandError naming it, never a traceback."""
    target = Path(name)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    except OSError as exc:
        raise CommandError(f"Cannot write {name}: {exc.strerror or exc}.") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes the file private to its owner
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as stream:
            yield stream
        os.replace(tmp, target)
    except OSError as exc:
        raise CommandError(f"Cannot write {name}: {exc.strerror or exc}.") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
