"""The form and API fields of an amount of money: read by `hits.money.parse_money` (the one parser of
amounts), written with two decimals (hits/batch_fields.py builds the batch settings' fields from them)."""

from django import forms
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers

from hits.money import MoneyError, cents, parse_money


class MoneyField(serializers.DecimalField):
    """An amount in the batch's currency as a string with two decimals, rounded half up to the cent.

    `bounds_in_currency`: its min_value and max_value are checked by the serializer, which knows the
    batch's currency (`money_refusals`), not by the field, whose digit and value limits would
    answer in Django's words ("no more than 10 digits in total") before the batch's."""

    def __init__(self, *, bounds_in_currency: bool = False, **kwargs):
        kwargs.setdefault("max_digits", 12)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("coerce_to_string", True)
        bounds = {k: kwargs.pop(k, None) for k in ("min_value", "max_value")} if bounds_in_currency else {}
        super().__init__(**kwargs)
        self.bounds_in_currency = bounds_in_currency
        if bounds_in_currency:
            self.min_value, self.max_value = bounds["min_value"], bounds["max_value"]

    def to_internal_value(self, data):
        """Read through `hits.money.parse_money`, the one parser of amounts: no underscores, exponents,
        NaN or infinity, no fraction of a cent; then the field's own digit and value limits (unless
        the serializer checks its bounds)."""
        try:
            amount = parse_money(data, what="The amount", minimum=None)
        except MoneyError as exc:
            raise serializers.ValidationError(str(exc)) from None
        if self.bounds_in_currency:
            return amount
        return super().to_internal_value(amount)

    def to_representation(self, value):
        if value is None:
            return None
        return super().to_representation(cents(value))


class MoneyFieldExtension(OpenApiSerializerFieldExtension):
    """The schema of a MoneyField states what `parse_money` and the field take: ASCII digits (no
    more than max_digits), at most two decimals, a minus only when the field allows one."""

    target_class = MoneyField

    def map_serializer_field(self, auto_schema, direction):
        field = self.target
        whole = field.max_digits - field.decimal_places
        sign = "-?" if field.min_value is None or field.min_value < 0 else ""
        return {"type": "string", "format": "decimal", "pattern": f"^{sign}[0-9]{{1,{whole}}}(?:\\.[0-9]{{1,2}})?$"}


class MoneyFormField(forms.DecimalField):
    """A form's amount of money, read by `hits.money.parse_money` (the one parser of amounts).

    Its min_value and max_value are the setting's, checked by the form once the batch's currency is
    known (`money_refusals`, as the API's serializer), not here: Django's digit and value
    validators would answer first, in their words and in no currency. A text box with a decimal
    keyboard, as every amount box of the app ("$50" and "1,000" are amounts too)."""

    def __init__(self, *, min_value=None, max_value=None, **kwargs):
        kwargs.update(max_digits=None, decimal_places=2)
        kwargs.setdefault("widget", forms.TextInput(attrs={"inputmode": "decimal"}))
        super().__init__(**kwargs)
        self.min_value, self.max_value = min_value, max_value

    def to_python(self, value):
        if value in self.empty_values:
            return None
        try:
            return parse_money(value, what="The amount", minimum=None)
        except MoneyError as exc:
            raise forms.ValidationError(str(exc), code="invalid") from None
