"""Usernames that read alike: one rule for every place an account is named (the People page,
`create_user_with_role`, the admin's user forms).

Sign-in folds a username with NFKC (Django's `normalize_username`, config/lockout.py), so
fullwidth "ｄemo-worker" signs in as "demo-worker". An account is therefore named with the folded
form, and a name whose NFKC + case fold equals an existing account's is a lookalike of it; letters
of more than one script (Latin "d" beside Cyrillic "е") are refused as well, since NFKC keeps them
apart while a reader cannot.
"""

import unicodedata

from django.contrib.auth import get_user_model

from .lockout import fold_username

__all__ = ["fold_username", "lookalike_of", "mixed_scripts_message", "username_key"]


def username_key(username: str) -> str:
    """What two usernames that look alike share: NFKC-folded and case-folded."""
    return unicodedata.normalize("NFKC", fold_username(username)).casefold()


def scripts(username: str) -> set[str]:
    """The writing systems of the letters of a username (LATIN, CYRILLIC, GREEK, ...)."""
    return {unicodedata.name(c, "UNKNOWN").split()[0] for c in username if c.isalpha()}


def mixed_scripts_message(username: str) -> str | None:
    found = scripts(username)
    if len(found) < 2:
        return None
    return (
        f"The username {username!r} mixes letters of {' and '.join(sorted(found))} scripts, "
        "so it can look like another name; use letters of one script."
    )


def lookalike_of(username: str, *, exclude: str | None = None, exclude_pk: int | None = None) -> str | None:
    """An existing username that reads like `username` (same `username_key`), other than the
    username `exclude` or the account `exclude_pk`."""
    users = get_user_model().objects.all()
    if exclude is not None:
        users = users.exclude(username=exclude)
    if exclude_pk is not None:
        users = users.exclude(pk=exclude_pk)
    found = users.filter(username__iexact=fold_username(username)).values_list("username", flat=True).first()
    if found is not None:
        return found
    # Rows written before usernames were folded at creation may hold fullwidth or other compatibility forms.
    key = username_key(username)
    legacy = users.filter(username__regex=r"[^ -~]").values_list("username", flat=True)
    return next((u for u in legacy if username_key(u) == key), None)
