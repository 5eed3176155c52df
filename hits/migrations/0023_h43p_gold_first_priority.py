"""HIT.priority becomes twice the batch's priority (plus 1 on a `pairs` batch's gold HIT:
hits.services.batches.hit_priority), so the handout's order between batches is unchanged."""

from django.db import migrations
from django.db.models import F


def double(apps, schema_editor):
    apps.get_model("hits", "HIT").objects.exclude(priority=0).update(priority=F("priority") * 2)


def halve(apps, schema_editor):
    hits = apps.get_model("hits", "HIT").objects
    for value in range(-19, 20):  # the batch priorities -9..9, doubled, a gold HIT's +1 dropped
        if value:
            hits.filter(priority=value).update(priority=value // 2)


class Migration(migrations.Migration):
    dependencies = [("hits", "0022_h43p_pairs_allocation")]

    operations = [migrations.RunPython(double, halve)]
