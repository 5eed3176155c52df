"""Running counts per batch kept by PostgreSQL triggers (hits.tallies), counted from the rows."""

import django.db.models.deletion
from decimal import Decimal
from django.db import migrations, models


def install_and_count(apps, schema_editor):
    """Triggers first, then the counts: the trigger's lock on each table holds writers back
    until this migration commits, so nothing is counted twice or missed."""
    if schema_editor.connection.vendor != "postgresql":
        return
    from hits import tallies

    with schema_editor.connection.cursor() as cursor:
        tallies.install(cursor)
    tallies.rebuild()


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    from hits import tallies

    with schema_editor.connection.cursor() as cursor:
        tallies.uninstall(cursor)


class Migration(migrations.Migration):
    dependencies = [
        ("hits", "0005_handout_places_round_versions"),
    ]

    operations = [
        migrations.CreateModel(
            name="Tally",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("what", models.CharField(max_length=30)),
                ("minute", models.BigIntegerField(default=0)),
                ("n", models.BigIntegerField(default=0)),
                ("amount", models.DecimalField(decimal_places=2, default=Decimal("0.00"), max_digits=14)),
                (
                    "batch",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="hits.batch",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["batch", "what", "minute"], name="tally_key")],
            },
        ),
        migrations.RunPython(install_and_count, uninstall),
    ]
