"""A triage round records the summaries its judge decided wholly (issue 43 review): their HITs are
not made, and without the record the round's scores took the judge's labels on every summary of
the dataset. Existing triage batches get the summaries that, at the batch's confidence, the run
decides wholly and that have no HIT of the batch, among its systems' (all systems when none): exact
for a batch over every approved reference (the usual case); for one over a subset of references the
same summaries the scores read before, no more."""

from django.db import migrations, models
from django.db.models import Count, Q


def record_decided(apps, schema_editor):
    Batch = apps.get_model("hits", "Batch")
    HIT = apps.get_model("hits", "HIT")
    MachineJudgment = apps.get_model("hits", "MachineJudgment")
    Summary = apps.get_model("annotation", "Summary")
    ACU = apps.get_model("annotation", "ACU")
    for batch in Batch.objects.filter(triage_run__isnull=False):
        c = batch.triage_confidence
        decided = dict(
            MachineJudgment.objects.filter(
                Q(probability__gte=c) | Q(probability__lte=1 - c), run_id=batch.triage_run_id
            )
            .values_list("summary_id")
            .annotate(n=Count("pk"))
            .order_by()
        )
        summaries = Summary.objects.filter(document__dataset_id=batch.dataset_id).exclude(
            pk__in=HIT.objects.filter(batch=batch).values("summary_id")
        )
        if batch.systems.exists():
            summaries = summaries.filter(system__in=batch.systems.all())
        acus = dict(
            ACU.objects.filter(reference__document__dataset_id=batch.dataset_id)
            .values_list("reference__document_id")
            .annotate(n=Count("pk"))
            .order_by()
        )
        wholly = [
            pk
            for pk, document in summaries.values_list("pk", "document_id")
            if acus.get(document) and decided.get(pk) == acus[document]
        ]
        batch.decided_summaries.add(*wholly)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_protocol_ratings"),
        ("hits", "0024_h43p_triage_allow_not_for_ranking"),
    ]

    operations = [
        migrations.AddField(
            model_name="batch",
            name="decided_summaries",
            field=models.ManyToManyField(blank=True, related_name="+", to="annotation.summary"),
        ),
        migrations.RunPython(record_decided, migrations.RunPython.noop),
    ]
