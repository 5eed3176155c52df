"""Open places per HIT (with a partial index of HITs that have one) and judgment versions per round."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce, Greatest


def count_open_places(apps, schema_editor):
    """Existing HITs: max_assignments minus their active assignments."""
    HIT = apps.get_model("hits", "HIT")
    Assignment = apps.get_model("hits", "Assignment")
    active = (
        Assignment.objects.filter(hit_id=OuterRef("pk"), status__in=["assigned", "submitted", "approved"])
        .order_by()
        .values("hit_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    HIT.objects.update(
        open_places=Greatest(
            F("max_assignments") - Coalesce(Subquery(active, output_field=IntegerField()), Value(0)), Value(0)
        )
    )


def expire_extra_open_assignments(apps, schema_editor):
    """Before the one-open-assignment constraint: keep each worker's newest open in-house one."""
    Assignment = apps.get_model("hits", "Assignment")
    keep = {}
    for pk, worker_id in (
        Assignment.objects.filter(status="assigned", external_id="")
        .order_by("created_at", "pk")
        .values_list("pk", "worker_id")
    ):
        if worker_id in keep:
            Assignment.objects.filter(pk=keep[worker_id]).update(status="expired")
        keep[worker_id] = pk


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0001_initial"),
        ("hits", "0004_machine_rounds"),
    ]

    operations = [
        migrations.CreateModel(
            name="RoundVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "round_id",
                    models.PositiveIntegerField(default=0, help_text="The round's batch id; 0 for the whole dataset."),
                ),
                ("stripe", models.PositiveSmallIntegerField(default=0)),
                ("version", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.AddField(
            model_name="hit",
            name="open_places",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.RunPython(expire_extra_open_assignments, migrations.RunPython.noop),
        migrations.RunPython(count_open_places, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="assignment",
            constraint=models.UniqueConstraint(
                condition=models.Q(("external_id", ""), ("status", "assigned")),
                fields=("worker",),
                name="assignment_one_open_inhouse",
            ),
        ),
        migrations.AddIndex(
            model_name="hit",
            index=models.Index(
                models.F("batch"),
                models.OrderBy(models.F("open_places"), descending=True),
                models.F("id"),
                condition=models.Q(("open_places__gt", 0)),
                name="hit_open_places",
            ),
        ),
        migrations.AddField(
            model_name="roundversion",
            name="dataset",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="round_versions", to="annotation.dataset"
            ),
        ),
        migrations.AddConstraint(
            model_name="roundversion",
            constraint=models.UniqueConstraint(fields=("dataset", "round_id", "stripe"), name="round_version_unique"),
        ),
    ]
