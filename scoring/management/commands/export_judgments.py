"""python manage.py export_judgments NAME [--round ID] --output FILE"""

from django.core.management.base import BaseCommand

from config.commands import output_file
from scoring.results.exports.tables import write_judgments_csv

from ._dataset import dataset_and_round


class Command(BaseCommand):
    help = "Write raw judgments as CSV: worker,example_id,system,acu_index,label."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--round", type=int)
        parser.add_argument("--output", required=True)

    def handle(self, *args, **options):
        dataset, batch = dataset_and_round(options["name"], options["round"])
        with output_file(options["output"], newline="") as stream:
            count = write_judgments_csv(dataset, stream, batch)
        self.stderr.write(f"Wrote {count} judgments to {options['output']}")
