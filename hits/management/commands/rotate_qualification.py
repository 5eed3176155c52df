"""python manage.py rotate_qualification TEST_ID [--seed S]"""

from django.core.management.base import BaseCommand, CommandError

from config.commands import found
from hits.models import QualificationTest
from hits.services.qualification import QualificationError, rotate_gold


class Command(BaseCommand):
    help = (
        "Draw a fresh sample of gold items for a qualification test (a new seed), so an answer sheet that "
        "leaked stops working; passes already earned stay."
    )

    def add_arguments(self, parser):
        parser.add_argument("test", type=int, help="the qualification test's id")
        parser.add_argument("--seed", type=int, help="a seed for the draw (default: a random one, stored)")

    def handle(self, *args, **options):
        test = found(QualificationTest.objects, f"No qualification test {options['test']}.", pk=options["test"])
        try:
            test = rotate_gold(test, seed=options["seed"])
        except QualificationError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Test {test.pk} ({test.name}): {test.items.count()} new gold items, seed {test.seed}.")
