"""Money as Decimal cents; the one parser of amounts people type; pay buckets and their calibration
to an hourly rate (pure)."""

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")

# RoSE paid $0.15 to $0.55 per HIT by number of ACUs, calibrated to $12/hour.
DEFAULT_BUCKETS = [
    (1, 5, Decimal("0.15")),
    (6, 10, Decimal("0.25")),
    (11, 15, Decimal("0.35")),
    (16, 20, Decimal("0.45")),
    (21, None, Decimal("0.55")),
]


def cents(value) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


CURRENCY_SIGNS = {"USD": "$", "GBP": "£", "EUR": "€"}

MAX_REWARD = Decimal("100.00")  # per HIT, in a pay bucket
MAX_BUDGET = Decimal("99999999.99")  # Batch.budget holds 10 digits

# Dollars and cents as people write them: "2", "2.5", "2.50", ".50", "$2.50", "1,000.00" (commas
# only between groups of three digits), "-2" (refused by `minimum` unless a caller allows it). Nothing
# else: no exponent, underscore, NaN or infinity.
_AMOUNT = re.compile(r"[$£]?(?P<number>-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)", re.ASCII)


class MoneyError(ValueError):
    """An amount that is not exact units and cents, with a message for the person who typed it."""


def parse_money(
    value, *, what: str = "The amount", minimum=Decimal("0.00"), maximum=None, currency: str = "USD"
) -> Decimal:
    """The exact amount in `value` (text as typed, or a Decimal/int from code), in whole cents.

    Accepted: digits with a decimal point and at most two decimals that are not zero ("1.50",
    "1.500"), an optional leading "$", and commas between thousands ("1,000.50"). Refused, each
    with a message: a decimal comma ("1,50": write 1.50), fractions of a cent ("0.005": never
    rounded), underscores, exponents, NaN and infinity, and amounts outside
    [minimum, maximum] (the message gives the bound in `currency`, the batch's)."""
    if isinstance(value, bool) or value is None:
        raise MoneyError(f"{what} is missing.")
    if isinstance(value, float):
        value = repr(value)
    if isinstance(value, Decimal | int):
        number = Decimal(value)
        if not number.is_finite():
            raise MoneyError(f"{what} must be an amount of money with cents, not {value}.")
        shown = str(value)
    else:
        shown = str(value).strip()
        if not shown:  # an empty box (it read: The bonus “” is not an amount of money)
            raise MoneyError(f"{what} is missing: write an amount, as 1.50.")
        if len(shown) > 32:
            raise MoneyError(f"{what} is too long to be an amount of money.")
        match = _AMOUNT.fullmatch(shown)
        if match is None:
            if re.fullmatch(r"[$£]?\d+,\d{1,2}", shown, re.ASCII):
                raise MoneyError(
                    f"{what} “{shown}” has a decimal comma: write the amount with a point for the cents, as "
                    f"{shown.lstrip('$£').replace(',', '.')}."
                )
            raise MoneyError(
                f"{what} “{shown}” is not an amount of money: write it with a point for the cents, as 1.50."
            )
        try:
            number = Decimal(match["number"].replace(",", ""))
        except InvalidOperation:
            raise MoneyError(
                f"{what} “{shown}” is not an amount of money: write it with a point for the cents, as 1.50."
            ) from None
    exact = number.quantize(CENT, rounding=ROUND_HALF_UP)
    if exact != number:
        raise MoneyError(f"{what} “{shown}” has a fraction of a cent; amounts are whole cents, never rounded.")
    if minimum is not None and exact < minimum:
        raise MoneyError(f"{what} must be at least {format_money(minimum, currency)}.")
    if maximum is not None and exact > maximum:
        raise MoneyError(f"{what} must be at most {format_money(maximum, currency)}.")
    return exact


def format_money(value, currency: str = "USD") -> str:
    """'$2.80', '-$0.50', '$1,234.00': two decimals and the currency sign; empty for None.

    Every page and the API show money through this (the `money` filter, `MoneyField`)."""
    if value is None or value == "":
        return ""
    amount = cents(str(value) if isinstance(value, float) else value)  # 1.005 reads $1.01, as written
    sign = CURRENCY_SIGNS.get(str(currency).upper(), f"{currency} ")
    return f"{'-' if amount < 0 else ''}{sign}{abs(amount):,.2f}"


def currency_sign(currency: str = "USD") -> str:
    """What names a currency beside an amount box ("Budget ($)", "Amount (£)"): its sign, or its code
    where it has none here (as `format_money` writes it)."""
    return CURRENCY_SIGNS.get(str(currency or "USD").upper(), str(currency))


def money_string(value) -> str:
    """'1.50': two decimals, no sign, as MTurk's API expects (^[0-9]+(\\.)?[0-9]{0,2}$)."""
    amount = cents(value)
    if amount < 0:
        raise ValueError("a payment cannot be negative")
    return f"{amount:.2f}"


@dataclass(frozen=True)
class Bucket:
    min_acus: int
    max_acus: int | None
    reward: Decimal

    def holds(self, acu_count: int) -> bool:
        return acu_count >= self.min_acus and (self.max_acus is None or acu_count <= self.max_acus)

    @property
    def label(self) -> str:
        return f"{self.min_acus}–{self.max_acus}" if self.max_acus is not None else f"{self.min_acus}+"


def check_buckets(buckets: list[Bucket]) -> None:
    """Buckets must be ordered, not overlap, leave no gap, and pay a positive amount."""
    if not buckets:
        raise ValueError("at least one pay bucket is needed")
    if buckets[0].min_acus != 1:
        # adaptive follow-ups and triage leave HITs with as few as one ACU
        raise ValueError(f"the first bucket starts at 1 ACU, not {buckets[0].min_acus}")
    for i, b in enumerate(buckets):
        if b.reward <= 0:
            raise ValueError(f"bucket {b.label} pays nothing")
        if b.max_acus is not None and b.max_acus < b.min_acus:
            raise ValueError(f"bucket {b.label} ends before it starts")
        previous_end = buckets[i - 1].max_acus if i else None
        if i and previous_end is None:
            raise ValueError(f"bucket {buckets[i - 1].label} is open-ended but not the last")
        if i and previous_end is not None and b.min_acus != previous_end + 1:
            raise ValueError(f"buckets {buckets[i - 1].label} and {b.label} overlap or leave a gap")


def unpaid_counts(buckets: list[Bucket], acu_counts) -> list[int]:
    """The ACU counts (of a batch's HITs) that no bucket pays, in order."""
    return sorted({n for n in acu_counts if not any(b.holds(n) for b in buckets)})


def batch_buckets(batch) -> list[Bucket]:
    """A batch's pay buckets (its PayBucket rows) as Buckets."""
    return [Bucket(b.min_acus, b.max_acus, b.reward) for b in batch.buckets.all()]


def bucket_for(buckets: list[Bucket], acu_count: int) -> Bucket:
    for b in buckets:
        if b.holds(acu_count):
            return b
    raise ValueError(f"no pay bucket covers {acu_count} ACUs")


def hourly_rate(reward: Decimal, seconds: float) -> Decimal | None:
    """What a reward pays per hour of work taking `seconds`."""
    if not seconds or seconds <= 0:
        return None
    return cents(Decimal(reward) * Decimal(3600) / Decimal(str(seconds)))


def reward_for_rate(target_hourly: Decimal, seconds: float) -> Decimal:
    """The smallest whole-cent reward that pays at least `target_hourly` for `seconds` of work."""
    return max(
        CENT, (Decimal(target_hourly) * Decimal(str(seconds)) / Decimal(3600)).quantize(CENT, rounding=ROUND_CEILING)
    )


MAX_FEEDBACK = 1024  # MTurk's RequesterFeedback limit
MAX_BONUS = Decimal("100.00")
