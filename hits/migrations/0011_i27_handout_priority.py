"""Fair handout: a lead-set priority per batch (copied on its HITs), each HIT's turn in its
batch's order (batches of equal priority take turns) and the partial index the pick reads.
Existing HITs get their turn from their order in the batch."""

import django.db.models.expressions
import django.db.models.functions.comparison
from django.db import migrations, models


def set_turns(apps, schema_editor):
    Batch = apps.get_model("hits", "Batch")
    HIT = apps.get_model("hits", "HIT")
    for batch_id in Batch.objects.filter(kind="crowd").values_list("pk", flat=True).iterator():
        ids = list(HIT.objects.filter(batch_id=batch_id).order_by("pk").values_list("pk", flat=True))
        hits = [HIT(pk=pk, turn=i / len(ids)) for i, pk in enumerate(ids)]
        HIT.objects.bulk_update(hits, ["turn"], batch_size=2000)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_reference_tallies"),
        ("hits", "0010_i29_allocation"),
    ]

    operations = [
        migrations.AddField(
            model_name="batch",
            name="priority",
            field=models.SmallIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name="hit",
            name="priority",
            field=models.SmallIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name="hit",
            name="turn",
            field=models.FloatField(db_default=0.0, default=0.0),
        ),
        migrations.RunPython(set_turns, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="hit",
            index=models.Index(
                models.OrderBy(models.F("priority"), descending=True),
                models.OrderBy(
                    django.db.models.expressions.CombinedExpression(
                        django.db.models.functions.comparison.Cast("open_places", models.FloatField()),
                        "/",
                        models.F("max_assignments"),
                    ),
                    descending=True,
                ),
                models.F("turn"),
                models.F("id"),
                condition=models.Q(("open_places__gt", 0)),
                name="hit_fair_pick",
            ),
        ),
    ]
