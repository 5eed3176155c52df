"""The one money filter of every page: `{{ amount|money }}` reads "$2.80", `{{ amount|money:"GBP" }}` "£2.80"."""

from django import template

from hits.money import format_money

register = template.Library()


@register.filter(name="money")
def money(value, currency: str = "USD") -> str:
    return format_money(value, currency or "USD")
