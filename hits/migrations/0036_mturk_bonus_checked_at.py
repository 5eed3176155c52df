# The date MTurk was last asked about a bonus of unknown outcome (ListBonusPayments), shown to the
# lead beside the bonuses left unsettled (the ledger page) and written by the sync and the re-check.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("hits", "0035_prolific_bonus_settlements"),
    ]

    operations = [
        migrations.AddField(
            model_name="mturkbonus",
            name="checked_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
