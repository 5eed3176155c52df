"""One spec of a crowd batch's settings: type, default, limits, label, help and messages.

The lead's batch form (`hits.forms.BatchForm`) and the API's input serializer
(`hits.api.batches.BatchCreateInput`) both build their fields from `FIELDS`, so a limit is
written once and a bad value gets the same message on the page and in the API. `BatchSpec` holds a
new batch's settings, checked against `FIELDS` (and the rules between them) once when it is built;
the form, the API and the `create_batch` command build one, and the service
(`hits.services.batches.create_batch`) takes it as it is.
"""

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django import forms
from rest_framework import serializers

from config.errors import ServiceError
from hits.allocation.policy import (
    ADAPTIVE,
    ADAPTIVE_KINDS,
    KINDS,
    PAIRS,
    PAIRS_MIN_PLACES,
    PAIRS_THRESHOLD,
    PILOT_MIN,
    PILOT_SHARE,
    TRIAGE_ALWAYS,
    TRIAGE_GOLD_AFTER,
    TRIAGE_SPAMMER_SHARE,
    TRIAGE_SPAMMERS,
    TRIAGE_WHEN,
    Policy,
    kind_defaults,
)
from hits.money import DEFAULT_BUCKETS, MAX_BUDGET, Bucket, check_buckets, format_money
from hits.money_fields import MoneyField, MoneyFormField
from hits.provider_interface import Capability, ProviderError, get_provider, money_currency
from hits.ratings import ACU, MAX_INSTRUCTIONS, PROTOCOLS
from hits.ratings import KINDS as WORK_KINDS

MAX_ASSIGNMENTS = 9  # MTurk charges another 20% from 10 assignments per HIT
# MTurk: lifetime and auto-approval at most 365 and 30 days.
MAX_LIFETIME_HOURS = 24 * 365
MAX_ASSIGNMENT_MINUTES = 60 * 24 * 365
MAX_AUTO_APPROVE_HOURS = 24 * 30


class BatchError(ServiceError):
    """A refused batch setting or action, with a message for the lead."""


@dataclass(frozen=True)
class BatchField:
    """One setting; `kind` is text, int, float (finite), money (two decimals), choice (one of `choices`)
    or bool (a tick box; unticked: False)."""

    name: str
    kind: str
    label: str
    default: Any
    min: int | float | Decimal | None = None
    max: int | float | Decimal | None = None
    help: str = ""
    optional: bool = False  # may be left empty (the default is then used)
    max_length: int = 200  # text
    max_digits: int = 10  # money
    choices: tuple[str, ...] = ()  # choice

    def messages(self) -> dict[str, str]:
        """The error messages of this field, the same for the form and the serializer."""
        out = {
            "required": "This field is required.",
            "invalid": "Enter a whole number." if self.kind == "int" else "Enter a valid number.",
        }
        if self.min is not None:
            out["min_value"] = f"Ensure this value is greater than or equal to {self.min}."
        if self.max is not None:
            out["max_value"] = f"Ensure this value is less than or equal to {self.max}."
        if self.kind == "choice":
            out["invalid_choice"] = f"Choose one of: {', '.join(self.choices)}."
            del out["invalid"]
        if self.kind == "text":
            out["max_length"] = f"Ensure this value has at most {self.max_length} characters."
            del out["invalid"]
        if self.kind == "bool":
            out["invalid"] = "Must be true or false."
        if self.kind == "money":
            out["max_digits"] = f"Ensure that there are no more than {self.max_digits} digits in total."
            out["max_decimal_places"] = "Ensure that there are no more than 2 decimal places."
            out["max_whole_digits"] = (
                f"Ensure that there are no more than {self.max_digits - 2} digits before the decimal point."
            )
        return out


FIELDS = {
    f.name: f
    for f in (
        BatchField(
            "name",
            "text",
            "Name",
            "",
            optional=True,
            help="Optional; otherwise the dataset, the batch number and the date.",
            max_length=200,
        ),
        BatchField(
            "protocol",
            "choice",
            "Kind of work",
            ACU,
            choices=WORK_KINDS,
            optional=True,
            help="acu: one HIT per summary, its facts marked present or not. prior, ref_free, ref_based: a rating "
            "batch (RoSE §5), one HIT per example with every summary of it rated 1-5: Prior shows no document, "
            "Ref-free the document, Ref-based the reference.",
        ),
        BatchField(
            "instructions",
            "text",
            "Rating instructions",
            "",
            optional=True,
            max_length=MAX_INSTRUCTIONS,
            help="A rating batch's instructions to workers; empty: RoSE's wording for its protocol.",
        ),
        BatchField(
            "rating_round",
            "text",
            "Rating round",
            "",
            optional=True,
            max_length=100,
            help="A rating batch's ratings go to this rating round of the dataset (empty: “collected”), one "
            "batch per protocol: give a Prior and a Ref-free batch the same round to compare them.",
        ),
        BatchField("assignments", "int", "Assignments per HIT", 3, min=1, max=MAX_ASSIGNMENTS),
        BatchField("lifetime_hours", "float", "Lifetime (hours)", 168, min=0.1, max=MAX_LIFETIME_HOURS),
        BatchField(
            "assignment_minutes", "float", "Assignment duration (minutes)", 60, min=1, max=MAX_ASSIGNMENT_MINUTES
        ),
        BatchField("auto_approve_hours", "float", "Auto-approve after (hours)", 72, min=0, max=MAX_AUTO_APPROVE_HOURS),
        BatchField("gold_share", "float", "Gold share", 0, min=0, max=0.5, help="Share of HITs with known answers."),
        BatchField(
            "budget",
            "money",
            "Budget (in the batch's currency)",
            None,
            min=Decimal("0.00"),
            max=MAX_BUDGET,
            optional=True,
            help="In the currency the batch pays in: its provider's (USD; a Prolific account's, e.g. GBP). "
            "Publishing is refused while the estimate exceeds it.",
        ),
        BatchField(
            "allocation",
            "choice",
            "Allocation",
            "fixed",
            choices=KINDS,
            optional=True,
            help="fixed: every HIT gets the assignments above; adaptive: a HIT starts with the minimum and gets "
            "one more place, up to the maximum, while any of its ACUs is unsettled; pairs (adaptive by ACU, in-house): "
            "a HIT starts with the minimum and, while any of the summary's ACUs is unsettled, a new worker is asked "
            "only those ACUs, up to the maximum places per summary (each such place paid by the bucket of the ACUs it "
            "shows; gold HITs keep the assignments). Left empty below, a pairs batch takes the setting it was "
            f"measured with (bench/RESULTS.md): {PAIRS_MIN_PLACES} first place, the posterior {PAIRS_THRESHOLD}.",
        ),
        BatchField(
            "allocation_min",
            "int",
            "Adaptive: first places per HIT",
            None,
            min=1,
            max=MAX_ASSIGNMENTS,
            optional=True,
            help=f"Empty: {Policy.min_places} (adaptive), {PAIRS_MIN_PLACES} (pairs, as measured).",
        ),
        BatchField(
            "allocation_max", "int", "Adaptive: most places per HIT", 5, min=1, max=MAX_ASSIGNMENTS, optional=True
        ),
        BatchField(
            "allocation_threshold",
            "float",
            "Adaptive: settled at posterior",
            None,
            min=0.51,
            max=0.999,
            optional=True,
            help="An ACU is settled when its Dawid-Skene posterior is at least this or at most 1 minus this. "
            f"Empty: {Policy.threshold} (adaptive), {PAIRS_THRESHOLD} (pairs, as measured).",
        ),
        BatchField(
            "allocation_max_sd",
            "float",
            "Adaptive: settled at share sd",
            None,
            min=0.01,
            max=0.49,
            optional=True,
            help="Optional. Set: every HIT is settled as a whole when the standard deviation of its ACU share "
            "(what a system score averages) is at most this (e.g. 0.105); the posterior above is then unused. "
            f"Empty: a batch of {3 * PILOT_MIN} HITs or more sets it from its pilot (its first HITs, one in {PILOT_SHARE}, "
            f"at least {PILOT_MIN}, worked at the assignments per HIT above; until then every HIT gets "
            "those); a smaller batch settles each ACU at the posterior above.",
        ),
        BatchField(
            "allocation_judge_run",
            "int",
            "Pairs: prior from judge run",
            None,
            min=1,
            max=2**31 - 1,
            optional=True,
            help="Optional, pairs allocation only: a finished, calibrated judge run of this dataset (its id in the API); its "
            "probability that an ACU is present is that pair's prior, which the workers' answers then update (e.g. "
            "the learned judge trained on your gold documents). Empty: every pair starts at the batch's prior.",
        ),
        BatchField(
            "triage_confidence",
            "float",
            "Pairs: the judge run decides at confidence",
            None,
            min=0.51,
            max=0.999,
            optional=True,
            help="Optional, pairs allocation with a judge run only: the pairs of non-gold HITs whose probability from "
            "that run is at least this or at most 1 minus this are decided by the judge (its label: probability at "
            "least 0.5) and leave the HITs, paid by the bucket of the ACUs left (a HIT left with none is not made); "
            "gold HITs keep every ACU. Give it the c the judge run suggests (the run list above says it: chosen on "
            "your gold documents out of fold), e.g. 0.9. Empty: every pair goes to the crowd.",
        ),
        BatchField(
            "triage_when",
            "choice",
            "Pairs: when to triage",
            TRIAGE_SPAMMERS,
            choices=TRIAGE_WHEN,
            optional=True,
            help="With the triage above. spammers (the default; needs gold HITs): every pair to the crowd until the gold "
            f"round is bought, then on only if {TRIAGE_SPAMMER_SHARE:.0%} or more of the workers with {TRIAGE_GOLD_AFTER}+ "
            "gold judgments are at chance on gold (without spammers the triage cost the ranking: bench/RESULTS.md). "
            "always: from the start.",
        ),
        BatchField(
            "triage_allow_not_for_ranking",
            "bool",
            "Pairs: triage from a judge run marked not for ranking",
            False,
            optional=True,
            help="Optional, with the triage above only: tick to triage from a run marked not for ranking (its "
            "system-level Kendall tau's 95% CI with the human scores reaches 0, so its labels could reorder the "
            "systems), e.g. with the confidence the run suggests, chosen on your gold documents. Unticked, such a run "
            "is refused for triage, as on the dashboard.",
        ),
        BatchField(
            "stop_after",
            "int",
            "Adaptive: stop workers at chance on gold after",
            None,
            min=10,
            max=100000,
            optional=True,
            help="Optional: after this many judgments on gold ACUs (e.g. 20), a worker whom gold shows at chance "
            "with 99% credibility (sensitivity + specificity - 1 below 0.2 on gold) gets no more of this batch's work "
            "and their judgments leave this batch's scores (other batches keep them); agreement with other workers "
            "never stops anyone. You can lift it on the batch page. Pay stays your review's decision. Empty: off.",
        ),
    )
}


@dataclass(frozen=True)
class BatchSpec:
    """A new batch's settings, valid once built: each within its limits in `FIELDS`, the allocation a
    `Policy`, the stop of workers at chance only with adaptive allocation and adaptive allocation only
    with a provider that can add places, the provider known, the pay buckets neither overlapping nor
    leaving gaps. Anything else raises BatchError with a message for the lead, before anything is
    written. `buckets` empty: the default buckets."""

    name: str = FIELDS["name"].default
    provider: str = "inhouse"
    protocol: str = FIELDS["protocol"].default
    instructions: str = FIELDS["instructions"].default
    rating_round: str = FIELDS["rating_round"].default
    assignments: int = FIELDS["assignments"].default
    lifetime_hours: float = FIELDS["lifetime_hours"].default
    assignment_minutes: float = FIELDS["assignment_minutes"].default
    auto_approve_hours: float = FIELDS["auto_approve_hours"].default
    gold_share: float = FIELDS["gold_share"].default
    budget: Decimal | None = FIELDS["budget"].default
    allocation: str = FIELDS["allocation"].default
    allocation_min: int | None = FIELDS["allocation_min"].default  # None: the kind's (policy.kind_defaults)
    allocation_max: int = FIELDS["allocation_max"].default
    allocation_threshold: float | None = FIELDS["allocation_threshold"].default  # None: the kind's
    allocation_max_sd: float | None = FIELDS["allocation_max_sd"].default
    allocation_judge_run: int | None = FIELDS["allocation_judge_run"].default
    triage_confidence: float | None = FIELDS["triage_confidence"].default
    triage_when: str = FIELDS["triage_when"].default
    triage_allow_not_for_ranking: bool = FIELDS["triage_allow_not_for_ranking"].default
    stop_after: int | None = FIELDS["stop_after"].default
    buckets: tuple[Bucket, ...] = ()
    provider_config: dict = field(default_factory=dict)
    # The qualification test's id, for its cost only (a Prolific screening study: `CrowdProvider.extra_costs`).
    qualification_test_id: int | None = None

    def __post_init__(self):
        for name, spec in FIELDS.items():
            value = getattr(self, name)
            if spec.kind == "money" and value is not None:
                if refusal := money_refusal(spec, value, money_currency(self)):
                    raise BatchError(refusal)
                continue
            _check(spec, value)
        try:
            policy = self.policy
        except ValueError as exc:
            raise BatchError(f"Allocation: {exc}.") from None
        if self.stop_after is not None and policy.kind not in ADAPTIVE_KINDS:
            raise BatchError("Stopping workers at chance needs adaptive allocation (its worker estimates).")
        _check_pairs(self, policy)
        try:
            provider = get_provider(self.provider)
        except ProviderError as exc:
            raise BatchError(str(exc)) from None
        if policy.kind == ADAPTIVE and self.provider != "inhouse" and not provider.supports(Capability.MORE_PLACES):
            raise BatchError(f"Adaptive allocation needs a provider that can add places; {self.provider} cannot.")
        if self.rating:
            _check_rating(self, policy)
        defaults = RATING_BUCKETS if self.rating else DEFAULT_BUCKETS
        object.__setattr__(self, "buckets", tuple(self.buckets) or tuple(Bucket(*b) for b in defaults))
        try:
            check_buckets(list(self.buckets))
        except ValueError as exc:
            raise BatchError(f"Pay buckets: {exc}.") from None

    @property
    def rating(self) -> bool:
        """A rating batch (hits.ratings): one HIT per example, its summaries rated 1-5."""
        return self.protocol in PROTOCOLS

    @property
    def policy(self) -> Policy:
        """The allocation; a first places or threshold left empty: the kind's default (`kind_defaults`)."""
        first, threshold = kind_defaults(self.allocation)
        return Policy(
            self.allocation,
            first if self.allocation_min is None else self.allocation_min,
            self.allocation_max,
            threshold if self.allocation_threshold is None else self.allocation_threshold,
            self.allocation_max_sd,
        )

    @classmethod
    def from_data(cls, data: dict, *, provider_config: dict | None = None) -> "BatchSpec":
        """From a form's or serializer's cleaned data: a setting left empty takes its default."""
        settings = {name: data[name] for name in FIELDS if data.get(name) not in (None, "")}
        return cls(
            provider=data["provider"],
            buckets=tuple(data.get("buckets") or ()),
            provider_config=provider_config or {},
            **settings,
        )


# A rating HIT pays by the number of summaries it asks about: RoSE paid $1 to $3, at $12/hour.
RATING_BUCKETS = [(1, 6, Decimal("1.00")), (7, 12, Decimal("2.00")), (13, None, Decimal("3.00"))]


def _check_pairs(spec: BatchSpec, policy: Policy) -> None:
    """What only pairs allocation takes: a judge run (the prior, and the triage's source), the in-house provider."""
    if spec.allocation_judge_run is not None and policy.kind != PAIRS:
        raise BatchError("A judge run as the prior needs pairs allocation (adaptive by ACU).")
    if spec.triage_confidence is not None and (policy.kind != PAIRS or spec.allocation_judge_run is None):
        raise BatchError(
            "Triage in a batch needs pairs allocation and its judge run (the prior), whose labels decide the "
            "pairs it is sure of; for a triage batch of another kind use the judge run's triage on the dashboard."
        )
    if spec.triage_when != TRIAGE_ALWAYS and spec.triage_confidence is not None and not spec.gold_share:
        raise BatchError(
            "Triage when the gold round shows spammers (the default) needs gold HITs to read the crowd: set a gold "
            "share, or choose to triage always."
        )
    if spec.triage_allow_not_for_ranking and spec.triage_confidence is None:
        raise BatchError(
            "Triage from a judge run marked not for ranking is allowed only with triage: set the confidence "
            "at which the judge run decides, or untick it."
        )
    if policy.kind == PAIRS and spec.provider != "inhouse":
        raise BatchError(
            "Pairs allocation (adaptive by ACU) needs the in-house provider: its follow-up HITs are made as answers arrive."
        )


def _check_rating(spec: BatchSpec, policy: Policy) -> None:
    """A rating batch has fixed places and no gold (its HITs have no known answers)."""
    if policy.kind in ADAPTIVE_KINDS or spec.stop_after is not None:
        raise BatchError("A rating batch has fixed allocation: every summary gets the assignments per HIT.")
    if spec.gold_share:
        raise BatchError("A rating batch has no gold HITs: set the gold share to 0.")


def _check(spec: BatchField, value) -> None:
    """One setting against its spec (the form and the API check the same, field by field)."""
    what = f"The {spec.label[0].lower()}{spec.label[1:]}"
    if value is None:
        if spec.optional:
            return
        raise BatchError(f"{what} is required.")
    if spec.kind == "text":
        if len(value) > spec.max_length:
            raise BatchError(f"{what} has at most {spec.max_length} characters.")
        return
    if spec.kind == "choice":
        if value not in spec.choices:
            raise BatchError(f"{what} is one of: {', '.join(spec.choices)}.")
        return
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise BatchError(f"{what} is true or false.")
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise BatchError(f"{what} must be a number.")
    low, high = spec.min, spec.max
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"between {low} and {high}" if low is not None and high is not None else f"at least {low}"
        raise BatchError(f"{what} must be {bounds}.")


def money_refusal(spec: BatchField, value: Decimal, currency: str) -> str | None:
    """Why an amount setting is refused, said in the batch's currency, or None when it is within its
    bounds: the form, the API and `BatchSpec` give this one message ("The budget is between £0.00
    and £99,999,999.99.")."""
    low, high = spec.min, spec.max
    if (low is None or value >= low) and (high is None or value <= high):
        return None
    what = f"The {spec.label.split(' (')[0].lower()}"
    if low is not None and high is not None:
        return f"{what} is between {format_money(low, currency)} and {format_money(high, currency)}."
    if low is not None:
        return f"{what} is at least {format_money(low, currency)}."
    return f"{what} is at most {format_money(high, currency)}."


def money_refusals(data: dict, currency: str) -> dict[str, str]:
    """{setting: message} of the amount settings in `data` (a form's or serializer's cleaned data)
    outside their bounds, in `currency`: the batch's, known once its provider and options are read."""
    refusals = {}
    for name, spec in FIELDS.items():
        value = data.get(name)
        if spec.kind == "money" and value is not None and (refusal := money_refusal(spec, value, currency)):
            refusals[name] = refusal
    return refusals


class _FiniteFloatField(serializers.FloatField):
    """A float that is a real number (no NaN, no infinity), as Django's form field checks."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not math.isfinite(value):
            self.fail("invalid")
        return value


# The settings of the spec the batch form and the API take after the qualification test, in order.
QUALITY_AND_ALLOCATION = (
    "gold_share",
    "budget",
    "allocation",
    "allocation_min",
    "allocation_max",
    "allocation_threshold",
    "allocation_max_sd",
    "allocation_judge_run",
    "triage_confidence",
    "triage_when",
    "triage_allow_not_for_ranking",
    "stop_after",
)


def batch_form_field(name: str) -> forms.Field:
    """The batch form's field for a setting."""
    spec = FIELDS[name]
    common: dict[str, Any] = {
        "label": spec.label,
        "help_text": spec.help,
        "required": not spec.optional,
        "error_messages": spec.messages(),
    }
    if spec.kind == "text":
        return forms.CharField(max_length=spec.max_length, **common)
    if spec.kind == "choice":
        return forms.ChoiceField(choices=[(c, c) for c in spec.choices], initial=spec.default, **common)
    if spec.kind == "bool":
        return forms.BooleanField(initial=spec.default, **common)
    limits: dict[str, Any] = {"min_value": spec.min, "max_value": spec.max}
    if spec.kind == "int":
        return forms.IntegerField(initial=spec.default, **limits, **common)
    if spec.kind == "float":
        return forms.FloatField(initial=spec.default, **limits, **common)
    if spec.kind == "money":
        return MoneyFormField(initial=spec.default, **limits, **common)
    raise ValueError(f"unknown field kind {spec.kind!r}")


def batch_serializer_field(name: str) -> serializers.Field:
    """The API input field for a setting (absent: its default)."""
    spec = FIELDS[name]
    common: dict[str, Any] = {"help_text": spec.help or spec.label, "error_messages": spec.messages()}
    if spec.kind == "text":
        return serializers.CharField(
            max_length=spec.max_length, required=False, allow_blank=True, default=spec.default, **common
        )
    if spec.kind == "choice":
        return serializers.ChoiceField(choices=list(spec.choices), default=spec.default, **common)
    if spec.kind == "bool":
        return serializers.BooleanField(default=spec.default, **common)
    limits: dict[str, Any] = {"min_value": spec.min, "max_value": spec.max}
    empty: dict[str, Any] = {"required": False, "allow_null": True} if spec.optional else {}
    if spec.kind == "int":
        return serializers.IntegerField(default=spec.default, **limits, **empty, **common)
    if spec.kind == "float":
        return _FiniteFloatField(default=spec.default, **limits, **empty, **common)
    if spec.kind == "money":
        default = None if spec.default is None else Decimal(spec.default)
        return MoneyField(
            max_digits=spec.max_digits, bounds_in_currency=True, default=default, **limits, **empty, **common
        )
    raise ValueError(f"unknown field kind {spec.kind!r}")
