"""Money formatting, pay buckets and calibration (pure functions)."""

from decimal import Decimal

import pytest

from hits.money import DEFAULT_BUCKETS, Bucket, bucket_for, check_buckets, hourly_rate, money_string, reward_for_rate


def test_money_strings_have_two_decimals_and_no_sign():
    assert money_string(Decimal("0.5")) == "0.50"
    assert money_string("1.005") == "1.01"  # half up, never 3 decimals
    assert money_string(2) == "2.00"
    with pytest.raises(ValueError):
        money_string("-1")


def test_default_buckets_cover_every_count_from_015_to_055():
    buckets = [Bucket(*b) for b in DEFAULT_BUCKETS]
    check_buckets(buckets)
    assert bucket_for(buckets, 1).reward == Decimal("0.15")
    assert bucket_for(buckets, 10).reward == Decimal("0.25")
    assert bucket_for(buckets, 300).reward == Decimal("0.55")
    with pytest.raises(ValueError):
        bucket_for(buckets, 0)


@pytest.mark.parametrize(
    "buckets, problem",
    [
        ([Bucket(1, 5, Decimal("0.1")), Bucket(5, None, Decimal("0.2"))], "overlap"),
        ([Bucket(1, 5, Decimal("0.1")), Bucket(7, None, Decimal("0.2"))], "gap"),
        ([Bucket(1, None, Decimal("0.1")), Bucket(7, None, Decimal("0.2"))], "open-ended"),
        ([Bucket(1, 5, Decimal("0"))], "pays nothing"),
        ([], "at least one"),
    ],
)
def test_bad_buckets_are_refused(buckets, problem):
    with pytest.raises(ValueError, match=problem):
        check_buckets(buckets)


def test_calibration_to_twelve_dollars_an_hour():
    # $0.15 for 45 s is exactly $12/hour.
    assert hourly_rate(Decimal("0.15"), 45) == Decimal("12.00")
    assert reward_for_rate(Decimal("12"), 45) == Decimal("0.15")
    assert reward_for_rate(Decimal("12"), 46) == Decimal("0.16")  # rounds up: never below target
    assert reward_for_rate(Decimal("12"), 0.1) == Decimal("0.01")
    assert hourly_rate(Decimal("0.15"), 0) is None
