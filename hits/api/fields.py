"""The API's one money field: a decimal string with exactly two places ("2.80"), never a float."""

from rest_framework import serializers

from hits.money import cents


class MoneyField(serializers.DecimalField):
    """Dollars (or the batch's currency) as a string with two decimals, rounded half up to the cent."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_digits", 12)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("coerce_to_string", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        if value is None:
            return None
        return super().to_representation(cents(value))
