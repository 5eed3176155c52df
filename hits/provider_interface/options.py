"""One schema per provider's batch options: defaults, limits and help text in one place.

The lead's batch form (`hits.forms`), the API's input serializer (`hits.api.batches`) and the
stored defaults (`defaults`) are all derived from a provider's `options`, so they cannot
disagree.
"""

import re
from dataclasses import dataclass
from typing import Any

from django import forms
from rest_framework import serializers


@dataclass(frozen=True)
class Option:
    """One option; `kind` is bool, int, choice, choices (several), codes (a list of short ids) or text."""

    name: str
    kind: str
    default: Any
    label: str
    help: str = ""
    min: int | None = None
    max: int | None = None
    choices: tuple[tuple[str, str], ...] = ()
    pattern: str = ""  # codes: what one code looks like
    upper: bool = False  # codes: stored in capitals
    optional: bool = False  # may be left empty (None)
    max_items: int = 250
    max_length: int = 64
    form_name: str = ""  # the form field's name when it is not <provider>_<name>
    invalid: str = ""  # codes: the message for a code that does not match


def defaults(options: tuple[Option, ...]) -> dict:
    return {o.name: (list(o.default) if isinstance(o.default, (list, tuple)) else o.default) for o in options}


def merged(options: tuple[Option, ...], stored: dict | None) -> dict:
    """The defaults overlaid with a batch's stored options."""
    return {**defaults(options), **(stored or {})}


def form_field_name(provider: str, option: Option) -> str:
    return option.form_name or f"{provider}_{option.name}"


def _invalid(option: Option) -> str:
    return option.invalid or f"not a valid value for {option.label.lower()}."


def _codes_validator(option: Option):
    def check(codes: list[str]) -> None:
        for code in codes:
            if not re.fullmatch(option.pattern, code):
                raise forms.ValidationError(f"{code!r}: {_invalid(option)}")

    return check


def form_field(provider_label: str, option: Option) -> forms.Field:
    """The lead form's field for an option (every provider field is optional in the form: only the
    chosen provider's fields are read)."""
    label = f"{provider_label}: {option.label}"
    common: dict[str, Any] = {"label": label, "help_text": option.help, "required": False}
    if option.kind == "bool":
        return forms.BooleanField(initial=option.default, **common)
    if option.kind == "int":
        return forms.IntegerField(min_value=option.min, max_value=option.max, initial=option.default, **common)
    if option.kind == "choice":
        return forms.ChoiceField(choices=option.choices, initial=option.default, **common)
    if option.kind == "choices":
        return forms.MultipleChoiceField(
            choices=option.choices, initial=option.default, widget=forms.CheckboxSelectMultiple, **common
        )
    if option.kind == "codes":
        return forms.CharField(initial=",".join(option.default), max_length=option.max_items * 24, **common)
    if option.kind == "text":
        return forms.CharField(initial=option.default, max_length=option.max_length, **common)
    raise ValueError(f"unknown option kind {option.kind!r}")


def form_value(option: Option, value):
    """A cleaned form value as stored (empty means the default, unless the option may be empty)."""
    if option.kind == "codes":
        codes = [c.strip() for c in (value or "").split(",") if c.strip()]
        codes = [c.upper() for c in codes] if option.upper else codes
        if len(codes) > option.max_items:
            raise forms.ValidationError(f"At most {option.max_items} values for {option.label.lower()}.")
        _codes_validator(option)(codes)
        return codes
    if option.kind == "text":
        return (value or "").strip()
    if option.kind == "bool":
        return bool(value)
    if value in (None, "", []):
        return None if option.optional else defaults((option,))[option.name]
    return value


def serializer_field(option: Option) -> serializers.Field:
    """The API input field for an option."""
    common: dict[str, Any] = {"help_text": option.help or option.label}
    if option.kind == "bool":
        return serializers.BooleanField(default=option.default, **common)
    if option.kind == "int":
        extra: dict[str, Any] = {"allow_null": True, "required": False} if option.optional else {}
        return serializers.IntegerField(
            min_value=option.min, max_value=option.max, default=option.default, **extra, **common
        )
    if option.kind == "choice":
        return serializers.ChoiceField(choices=list(option.choices), default=option.default, **common)
    if option.kind == "choices":
        return serializers.ListField(
            child=serializers.ChoiceField(choices=list(option.choices)),
            default=list(option.default),
            max_length=len(option.choices),
            **common,
        )
    if option.kind == "codes":
        # Anchored without a group where the pattern has no alternation: Schemathesis merges the
        # length bounds into a pattern and repeats a trailing group ("^(?:[A-Za-z]{2}){2}$").
        regex = f"^(?:{option.pattern})$" if "|" in option.pattern else f"^{option.pattern}$"
        return serializers.ListField(
            child=serializers.RegexField(regex, max_length=64, error_messages={"invalid": _invalid(option)}),
            default=list(option.default),
            max_length=option.max_items,
            **common,
        )
    if option.kind == "text":
        return serializers.CharField(
            max_length=option.max_length, required=False, allow_blank=True, default=option.default, **common
        )
    raise ValueError(f"unknown option kind {option.kind!r}")


def serializer_class(name: str, options: tuple[Option, ...]) -> type[serializers.Serializer]:
    """A DRF serializer of a provider's options; codes stored in capitals where the option says so."""
    fields: dict[str, Any] = {o.name: serializer_field(o) for o in options}
    upper = [o.name for o in options if o.kind == "codes" and o.upper]

    def validate(self, data):
        for key in upper:
            if key in data:
                data[key] = [code.upper() for code in data[key]]
        return data

    fields["validate"] = validate
    return type(name, (serializers.Serializer,), fields)
