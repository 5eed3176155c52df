"""The one money filter of every page: `{{ amount|money }}` reads "$2.80", `{{ amount|money:"GBP" }}` "£2.80";
`{{ currency|currency_sign }}` names the currency beside an amount box ("Amount (£)")."""

from django import template

from hits.money import currency_sign as sign_of
from hits.money import format_money

register = template.Library()


@register.filter(name="money")
def money(value, currency: str = "USD") -> str:
    return format_money(value, currency or "USD")


@register.filter(name="currency_sign")
def currency_sign(currency: str) -> str:
    return sign_of(currency or "USD")
