"""Stored scoring runs keep a workers table whose rows name their worker's provider; the expert
labels' rows said `imported` and now say `expert` (hits 0018), as a new run writes them."""

from django.db import migrations


def _rename(apps, old: str, new: str) -> None:
    ScoringRunDetail = apps.get_model("scoring", "ScoringRunDetail")
    changed = []
    for detail in ScoringRunDetail.objects.only("run_id", "workers").iterator(chunk_size=200):
        rows = (detail.workers or {}).get("rows") or []
        hits = [row for row in rows if isinstance(row, dict) and row.get("provider") == old]
        for row in hits:
            row["provider"] = new
        if hits:
            changed.append(detail)
    ScoringRunDetail.objects.bulk_update(changed, ["workers"], batch_size=200)


def rows_say_expert(apps, schema_editor):
    _rename(apps, "imported", "expert")


def rows_say_imported(apps, schema_editor):
    _rename(apps, "expert", "imported")


class Migration(migrations.Migration):
    dependencies = [
        ("hits", "0020_h41a_expert_provider"),
        ("scoring", "0009_recompute_request_task"),
    ]

    operations = [migrations.RunPython(rows_say_expert, rows_say_imported)]
