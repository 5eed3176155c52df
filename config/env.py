"""Tiny typed readers for settings that come from the environment.

A boolean, integer or choice whose value cannot be read stops start-up with a message naming
the variable and the accepted values (`DEBUG=ture` is an error, never a silent False).
"""

import os

from django.core.exceptions import ImproperlyConfigured

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    text = value.strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a boolean: use one of {', '.join(TRUE)} or {', '.join(FALSE)} (or leave it unset)."
    )


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number (e.g. {name}={default}).") from None


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    text = value.strip().upper() if all(c.isupper() for c in choices) else value.strip()
    if text not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of: {', '.join(choices)}.")
    return text


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]
