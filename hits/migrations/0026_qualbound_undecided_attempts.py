"""A qualification attempt may be not decided yet (too little evidence to fail the worker: no
attempt used, a fresh sheet at once) and keeps its per-class counts, which the next sheet adds to.
Attempts made before are decided. A Prolific submission holds one decided attempt (and any
undecided sheets before it)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("hits", "0025_h43r_decided_summaries"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="qualificationattempt",
            name="qualification_attempt_once_per_submission",
        ),
        migrations.AddField(
            model_name="qualificationattempt",
            name="absent",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name="qualificationattempt",
            name="absent_right",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name="qualificationattempt",
            name="decided",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.AddField(
            model_name="qualificationattempt",
            name="present",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name="qualificationattempt",
            name="present_right",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.AddConstraint(
            model_name="qualificationattempt",
            constraint=models.UniqueConstraint(
                condition=models.Q(models.Q(("external_id", ""), _negated=True), ("decided", True)),
                fields=("test", "external_id"),
                name="qualification_attempt_once_per_submission",
            ),
        ),
    ]
