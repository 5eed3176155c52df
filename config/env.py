"""Tiny typed readers for settings that come from the environment.

A boolean, integer or choice whose value cannot be read stops start-up with a message naming
the variable and the accepted values (`DEBUG=ture` is an error, never a silent False). A variable
set to an empty value counts as unset (its default), as docker-compose passes `VAR=` on when
`.env` leaves it out.
"""

import ipaddress
import os

from django.core.exceptions import ImproperlyConfigured

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def env_str(name: str, default: str = "") -> str:
    value = os.environ.get(name, "")
    return value if value.strip() else default


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
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


def env_networks(name: str, default: str = "") -> list[str]:
    """A comma-separated list of addresses or networks in CIDR form (`172.29.45.0/24`,
    `10.0.0.5`, `2001:db8::/48`), each checked and written in its normal form."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not an address or network (e.g. {name}=172.29.45.0/24,10.0.0.5)."
            ) from None
    return networks


def env_domain(name: str) -> str:
    """A bare host name (`acu.example.org`), lower-cased; empty when unset."""
    value = os.environ.get(name, "").strip().lower().rstrip(".")
    if value and not all(part and part.replace("-", "").isalnum() for part in value.split(".")):
        raise ImproperlyConfigured(
            f"{name}={os.environ[name]!r} is not a host name: give the name alone, e.g. {name}=acu.example.org "
            "(no https://, no port, no path)."
        )
    return value
