"""A scores run's large parts move from its outputs to their own row (ScoringRunDetail).

Forward: every run whose outputs hold "summaries" gets a ScoringRunDetail row with them, its
"workers" table and its "length_scatter" sample, and loses them from its outputs; a run stored
before the "length_scatter" part gets it now (sampled as scoring.runs.services samples it, copied
here so the migration does not change with it).
Backward: the parts go back into the outputs and the copies the old code read are written again
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
    ScoringRunDetail = apps.get_model("scoring", "ScoringRunDetail")
    runs = ScoringRun.objects.filter(outputs__has_key="summaries").only("pk", "outputs")
    for run in runs.iterator(chunk_size=20):
        outputs = dict(run.outputs)
        summaries = outputs.pop("summaries") or {}
        scatter = outputs.pop("length_scatter", None)
        if scatter is None and summaries.get("ids"):
            scatter = _scatter_sample(summaries)
        ScoringRunDetail.objects.create(
            run_id=run.pk, summaries=summaries, workers=outputs.pop("workers", None) or {}, length_scatter=scatter or {}
        )
        ScoringRun.objects.filter(pk=run.pk).update(outputs=outputs)


def backward(apps, schema_editor):
    ScoringRun = apps.get_model("scoring", "ScoringRun")
    ScoringRunDetail = apps.get_model("scoring", "ScoringRunDetail")
    for stored in ScoringRunDetail.objects.iterator(chunk_size=20):
        run = ScoringRun.objects.only("pk", "outputs").get(pk=stored.run_id)
        digest = dict(run.outputs)
        if stored.workers:
            digest["workers"] = stored.workers
        if stored.length_scatter:
            digest["length_scatter"] = stored.length_scatter
        ScoringRun.objects.filter(pk=run.pk).update(
            outputs={**digest, "summaries": stored.summaries}, digest=digest, alpha=digest.get("alpha")
        )


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0006_scoringrun_pages"),
    ]

    operations = [
        migrations.CreateModel(
            name="ScoringRunDetail",
            fields=[
                (
                    "run",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="detail",
                        serialize=False,
                        to="scoring.scoringrun",
                    ),
                ),
                (
                    "summaries",
                    models.JSONField(
                        default=dict,
                        help_text="Per summary {ids, acu, normalized_acu, words}: lists in the same order (exports).",
                    ),
                ),
                (
                    "workers",
                    models.JSONField(default=dict, help_text="The workers table (workers page and API)."),
                ),
                (
                    "length_scatter",
                    models.JSONField(
                        default=dict, help_text="The summaries the systems page's scatter draws (sampled when stored)."
                    ),
                ),
            ],
        ),
        migrations.AlterField(
            model_name="scoringrun",
            name="outputs",
            field=models.JSONField(default=dict, help_text="The run's results (a scores run's large parts aside)."),
        ),
        migrations.RunPython(forward, backward),
    ]
