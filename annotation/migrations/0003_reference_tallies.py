"""References per authoring state and dataset, kept by PostgreSQL triggers (annotation.tallies)."""

import django.db.models.deletion
from django.db import migrations, models


def install_and_count(apps, schema_editor):
    """Triggers first, then the counts (the trigger's table lock holds writers until commit)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    from annotation import tallies

    with schema_editor.connection.cursor() as cursor:
        for sql in tallies.install_sql():
            cursor.execute(sql)
    tallies.rebuild()


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    from annotation import tallies

    with schema_editor.connection.cursor() as cursor:
        for sql in tallies.uninstall_sql():
            cursor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0002_drafts"),
    ]

    operations = [
        migrations.CreateModel(
            name="ReferenceTally",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("status", models.CharField(max_length=20)),
                ("n", models.BigIntegerField(default=0)),
                (
                    "dataset",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="annotation.dataset",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["dataset", "status"], name="reference_tally_key")],
            },
        ),
        migrations.RunPython(install_and_count, uninstall),
    ]
