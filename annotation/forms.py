"""Forms of the annotation pages."""

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat

from .importing import FORMATS


class ImportDatasetForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="A short unique name, e.g. realsumm or cnndm-test.")
    format = forms.ChoiceField(
        choices=[
            ("rose", "RoSE JSONL (.jsonl)"),
            ("pyramid", "Pyramid folder, zipped (.zip, .tar.gz)"),
            ("rose-protocols", "RoSE protocol comparison with its ratings (.json)"),
        ],
        initial="rose",
    )
    file = forms.FileField()
    replace = forms.BooleanField(required=False, help_text="Overwrite a dataset of the same name.")

    def clean_format(self):
        fmt = self.cleaned_data["format"]
        if fmt not in FORMATS:
            raise forms.ValidationError("Unknown format.")
        return fmt

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > settings.IMPORT_UPLOAD_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is {filesizeformat(upload.size)}; the limit is "
                f"{filesizeformat(settings.IMPORT_UPLOAD_MAX_BYTES)}. Use the import_dataset command for larger files."
            )
        return upload
