"""python manage.py export_dataset NAME --format rose --output FILE"""

from django.core.management.base import BaseCommand

from annotation.models import Dataset
from config.commands import found, output_file
from hits.models import Batch
from scoring.results.exports.rose import export_rose


class Command(BaseCommand):
    help = "Export a dataset with its labels and ACU scores as RoSE JSONL."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--format", choices=["rose"], default="rose")
        parser.add_argument("--output", required=True, help="file to write ('-' for standard output)")
        parser.add_argument("--round", type=int, help="only the judgments of this batch or imported round")

    def handle(self, *args, **options):
        dataset = found(Dataset.objects, f"No dataset named {options['name']!r}.", name=options["name"])
        batch = None
        if options["round"] is not None:
            message = f"Dataset {dataset.name!r} has no round {options['round']}."
            batch = found(Batch.objects, message, pk=options["round"], dataset=dataset)
        if options["output"] == "-":
            export_rose(dataset, self.stdout, batch)
            return
        with output_file(options["output"]) as stream:
            count = export_rose(dataset, stream, batch)
        self.stderr.write(f"Wrote {count} documents of {dataset.name!r} to {options['output']}")
