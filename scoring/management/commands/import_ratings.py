"""python manage.py import_ratings NAME FILE [--round-name NAME] [--replace]"""

from django.core.management.base import BaseCommand, CommandError

from annotation.importing import DatasetImportError
from annotation.importing.protocols import read_protocol_file
from annotation.models import Dataset
from annotation.services.ratings import import_ratings
from config.commands import found


class Command(BaseCommand):
    help = "Import a protocol file's ratings (RoSE's protocol-comparison layout) into a dataset as one rating round."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("path")
        parser.add_argument("--round-name", default="imported")
        parser.add_argument("--replace", action="store_true", help="replace a rating round of the same name")

    def handle(self, *args, **options):
        dataset = found(Dataset.objects, f"No dataset named {options['name']!r}.", name=options["name"])
        try:
            result = import_ratings(
                dataset, read_protocol_file(options["path"]), name=options["round_name"], replace=options["replace"]
            )
        except DatasetImportError as exc:
            raise CommandError(f"Nothing was imported: {exc}") from None
        self.stdout.write(str(result))
