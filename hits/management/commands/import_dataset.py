"""python manage.py import_dataset PATH --name NAME [--format pyramid|rose] [--replace] [--alpha X]"""

from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS, DatasetExists, DatasetImportError
from hits.services.dataset_import import import_dataset


class Command(BaseCommand):
    help = "Import a dataset (a pyramid folder or a RoSE JSONL file) in one transaction."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--name", required=True)
        parser.add_argument("--format", choices=sorted(FORMATS), help="default: pyramid for a folder, rose for a file")
        parser.add_argument("--replace", action="store_true", help="overwrite a dataset of the same name")
        parser.add_argument(
            "--alpha", help="length-normalization strength (default 2 as RoSE's CNN/DM; XSum 5, SamSum 0.5)"
        )

    def handle(self, *args, **options):
        try:
            summary = import_dataset(
                options["path"],
                name=options["name"],
                fmt=options["format"],
                replace=options["replace"],
                alpha=options["alpha"],
            )
        except DatasetExists as exc:
            raise CommandError(f"Nothing was imported. {exc}; pass --replace to overwrite it") from None
        except DatasetImportError as exc:
            raise CommandError(f"Nothing was imported. {exc}") from None
        self.stdout.write(str(summary))
