"""python manage.py export_dataset NAME --format rose --output FILE"""

from django.core.management.base import BaseCommand

from config.commands import output_file
from scoring.results.exports.rose import export_rose

from ._dataset import dataset_and_round


class Command(BaseCommand):
    help = "Export a dataset with its labels and ACU scores as RoSE JSONL."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--format", choices=["rose"], default="rose")
        parser.add_argument("--output", required=True, help="file to write ('-' for standard output)")
        parser.add_argument("--round", type=int, help="only the judgments of this batch or imported round")

    def handle(self, *args, **options):
        dataset, batch = dataset_and_round(options["name"], options["round"])  # a round with ACU labels
        if options["output"] == "-":
            export_rose(dataset, self.stdout, batch)
            return
        with output_file(options["output"]) as stream:
            count = export_rose(dataset, stream, batch)
        self.stderr.write(f"Wrote {count} documents of {dataset.name!r} to {options['output']}")
