"""Forms of the lead's batch pages; provider options come from each provider's schema."""

import re

from django import forms

from annotation.models import System

from .batch_fields import FIELDS, batch_form_field, money_refusals
from .models import JudgeRun, QualificationTest
from .money import CENT, MAX_REWARD, Bucket, MoneyError, format_money, parse_money
from .provider_interface import available_providers, chosen_currency, provider_class
from .provider_interface.options import form_field, form_field_name, form_value
from .selectors import tests_for_batches
from .services.qualification import FAILURE_BUDGET


def _provider_choice(name: str) -> str:
    """'name: label', and why not to choose it where the provider is closed."""
    provider = provider_class(name)
    return f"{name}: {provider.label}" + (f" (closed: {provider.closed})" if provider.closed else "")


def _judge_run_label(run: JudgeRun) -> str:
    """A run as the list names it: id, judge, version, date and the triage confidence it suggests."""
    label = f"run {run.pk}: {run.judge} v{run.version}" + (f", {run.finished_at:%Y-%m-%d}" if run.finished_at else "")
    suggestion = (run.figures or {}).get("triage_suggestion")
    if suggestion:
        label += ", no triage suggested" if suggestion["c"] is None else f", triage suggested at {suggestion['c']:g}"
    return label


def _judge_run_choice(field: forms.Field, dataset) -> forms.TypedChoiceField:
    """The judge-run field as a list of the dataset's runs with probabilities (newest first), so a lead
    picks a run by its judge and date instead of typing its id; the service checks the choice again."""
    runs = [r for r in JudgeRun.objects.filter(batch__dataset=dataset).order_by("-pk") if r.has_probabilities]
    choices = [("", "none: every pair starts at the batch's prior")] + [(r.pk, _judge_run_label(r)) for r in runs]
    return forms.TypedChoiceField(
        choices=choices, coerce=int, empty_value=None, required=False, label=field.label, help_text=field.help_text
    )


class BatchForm(forms.Form):
    """A new crowd batch; the settings' limits and messages come from `hits.batch_fields`."""

    name = batch_form_field("name")
    protocol = batch_form_field("protocol")
    instructions = batch_form_field("instructions")
    rating_round = batch_form_field("rating_round")
    provider = forms.ChoiceField(choices=())
    assignments = batch_form_field("assignments")
    systems = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: all systems.",
    )
    lifetime_hours = batch_form_field("lifetime_hours")
    assignment_minutes = batch_form_field("assignment_minutes")
    auto_approve_hours = batch_form_field("auto_approve_hours")
    qualification_test = forms.ModelChoiceField(
        queryset=QualificationTest.objects.none(),
        required=False,
        help_text="This dataset's tests, and tests other datasets offer to its batches.",
    )
    gold_share = batch_form_field("gold_share")
    budget = batch_form_field("budget")
    allocation = batch_form_field("allocation")
    allocation_min = batch_form_field("allocation_min")
    allocation_max = batch_form_field("allocation_max")
    allocation_threshold = batch_form_field("allocation_threshold")
    allocation_max_sd = batch_form_field("allocation_max_sd")
    allocation_judge_run = batch_form_field("allocation_judge_run")
    triage_confidence = batch_form_field("triage_confidence")
    triage_when = batch_form_field("triage_when")
    triage_allow_not_for_ranking = batch_form_field("triage_allow_not_for_ranking")
    stop_after = batch_form_field("stop_after")
    documents = forms.IntegerField(
        min_value=1,
        required=False,
        label="Documents (first N approved)",
        help_text="Empty: every approved reference (a rating batch: the first N documents; empty: all).",
    )
    document_ids = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Or these documents",
        help_text="Document ids, one per line or comma-separated; overrides the count.",
    )

    # The chosen provider's options once clean() read them valid (None before, or when they are not).
    provider_options: dict | None = None

    def provider_config(self) -> dict:
        """The chosen provider's options, from its schema (the other providers' fields are ignored)."""
        provider = provider_class(self.cleaned_data["provider"])
        return {
            o.name: form_value(o, self.cleaned_data.get(form_field_name(provider.name, o))) for o in provider.options
        }

    def batch_currency(self) -> str:
        """The currency the batch will pay in: its provider's, with the options given (their defaults
        where they are not valid yet), as the draft's pages will show it."""
        try:
            options = self.provider_config()
        except forms.ValidationError:
            options = {}
        return chosen_currency(self.cleaned_data["provider"], options)

    def clean(self):
        data = super().clean()
        if "provider" not in data:
            return data
        # An amount's bounds, said in the batch's currency (the API's serializer says the same).
        for name, refusal in money_refusals(data, self.batch_currency()).items():
            self.add_error(name, refusal)
        if self.errors:
            return data
        try:
            self.provider_options = self.provider_config()
        except forms.ValidationError as exc:
            self.add_error(None, exc)
        return data

    def __init__(self, *args, dataset, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["systems"].queryset = dataset.systems.all()
        self.fields["instructions"].widget = forms.Textarea(attrs={"rows": 3})
        # This dataset's tests and those shared by other datasets' leads (hits.selectors).
        self.fields["qualification_test"].queryset = tests_for_batches(dataset)
        self.fields["qualification_test"].label_from_instance = lambda t: (
            t.name if t.dataset_id == dataset.pk else f"{t.name} (from {t.dataset.name})"
        )
        self.fields["allocation_judge_run"] = _judge_run_choice(self.fields["allocation_judge_run"], dataset)
        self.fields["provider"].choices = [(p, _provider_choice(p)) for p in available_providers()]
        # Each provider's option fields, from the one schema the API and the defaults also use.
        for name in available_providers():
            provider = provider_class(name)
            for option in provider.options:
                field = form_field(provider.label, option)
                field.provider = name  # the page shows only the chosen provider's fields
                self.fields[form_field_name(name, option)] = field


class TriageBatchForm(forms.Form):
    """The systems page's triage batch from a judge run: its confidence and assignments read by the
    batch form's and the API's own field specs (`hits.batch_fields`), so the limits and messages
    are theirs; the assignments left out take the batch's default."""

    confidence = batch_form_field("triage_confidence")
    assignments = batch_form_field("assignments")
    override = forms.BooleanField(required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        confidence, spec = self.fields["confidence"], FIELDS["triage_confidence"]
        confidence.label, confidence.required = "Confidence c", True
        confidence.error_messages["required"] = (
            f"Give the confidence at which the judge run decides, between {spec.min} and {spec.max} (the c the run "
            "suggests); when it suggests none, the judge should decide nothing: make no triage batch from it."
        )
        self.fields["assignments"].required = False

    def clean_assignments(self) -> int:
        value = self.cleaned_data.get("assignments")
        return FIELDS["assignments"].default if value is None else value

    def refusal(self) -> str:
        """The errors as one message for the page: each field's label, then its messages."""
        return "; ".join(f"{self.fields[f].label}: {' '.join(e)}" for f, e in self.errors.items())


_SPAN = re.compile(r"(?P<low>\d{1,9})(?:-(?P<high>\d{1,9})|\+)", re.ASCII)
MAX_BUCKET_ACUS = 100_000  # as the API's buckets


class BucketsForm(forms.Form):
    """Buckets as text, one per line: `min-max reward` (`21+ 0.55` for an open end)."""

    buckets = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}))

    def __init__(self, *args, currency: str = "USD", **kwargs):
        super().__init__(*args, **kwargs)
        self.currency = currency  # the batch's: the rewards are in it, and so are the messages

    def clean_buckets(self) -> list[Bucket]:
        result = []
        for n, line in enumerate(self.cleaned_data["buckets"].splitlines(), start=1):
            if not line.strip():
                continue
            parts = line.split()
            span = _SPAN.fullmatch(parts[0]) if len(parts) == 2 else None
            if span is None:
                raise forms.ValidationError(f"Line {n}: write it as “6-10 0.25” or “21+ 0.55”.")
            reward = parts[1]
            low, high = int(span["low"]), int(span["high"]) if span["high"] else None
            if max(low, high or 0) > MAX_BUCKET_ACUS:
                raise forms.ValidationError(f"Line {n}: ACU counts go up to {MAX_BUCKET_ACUS:,}.")
            try:
                amount = parse_money(
                    reward, what=f"Line {n}: the reward", minimum=CENT, maximum=MAX_REWARD, currency=self.currency
                )
            except MoneyError as exc:
                low, high = format_money(CENT, self.currency), format_money(MAX_REWARD, self.currency)
                raise forms.ValidationError(f"{exc} (a bucket pays {low} to {high} per HIT)") from None
            result.append(Bucket(low, high, amount))
        return result


class QualificationForm(forms.Form):
    name = forms.CharField(max_length=200, initial="ACU matching qualification")
    items = forms.IntegerField(min_value=1, max_value=50, initial=5, help_text="Gold summaries on one attempt's sheet.")
    pool = forms.IntegerField(
        min_value=1,
        max_value=200,
        required=False,
        help_text="Gold summaries each sheet is drawn from (default three times the sheet, or all the gold has), "
        "so one sheet learned tells little about the next.",
    )
    pass_score = forms.FloatField(
        min_value=0.05,
        max_value=1,
        initial=0.8,
        help_text="Balanced accuracy to pass: the mean of the shares right on present and on not-present facts.",
    )
    max_attempts = forms.IntegerField(min_value=1, max_value=10, initial=2)
    retry_after_hours = forms.IntegerField(min_value=0, initial=24)
    failure_budget = forms.IntegerField(
        min_value=0,
        required=False,
        initial=15,
        label="Failed attempts before the gold is redrawn",
        help_text="When this many attempts at one pool fail, you are alerted and a fresh pool is drawn (0: never).",
    )
    shared = forms.BooleanField(
        required=False,
        label="Offer to batches of other datasets",
        help_text="Their leads may then require it for a new batch (the items stay this dataset's summaries).",
    )

    def clean_failure_budget(self):
        value = self.cleaned_data.get("failure_budget")
        return FAILURE_BUDGET if value is None else value


class ExpertRoundForm(forms.Form):
    """Label N summaries as gold: an expert round (hits.services.expert checks the numbers)."""

    count = forms.IntegerField(label="Summaries", min_value=1, max_value=200, initial=10)
    experts = forms.IntegerField(
        label="Experts per summary",
        min_value=1,
        max_value=3,
        initial=2,
        help_text="Labels per summary; where experts disagree a lead decides on the review page before it is gold.",
    )
