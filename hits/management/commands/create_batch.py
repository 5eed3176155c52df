"""python manage.py create_batch DATASET --provider inhouse --assignments 3 [--systems a,b,c]
[--protocol prior|ref_free|ref_based --rating-round NAME] (a rating batch, hits.ratings)"""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Dataset
from config.commands import found, picked
from hits.batch_fields import BatchSpec
from hits.money import format_money
from hits.provider_interface import money_currency
from hits.services.batches import BatchError, cost_estimate, create_batch

# The options that are settings of the batch's spec (hits.batch_fields), by the same names.
SPEC_OPTIONS = (
    "name",
    "provider",
    "assignments",
    "gold_share",
    "lifetime_hours",
    "assignment_minutes",
    "protocol",
    "rating_round",
)


class Command(BaseCommand):
    help = (
        "Create a draft batch (one HIT per system summary of the approved references; a rating batch: one HIT "
        "per document, its summaries rated 1-5); prints its id last."
    )

    def add_arguments(self, parser):
        parser.add_argument("dataset")
        parser.add_argument("--provider", default="inhouse")
        parser.add_argument("--assignments", type=int, default=3)
        parser.add_argument("--systems", help="comma-separated system names (default: all)")
        parser.add_argument("--name", default="")
        parser.add_argument("--qualification-test", type=int, help="id of a qualification test workers must pass")
        parser.add_argument("--gold-share", type=float, default=0.0)
        parser.add_argument("--lifetime-hours", type=float, default=168)
        parser.add_argument("--assignment-minutes", type=float, default=60)
        parser.add_argument(
            "--protocol", default="acu", help="acu (default), or a rating batch: prior, ref_free or ref_based"
        )
        parser.add_argument("--rating-round", default="", help="a rating batch's rating round (default: collected)")

    def handle(self, *args, **options):
        dataset = found(Dataset.objects, f"No dataset named {options['dataset']!r}.", name=options["dataset"])
        systems = None
        if options["systems"]:
            names = [n.strip() for n in options["systems"].split(",") if n.strip()]
            systems = list(dataset.systems.filter(name__in=names))
            unknown = set(names) - {s.name for s in systems}
            if unknown:
                raise CommandError(f"Unknown systems in {dataset.name!r}: {', '.join(sorted(unknown))}.")
        test = None
        if options["qualification_test"]:
            test = dataset.qualification_tests.filter(pk=options["qualification_test"]).first()
            if test is None:
                raise CommandError(
                    f"Dataset {dataset.name!r} has no qualification test {options['qualification_test']}."
                )
        try:
            spec = BatchSpec(**picked(options, *SPEC_OPTIONS))
            batch = create_batch(dataset=dataset, spec=spec, systems=systems, qualification_test=test)
        except BatchError as exc:
            raise CommandError(str(exc)) from None
        cost, currency = cost_estimate(batch), money_currency(batch)
        rewards, fees, total = (format_money(cost[k], currency) for k in ("rewards", "fees", "total"))
        self.stderr.write(
            f"Draft batch {batch.pk}: {cost['hits']} HITs, {cost['assignments']} assignments, "
            f"{rewards} rewards + {fees} fees = {total}"
        )
        self.stdout.write(str(batch.pk))
