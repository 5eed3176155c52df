"""python manage.py setup_demo: load the shipped demo dataset and (re)create demo logins.

Each run gives the demo users fresh random passwords and prints them, so no password
lives in the code or the repository.
"""
import secrets
from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.importing import import_dataset
from annotation.models import Dataset
from annotation.services import create_user_with_role

DEMO_FILE = Path(__file__).resolve().parents[2] / "demo" / "realsumm-demo.rose.jsonl"
DEMO_NAME = "realsumm-demo"
DEMO_USERS = [("demo-lead", "lead"), ("demo-author", "author"), ("demo-worker", "worker")]


class Command(BaseCommand):
    help = "Load the demo dataset (10 REALSumm documents x 4 systems) and create demo logins."

    def handle(self, *args, **options):
        if not Dataset.objects.filter(name=DEMO_NAME).exists():
            summary = import_dataset(DEMO_FILE, name=DEMO_NAME, fmt="rose")
            self.stdout.write(str(summary))
        lines = []
        for username, role in DEMO_USERS:
            password = secrets.token_urlsafe(9)
            create_user_with_role(username=username, password=password, role=role)
            lines.append(f"  {role:<7} {username:<12} password: {password}")
        self.stdout.write("Demo logins (new passwords on every start):\n" + "\n".join(lines))
