"""Forms of the annotation pages."""
from django import forms

from .importing import FORMATS


class ImportDatasetForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="A short unique name, e.g. realsumm or cnndm-test.")
    format = forms.ChoiceField(
        choices=[("rose", "RoSE JSONL (.jsonl)"), ("pyramid", "Pyramid folder, zipped (.zip, .tar.gz)")],
        initial="rose",
    )
    file = forms.FileField()
    replace = forms.BooleanField(required=False, help_text="Overwrite a dataset of the same name.")

    def clean_format(self):
        fmt = self.cleaned_data["format"]
        if fmt not in FORMATS:
            raise forms.ValidationError("Unknown format.")
        return fmt
