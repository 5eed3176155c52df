"""Forms of the annotation pages."""

from django import forms

from .importing import FORMATS
from .uploads import FORMAT_CHOICES, upload_too_large


class ImportDatasetForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="A short unique name, e.g. realsumm or cnndm-test.")
    format = forms.ChoiceField(choices=FORMAT_CHOICES, initial="rose")
    file = forms.FileField()
    replace = forms.BooleanField(required=False, help_text="Overwrite a dataset of the same name.")

    def clean_format(self):
        fmt = self.cleaned_data["format"]
        if fmt not in FORMATS:
            raise forms.ValidationError("Unknown format.")
        return fmt

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if refusal := upload_too_large(upload, "import_dataset"):
            raise forms.ValidationError(refusal)
        return upload
