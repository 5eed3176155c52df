"""A scores run's per-summary values move from its outputs to their own row (ScoringRunSummaries).

Forward: every run whose outputs hold "summaries" gets a ScoringRunSummaries row with them and
loses them from its outputs; a run stored before the "length_scatter" part gets it now (sampled
as scoring.runs.services samples it, copied here so the migration does not change with it).
Backward: the values go back into the outputs and the copies the old code read are written again
(the alpha and digest columns, re-added by reversing 0008; the page columns stay empty, which the
old code read as "not stored").
"""

import django.db.models.deletion
from django.db import migrations, models

SCATTER_SAMPLE, SCATTER_DIGITS = 1500, 4


def _scatter_sample(summaries: dict) -> dict:
    words = summaries.get("words", [])
    step = max(1, len(words) // SCATTER_SAMPLE)

    def rounded(values):
        return [None if v is None else round(v, SCATTER_DIGITS) for v in values[::step]]

    return {
        "words": list(words[::step]),
        "acu": rounded(summaries.get("acu", [])),
        "normalized_acu": rounded(summaries.get("normalized_acu", [])),
    }


def forward(apps, schema_editor):
    ScoringRun = apps.get_model("scoring", "ScoringRun")
    ScoringRunSummaries = apps.get_model("scoring", "ScoringRunSummaries")
    runs = ScoringRun.objects.filter(outputs__has_key="summaries").only("pk", "outputs")
    for run in runs.iterator(chunk_size=20):
        outputs = dict(run.outputs)
        summaries = outputs.pop("summaries") or {}
        if "length_scatter" not in outputs and summaries.get("ids"):
            outputs["length_scatter"] = _scatter_sample(summaries)
        ScoringRunSummaries.objects.create(run_id=run.pk, values=summaries)
        ScoringRun.objects.filter(pk=run.pk).update(outputs=outputs)


def backward(apps, schema_editor):
    ScoringRun = apps.get_model("scoring", "ScoringRun")
    ScoringRunSummaries = apps.get_model("scoring", "ScoringRunSummaries")
    for stored in ScoringRunSummaries.objects.iterator(chunk_size=20):
        run = ScoringRun.objects.only("pk", "outputs").get(pk=stored.run_id)
        digest = dict(run.outputs)
        ScoringRun.objects.filter(pk=run.pk).update(
            outputs={**digest, "summaries": stored.values}, digest=digest, alpha=digest.get("alpha")
        )


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0006_scoringrun_pages"),
    ]

    operations = [
        migrations.CreateModel(
            name="ScoringRunSummaries",
            fields=[
                (
                    "run",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="per_summary",
                        serialize=False,
                        to="scoring.scoringrun",
                    ),
                ),
                (
                    "values",
                    models.JSONField(
                        default=dict, help_text="{ids, acu, normalized_acu, words}: lists in the same order."
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "scoring run summaries",
            },
        ),
        migrations.AlterField(
            model_name="scoringrun",
            name="outputs",
            field=models.JSONField(
                default=dict, help_text="The run's results (a scores run's per-summary values aside)."
            ),
        ),
        migrations.RunPython(forward, backward),
    ]
