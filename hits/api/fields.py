"""The API's one money field: a decimal string with exactly two places ("2.80"), never a float."""

from rest_framework import serializers

from hits.money import MoneyError, cents, parse_money


class MoneyField(serializers.DecimalField):
    """Dollars (or the batch's currency) as a string with two decimals, rounded half up to the cent."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_digits", 12)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("coerce_to_string", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        """Read through `hits.money.parse_money`, the one parser of amounts: no underscores, exponents,
        NaN or infinity, no fraction of a cent; then the field's own digit and value limits."""
        try:
            amount = parse_money(data, what="The amount", minimum=None)
        except MoneyError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return super().to_internal_value(amount)

    def to_representation(self, value):
        if value is None:
            return None
        return super().to_representation(cents(value))
