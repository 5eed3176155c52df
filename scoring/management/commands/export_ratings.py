"""python manage.py export_ratings NAME [--rating-round ID] [--output FILE]"""

import json

from django.core.management.base import BaseCommand

from annotation.services.ratings import export_ratings
from config.commands import output_file

from ._dataset import dataset_and_rating_round


class Command(BaseCommand):
    help = "Write a rating round as a protocol file (RoSE's protocol-comparison layout, with each rater's scores)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--rating-round", type=int, help="a rating round's id (default: the latest)")
        parser.add_argument("--output", help="a file (default: standard output)")

    def handle(self, *args, **options):
        _, round_ = dataset_and_rating_round(options["name"], options["rating_round"])
        text = json.dumps(export_ratings(round_), indent=1)
        if options["output"]:
            with output_file(options["output"]) as out:
                out.write(text)
        else:
            self.stdout.write(text)
