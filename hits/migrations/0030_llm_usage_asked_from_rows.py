"""An llm run stored before its `asked` count existed (hits 0028, before 0029's reuse across runs)
showed it as null until it resumed. It is derived here exactly from the run's stored answers:
such a run never borrowed (copying earlier runs' answers came with the count), so every
LLMAnswer row it has is a question it asked and got an answer for, stored in the same transaction
as what it cost, and rows go only with their run. The count is the run's rows without `from_run`
(all of them), as RunAnswers.begin counted it on resume. Runs from before 0028 recorded no usage
(`llm_usage` empty) and are left as they are: nothing of theirs is stored to count."""

from django.db import migrations
from django.db.models import Count


def count_asked(apps, schema_editor):
    JudgeRun = apps.get_model("hits", "JudgeRun")
    LLMAnswer = apps.get_model("hits", "LLMAnswer")
    uncounted = [r for r in JudgeRun.objects.exclude(llm_usage={}).only("llm_usage") if "asked" not in r.llm_usage]
    if not uncounted:
        return
    asked = dict(
        LLMAnswer.objects.filter(run_id__in=[r.pk for r in uncounted], from_run=None)
        .values_list("run_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for run in uncounted:
        JudgeRun.objects.filter(pk=run.pk).update(llm_usage={**run.llm_usage, "asked": asked.get(run.pk, 0)})


class Migration(migrations.Migration):
    dependencies = [
        ("hits", "0029_llm_answers_reused_across_runs"),
    ]

    operations = [migrations.RunPython(count_asked, migrations.RunPython.noop)]
