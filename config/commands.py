"""What the management commands share: a row named on the command line, or a clear refusal."""

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
