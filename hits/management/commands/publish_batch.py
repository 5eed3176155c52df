"""python manage.py publish_batch ID"""

from django.core.management.base import BaseCommand, CommandError

from config.commands import found
from hits.models import Batch
from hits.services.batches import BatchError, publish_batch


class Command(BaseCommand):
    help = "Publish a draft batch through its provider."

    def add_arguments(self, parser):
        parser.add_argument("batch_id", type=int)

    def handle(self, *args, **options):
        batch = found(Batch.objects, f"No batch {options['batch_id']}.", pk=options["batch_id"])
        try:
            batch = publish_batch(batch)
        except BatchError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"Published batch {batch.pk} ({batch.hits.count()} HITs) until {batch.expires_at:%Y-%m-%d %H:%M %Z}"
        )
