"""python manage.py setup_demo: load the shipped demo dataset and (re)create demo logins.

Each run gives the demo users fresh random passwords and prints them, so no password
lives in the code or the repository.
"""

import secrets
from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.models import Dataset
from hits.services.dataset_import import import_dataset
from hits.services.people import create_user_with_role

DEMO_FILE = Path(__file__).resolve().parents[3] / "annotation" / "demo" / "realsumm-demo.rose.jsonl"
DEMO_NAME = "realsumm-demo"
AUTHORING_NAME = "realsumm-demo-to-write"
OPEN_BATCH = "Demo batch: open for demo-worker"
# Two authors, so that a reference one writes has someone to review it.
DEMO_USERS = [("demo-lead", "lead"), ("demo-author", "author"), ("demo-reviewer", "author"), ("demo-worker", "worker")]


class Command(BaseCommand):
    help = "Load the demo dataset (10 REALSumm documents x 4 systems) and create demo logins."

    def handle(self, *args, **options):
        if not Dataset.objects.filter(name=DEMO_NAME).exists():
            summary = import_dataset(DEMO_FILE, name=DEMO_NAME, fmt="rose")
            self.stdout.write(str(summary))
            self._demo_batches(Dataset.objects.get(name=DEMO_NAME))
        lines, users = [], {}
        for username, role in DEMO_USERS:
            password = secrets.token_urlsafe(9)
            users[username] = create_user_with_role(username=username, password=password, role=role)
            lines.append(f"  {role:<7} {username:<12} password: {password}")
        self._reserve_open_batch(users["demo-worker"])
        if not Dataset.objects.filter(name=AUTHORING_NAME).exists():
            self._authoring_demo(users["demo-author"], users["demo-reviewer"])
        self.stdout.write("Demo logins (new passwords on every start):\n" + "\n".join(lines))

    def _demo_batches(self, dataset):
        """A finished batch done by a simulated crowd (for the dashboards) and an open one
        for the demo worker."""
        from hits.batch_fields import BatchSpec
        from hits.services.batches import create_batch, publish_batch
        from hits.services.simulate import simulate_crowd

        systems = list(dataset.systems.order_by("name"))
        done = publish_batch(
            create_batch(dataset=dataset, spec=BatchSpec(name="Demo batch: simulated crowd"), systems=systems[:3])
        )
        simulate_crowd(done, workers=3, accuracy=0.9, spammers=1, seed=1)
        publish_batch(create_batch(dataset=dataset, spec=BatchSpec(name=OPEN_BATCH), systems=systems[3:]))
        self.stdout.write(
            "Demo batches: one completed by 4 simulated workers (one careless), one open for demo-worker."
        )

    def _reserve_open_batch(self, user):
        """The demo's open batch is demo-worker's alone: a lab's own workers (one who failed the lab's
        test included) never get a demo task. Also run on demo databases made before the rule."""
        from hits.models import Batch, Worker

        worker, _ = Worker.objects.get_or_create(
            provider=Worker.Provider.INHOUSE, external_id=user.username, defaults={"user": user}
        )
        for batch in Batch.objects.filter(dataset__name=DEMO_NAME, name=OPEN_BATCH):
            batch.reserved_for.set([worker])

    def _authoring_demo(self, author, reviewer):
        """Three references without ACUs, assigned to demo-author and proofread by demo-reviewer
        (proofreading goes only to a dataset's own authors)."""
        import json
        import tempfile

        from annotation.services.authoring import assign_references

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "to-write.jsonl"
            with open(path, "w", encoding="utf-8") as out:
                for line in DEMO_FILE.read_text(encoding="utf-8").splitlines()[:3]:
                    record = json.loads(line)
                    record["reference_acus"], record["annotations"] = [], {}
                    out.write(json.dumps(record) + "\n")
            import_dataset(path, name=AUTHORING_NAME, fmt="rose")
        assign_references(
            dataset=Dataset.objects.get(name=AUTHORING_NAME), author_ids=[author.pk], reviewer_id=reviewer.pk
        )
        self.stdout.write(f"{AUTHORING_NAME!r}: 3 references waiting for demo-author's ACUs.")
