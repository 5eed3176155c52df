"""Forms of the lead's batch pages."""
from decimal import Decimal

from django import forms

from annotation.models import System

from .batches import MAX_ASSIGNMENTS
from .models import QualificationTest
from .money import Bucket
from .providers import available_providers


class BatchForm(forms.Form):
    name = forms.CharField(max_length=200, required=False, help_text="Optional; a dated name is used otherwise.")
    provider = forms.ChoiceField(choices=())
    assignments = forms.IntegerField(min_value=1, max_value=MAX_ASSIGNMENTS, initial=3, label="Assignments per HIT")
    systems = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(), required=False, widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: all systems.",
    )
    lifetime_hours = forms.FloatField(min_value=0.1, initial=168, label="Lifetime (hours)")
    assignment_minutes = forms.FloatField(min_value=1, initial=60, label="Assignment duration (minutes)")
    auto_approve_hours = forms.FloatField(min_value=0, initial=72, label="Auto-approve after (hours)")
    qualification_test = forms.ModelChoiceField(queryset=QualificationTest.objects.none(), required=False)
    gold_share = forms.FloatField(min_value=0, max_value=0.5, initial=0, help_text="Share of HITs with known answers.")
    budget = forms.DecimalField(min_value=0, decimal_places=2, required=False, label="Budget ($)")
    # MTurk only
    mturk_sandbox = forms.BooleanField(required=False, initial=True, label="MTurk: use the sandbox")
    mturk_locales = forms.CharField(required=False, initial="US,GB", label="MTurk: worker countries",
                                    help_text="Comma-separated ISO codes; empty for any country.")
    mturk_min_approval_rate = forms.IntegerField(min_value=0, max_value=100, initial=98, label="MTurk: minimum approval rate (%)")
    mturk_min_approved_hits = forms.IntegerField(min_value=0, initial=10000, label="MTurk: minimum approved HITs")
    mturk_qualification_mode = forms.ChoiceField(
        choices=[("mturk_test", "MTurk grades the test (QuestionForm + AnswerKey)"),
                 ("our_pages", "Workers take the test on our pages; we grant the qualification")],
        initial="mturk_test", label="MTurk: qualification test",
    )

    # Prolific only
    prolific_hits_per_session = forms.IntegerField(
        min_value=1, max_value=50, required=False, label="Prolific: HITs per session (K)",
        help_text="Empty: as many as fit the session minutes below.")
    prolific_session_minutes = forms.IntegerField(min_value=2, max_value=120, initial=10, required=False,
                                                  label="Prolific: session minutes")
    prolific_currency = forms.ChoiceField(choices=[("USD", "USD"), ("GBP", "GBP")], initial="USD", required=False,
                                          label="Prolific: account currency")
    prolific_min_approval_rate = forms.IntegerField(min_value=0, max_value=100, initial=95, required=False,
                                                    label="Prolific: minimum approval rate (%)")
    prolific_languages = forms.CharField(required=False, initial="19", label="Prolific: fluent-languages choice ids",
                                         help_text="Comma-separated ids from Prolific's filter list (19: English).")
    prolific_devices = forms.MultipleChoiceField(
        choices=[("desktop", "Desktop"), ("tablet", "Tablet"), ("mobile", "Mobile")], initial=["desktop"],
        widget=forms.CheckboxSelectMultiple, required=False, label="Prolific: devices")
    prolific_workspace_id = forms.CharField(required=False, label="Prolific: workspace id",
                                            help_text="Needed with a qualification test (its participant group).")
    prolific_project_id = forms.CharField(required=False, label="Prolific: project id")
    prolific_group_id = forms.CharField(required=False, label="Prolific: participant group id")
    prolific_group_mode = forms.ChoiceField(choices=[("allow", "Allow-list"), ("block", "Block-list")], initial="allow",
                                            required=False, label="Prolific: use the group as")

    def clean_prolific_languages(self):
        ids = [c.strip() for c in self.cleaned_data["prolific_languages"].split(",") if c.strip()]
        if any(not c.isalnum() for c in ids):
            raise forms.ValidationError("Write Prolific's choice ids separated by commas, e.g. 19.")
        return ids

    def clean_mturk_locales(self):
        codes = [c.strip().upper() for c in self.cleaned_data["mturk_locales"].split(",") if c.strip()]
        for code in codes:
            if len(code) != 2 or not code.isalpha():
                raise forms.ValidationError(f"{code!r} is not a two-letter country code.")
        return codes

    def provider_config(self) -> dict:
        data = self.cleaned_data
        if data["provider"] == "prolific":
            return {
                "hits_per_session": data["prolific_hits_per_session"],
                "session_minutes": data["prolific_session_minutes"] or 10,
                "currency": data["prolific_currency"] or "USD",
                "min_approval_rate": data["prolific_min_approval_rate"] if data["prolific_min_approval_rate"] is not None else 95,
                "languages": data["prolific_languages"],
                "device_compatibility": data["prolific_devices"] or ["desktop"],
                "workspace_id": data["prolific_workspace_id"].strip(),
                "project_id": data["prolific_project_id"].strip(),
                "participant_group_id": data["prolific_group_id"].strip(),
                "participant_group_mode": data["prolific_group_mode"] or "allow",
            }
        if data["provider"] != "mturk":
            return {}
        return {
            "sandbox": data["mturk_sandbox"],
            "locales": data["mturk_locales"],
            "min_approval_rate": data["mturk_min_approval_rate"],
            "min_approved_hits": data["mturk_min_approved_hits"],
            "qualification_mode": data["mturk_qualification_mode"],
        }

    def __init__(self, *args, dataset, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["systems"].queryset = dataset.systems.all()
        self.fields["qualification_test"].queryset = dataset.qualification_tests.all()
        self.fields["provider"].choices = [(p, p) for p in available_providers()]


class BucketsForm(forms.Form):
    """Buckets as text, one per line: `min-max reward` (`21+ 0.55` for an open end)."""

    buckets = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}))

    def clean_buckets(self) -> list[Bucket]:
        result = []
        for n, line in enumerate(self.cleaned_data["buckets"].splitlines(), start=1):
            if not line.strip():
                continue
            try:
                span, reward = line.split()
                if span.endswith("+"):
                    low, high = int(span[:-1]), None
                else:
                    low_text, high_text = span.split("-")
                    low, high = int(low_text), int(high_text)
                result.append(Bucket(low, high, Decimal(reward.lstrip("$")).quantize(Decimal("0.01"))))
            except (ValueError, ArithmeticError):
                raise forms.ValidationError(f"Line {n}: write it as `6-10 0.25` or `21+ 0.55`.") from None
        return result


class QualificationForm(forms.Form):
    name = forms.CharField(max_length=200, initial="ACU matching qualification")
    items = forms.IntegerField(min_value=1, max_value=50, initial=5, help_text="Gold summaries in the test.")
    pass_score = forms.FloatField(min_value=0.05, max_value=1, initial=0.8, help_text="Share of ACUs right to pass.")
    max_attempts = forms.IntegerField(min_value=1, max_value=10, initial=2)
    retry_after_hours = forms.IntegerField(min_value=0, initial=24)
