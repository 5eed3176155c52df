# When an assignment was released unanswered before its deadline (given back by its worker, taken
# back by a block): it reads "Taken back", never "Expired", once that deadline has passed.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("hits", "0036_mturk_bonus_checked_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="released_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
