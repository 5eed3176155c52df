"""Accounts: a user with one role; a worker account also gets its in-house Worker row."""

import logging

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction

from config.roles import LEAD, ROLES, WORKER
from config.usernames import fold_username, lookalike_of, mixed_scripts_message
from hits.models import Worker

logger = logging.getLogger(__name__)


def create_user_with_role(*, username: str, password: str, role: str, email: str = ""):
    """Create (or reset) a user holding one role; leads are staff so they can use the admin.

    The username is NFKC-folded first, as the sign-in form folds it (fullwidth "ｄemo" is "demo"),
    so every account can sign in with the name it was given; a different account whose name reads
    the same (case or compatibility forms aside) is refused with ValueError."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
    username = fold_username(username)
    User = get_user_model()
    other = lookalike_of(username, exclude=username)
    if other is not None:
        raise ValueError(f"the username {username!r} reads like the existing account {other!r}")
    with transaction.atomic():
        user, _ = User.objects.get_or_create(username=username, defaults={"email": email})
        user.set_password(password)
        user.is_staff = role == LEAD
        user.save()
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    if role == WORKER:
        inhouse_worker(user)
    return user


def inhouse_worker(user) -> Worker:
    """The account's in-house Worker row (created on first need), found by the account, never by
    its name: a username given again after its account was deleted, or taken by a renamed account,
    does not open another person's earnings, tasks, block or qualification. Its id (`external_id`)
    follows the account's username (hits.services.handout reads the username from it); a row that
    holds the name and is not this account's (a deleted account's history) is kept under
    "name~row id"."""
    worker = Worker.objects.filter(provider=Worker.Provider.INHOUSE, user=user).first()
    if worker is not None and worker.external_id == user.username:
        return worker
    try:
        with transaction.atomic():
            holders = Worker.objects.filter(provider=Worker.Provider.INHOUSE, external_id=user.username)
            for other in holders.exclude(user=user).select_for_update():
                other.external_id = f"{other.external_id}~{other.pk}"
                other.save(update_fields=["external_id"])
                logger.info("in-house worker %s kept apart: its username went to account %s", other.pk, user.pk)
            if worker is not None:  # the account was renamed
                worker.external_id = user.username
                worker.save(update_fields=["external_id"])
                return worker
            return Worker.objects.create(provider=Worker.Provider.INHOUSE, external_id=user.username, user=user)
    except IntegrityError:  # a parallel first request of the same account created it
        return Worker.objects.get(provider=Worker.Provider.INHOUSE, user=user)


class PeopleError(ValueError):
    """A refused account, with a message for the lead."""


def add_person(*, username: str, role: str, password: str = "", email: str = "", by=None) -> tuple[object, str]:
    """A new account with one role, made by a lead on the People page: (user, password). An empty
    password gets a random one (shown once). An existing username is refused, never reset."""
    import secrets

    from django.contrib.auth.password_validation import validate_password
    from django.core.exceptions import ValidationError

    typed = (username or "").strip()
    username = fold_username(typed)  # as sign-in folds it: fullwidth "ｄemo" is "demo"
    if not username or len(username) > 150 or not all(c.isalnum() or c in "@.+-_" for c in username):
        raise PeopleError("A username is 1 to 150 letters, digits and @ . + - _.")
    mixed = mixed_scripts_message(username)
    if mixed:
        raise PeopleError(mixed)
    if role not in ROLES:
        raise PeopleError(f"Choose a role: {', '.join(ROLES)}.")
    other = lookalike_of(username)
    if other is not None:
        shown = f"{typed!r} (read as {username!r})" if typed != username else repr(username)
        raise PeopleError(f"The username {shown} is taken: it reads like the existing account {other!r}.")
    email = _checked_email(email)
    password = password or secrets.token_urlsafe(12)
    try:
        validate_password(password, get_user_model()(username=username, email=email))
    except ValidationError as exc:
        raise PeopleError(" ".join(exc.messages)) from None
    user = create_user_with_role(username=username, password=password, role=role, email=email)
    logger.info("person %s added as %s by %s", user.pk, role, getattr(by, "pk", None))
    return user, password


def _checked_email(email: str) -> str:
    """The email typed (empty: none), trimmed; one that is not an address, or longer than the
    account's field holds (254), is refused with a message (it was stored as typed, or failed on
    PostgreSQL's length check with a server error)."""
    from django.core.exceptions import ValidationError
    from django.core.validators import validate_email

    email = (email or "").strip()
    if not email:
        return ""
    limit = get_user_model()._meta.get_field("email").max_length
    try:
        validate_email(email)
    except ValidationError:
        raise PeopleError(
            f"The email {email[:80]!r} is not an email address (name@example.org); leave it empty for none."
        ) from None
    if len(email) > limit:
        raise PeopleError(f"An email is at most {limit} characters; this one has {len(email)}.")
    return email


def _other_person(user_id: int, by):
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise PeopleError("No such person.")
    if by is not None and user.pk == by.pk:
        raise PeopleError("You cannot do that to your own account here.")
    if by is not None and user.is_superuser and not by.is_superuser:  # as in the admin (config/user_admin.py)
        raise PeopleError("Only a superuser can change a superuser's account.")
    return user


def set_active(*, user_id: int, active: bool, by=None):
    """Deactivate a person (they can no longer sign in; their work and history stay) or let
    them sign in again. A lead cannot deactivate themselves."""
    user = _other_person(user_id, by)
    get_user_model().objects.filter(pk=user.pk).update(is_active=active)
    logger.info("person %s %s by %s", user.pk, "reactivated" if active else "deactivated", getattr(by, "pk", None))
    user.is_active = active
    return user


def set_role(*, user_id: int, role: str, by=None):
    """Give a person another role (one role per account, as when added): a lead is staff, a worker gets
    their in-house Worker row. Their work and history stay; a lead cannot change their own role."""
    if role not in ROLES:
        raise PeopleError(f"Choose a role: {', '.join(ROLES)}.")
    user = _other_person(user_id, by)
    with transaction.atomic():
        user.groups.remove(*Group.objects.filter(name__in=ROLES).exclude(name=role))
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        user.is_staff = role == LEAD
        user.save(update_fields=["is_staff"])
        if role == WORKER:
            inhouse_worker(user)
    logger.info("person %s now %s, by %s", user.pk, role, getattr(by, "pk", None))
    return user


def reset_password(*, user_id: int, by=None) -> tuple[object, str]:
    """A new random password for a person (shown once to the lead): (user, password)."""
    import secrets

    user = _other_person(user_id, by)
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    user.save(update_fields=["password"])
    logger.info("person %s password reset by %s", user.pk, getattr(by, "pk", None))
    return user, password


def people_by_role(*, active: bool = True) -> list[dict]:
    """Every active (or deactivated) account with its roles, for the People page (reads only)."""
    User = get_user_model()
    rows = []
    for user in User.objects.filter(is_active=active).prefetch_related("groups").order_by("username"):
        roles = sorted(g.name for g in user.groups.all() if g.name in ROLES)
        if user.is_superuser and LEAD not in roles:
            roles.append(LEAD)
        rows.append({"user": user, "roles": roles})
    return rows
