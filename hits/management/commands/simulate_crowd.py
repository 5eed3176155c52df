"""python manage.py simulate_crowd BATCH --workers N --accuracy P [--seed S]"""

from django.core.management.base import BaseCommand, CommandError

from config.commands import found, picked
from hits.models import Batch
from hits.services.simulate import simulate_crowd


class Command(BaseCommand):
    help = "Complete a published batch with N simulated in-house workers of the given accuracy."

    def add_arguments(self, parser):
        parser.add_argument("batch_id", type=int)
        parser.add_argument("--workers", type=int, required=True)
        parser.add_argument("--accuracy", type=float, required=True)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--spammers", type=int, default=0, help="extra workers who answer at random, fast")

    def handle(self, *args, **options):
        batch = found(Batch.objects, f"No batch {options['batch_id']}.", pk=options["batch_id"])
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1.")
        try:
            report = simulate_crowd(batch, **picked(options, "workers", "accuracy", "seed", "spammers"))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{report.workers} simulated workers ({report.qualified} qualified) submitted {report.submitted} "
            f"assignments in {report.seconds:.1f} s"
        )
