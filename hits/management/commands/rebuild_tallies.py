"""python manage.py rebuild_tallies [--batch ID ...]: recount the batches' running counts from their rows."""

from django.core.management.base import BaseCommand, CommandError

from annotation import tallies as reference_tallies
from hits import tallies
from hits.models import Batch


class Command(BaseCommand):
    help = (
        "Recount the running counts the dashboards read (HITs, assignments by status, submissions per minute,"
        " ledger sums; without --batch also the references per authoring state) from the rows, e.g. after writing rows with the database's triggers switched off."
        " Holds writes to HITs, assignments and the ledger while it runs."
    )

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, action="append", help="only this batch (repeatable)")

    def handle(self, *args, **options):
        ids = options["batch"]
        if ids:
            missing = sorted(set(ids) - set(Batch.objects.filter(pk__in=ids).values_list("pk", flat=True)))
            if missing:
                raise CommandError(f"No batch with id {', '.join(map(str, missing))}.")
        if not tallies.available():
            self.stdout.write("Nothing to recount: running counts are kept on PostgreSQL; this database counts rows.")
            return
        written = tallies.rebuild(ids)
        if not ids:  # and the datasets' references per authoring state
            written += reference_tallies.rebuild()
        self.stdout.write(
            f"Recounted {'batches ' + ', '.join(map(str, ids)) if ids else 'every batch'}: {written} rows."
        )
