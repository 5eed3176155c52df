"""python manage.py export_ratings NAME [--rating-round ID] [--output FILE]"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Dataset
from annotation.services.ratings import export_ratings
from scoring.protocols.selectors import pick_round


class Command(BaseCommand):
    help = "Write a rating round as a protocol file (RoSE's protocol-comparison layout, with each rater's scores)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--rating-round", type=int, help="a rating round's id (default: the latest)")
        parser.add_argument("--output", help="a file (default: standard output)")

    def handle(self, *args, **options):
        dataset = Dataset.objects.filter(name=options["name"]).first()
        if dataset is None:
            raise CommandError(f"No dataset named {options['name']!r}.")
        round_ = pick_round(dataset, options["rating_round"])
        if round_ is None:
            raise CommandError(f"Dataset {dataset.name!r} has no such rating round.")
        text = json.dumps(export_ratings(round_), indent=1)
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8") as out:
                out.write(text)
        else:
            self.stdout.write(text)
