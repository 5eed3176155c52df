"""python manage.py import_metric_scores NAME FILE"""

from django.core.management.base import BaseCommand, CommandError

from annotation.importing import DatasetImportError
from scoring.runs.metrics import import_metric_scores

from ._dataset import dataset_and_round


class Command(BaseCommand):
    help = "Load automatic metric scores (JSONL: one object per document, {metric: {system: score}})."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("file")

    def handle(self, *args, **options):
        dataset, _ = dataset_and_round(options["name"], None)
        try:
            result = import_metric_scores(dataset, options["file"])
        except DatasetImportError as exc:
            raise CommandError(f"Nothing was imported. {exc}") from None
        self.stdout.write(f"Imported {result['scores']} scores of {', '.join(result['metrics'])}")
