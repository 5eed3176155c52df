"""The copies of a run's outputs go: alpha, digest and the two pages' text (read from the outputs).

A migration of its own: on PostgreSQL the rows 0007 writes leave deferred foreign-key checks
pending in its transaction, and a table with pending trigger events cannot be altered.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0007_scoringrunsummaries"),
    ]

    operations = [
        migrations.RemoveField(model_name="scoringrun", name="alpha"),
        migrations.RemoveField(model_name="scoringrun", name="digest"),
        migrations.RemoveField(model_name="scoringrun", name="systems_page"),
        migrations.RemoveField(model_name="scoringrun", name="workers_page"),
    ]
