"""Pages for datasets: home, dataset and document views, import and export.

Security behavior is stated per view; `role_required` sends anonymous users to the login
page and answers 403 to users without the role.
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation.forms import ImportDatasetForm
from annotation.importing import DatasetExists, DatasetImportError
from annotation.models import Dataset
from config import extras
from config.downloads import streamed_download
from config.limits import large_upload
from config.roles import AUTHOR, LEAD, WORKER, has_role, role_required
from hits import gold
from hits.forms import ExpertRoundForm
from hits.models import Batch
from hits.selectors import dataset_counts
from hits.services import expert
from hits.services.dataset_import import import_upload
from hits.stages import batch_stages
from scoring.results import onboarding
from scoring.results.exports.names import download_name
from scoring.results.exports.rose import rose_lines
from scoring.runs.judgments import labels_by_summary
from scoring.runs.summary_scores import summary_scores, system_scores

STAFF = (LEAD, AUTHOR)


@role_required(LEAD, AUTHOR, WORKER)
def home(request):
    """Security behavior: any signed-in user. Leads and authors see the datasets; workers
    see their work page (they must not see datasets, which hold the answers)."""
    if not has_role(request.user, LEAD, AUTHOR):
        return redirect("work")
    context = {"rows": onboarding.dataset_rows(), "home": True, "expert_rounds": _open_expert_rounds(request.user)}
    if has_role(request.user, LEAD):
        context["onboarding"] = onboarding.lead_steps()
    return render(request, "annotation/home.html", context)


def _open_expert_rounds(user) -> list[dict]:
    """Open expert rounds with summaries left, so that authors learn of them where they start."""
    rounds = Batch.objects.filter(kind=Batch.Kind.EXPERT, status=Batch.Status.PUBLISHED).select_related("dataset")
    shown = [{"batch": b, "progress": expert.round_progress(b, user)} for b in rounds.order_by("pk")[:10]]
    return [r for r in shown if r["progress"]["left"]]


@role_required(*STAFF)
def dataset_list(request):
    """Security behavior: leads and authors (workers never see datasets). The datasets with their counts."""
    return render(request, "annotation/home.html", {"rows": onboarding.dataset_rows(), "home": False})


@role_required(*STAFF)
def dataset_detail(request, dataset_id: int):
    """Security behavior: leads and authors; read-only. Authors see no labels, votes or scores of
    gold summaries (those with expert labels: the answers qualification tests and gold HITs are
    graded against), so no one who may also work in the crowd reads the key."""
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    page = Paginator(dataset.documents.select_related("reference").order_by("position"), 50).get_page(
        request.GET.get("page")
    )
    counts = dataset_counts([dataset.pk])[dataset.pk]
    gold_count = gold.gold_summary_count(dataset)
    # What an expert round could take now (only asked when the lead is offered one).
    labelable = expert.labelable_count(dataset) if gold_count < gold.GOLD_WANTED and has_role(request.user, LEAD) else 0
    return render(
        request,
        "annotation/dataset_detail.html",
        {
            "dataset": dataset,
            "counts": counts,
            "gold": gold_count,
            "gold_wanted": gold.GOLD_WANTED,
            "expert_rounds": [
                {"batch": b, "progress": expert.round_progress(b, request.user)}
                for b in dataset.batches.filter(kind=Batch.Kind.EXPERT, status=Batch.Status.PUBLISHED)
            ],
            "labelable": labelable,
            "expert_form": ExpertRoundForm(initial={"count": max(1, min(gold.GOLD_WANTED - gold_count, labelable))}),
            "page": page,
            "systems": system_scores(dataset),
            "rounds": _rounds(dataset),
            "extras_missing": extras.missing_features(),
            "extras_install": extras.INSTALL,
        },
    )


def _rounds(dataset) -> list[dict]:
    """The dataset's rounds, each with the stage the batch pages show (a machine judge's run: its status)."""
    rounds = list(dataset.batches.order_by("created_at", "pk"))
    stages = batch_stages(b for b in rounds if b.kind != Batch.Kind.MACHINE)
    return [{"batch": b, "stage": stages.get(b.pk)} for b in rounds]


@role_required(*STAFF)
def document_detail(request, dataset_id: int, document_id: int):
    """Security behavior: leads and authors; read-only. Authors see no labels, votes or scores of
    gold summaries (those with expert labels: the answers qualification tests and gold HITs are
    graded against), so no one who may also work in the crowd reads the key."""
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    document = get_object_or_404(dataset.documents.select_related("reference"), pk=document_id)
    reference = document.reference
    sentences = list(reference.sentences.prefetch_related("acus"))
    acus = [a for s in sentences for a in s.acus.all()]
    scores = summary_scores(dataset)
    labels = labels_by_summary(dataset)
    hidden = set() if has_role(request.user, LEAD) else gold.gold_summary_ids(dataset)
    summaries = []
    for summary in document.summaries.select_related("system").order_by("system__name"):
        if summary.pk in hidden:
            summaries.append({"summary": summary, "marks": [], "score": None, "gold": True})
            continue
        per_worker = labels.get(summary.pk, {})
        marks = []
        for acu in acus:
            votes = [w[acu.pk] for w in per_worker.values() if acu.pk in w]
            marks.append(
                {"acu": acu, "present": sum(votes), "total": len(votes), "majority": 2 * sum(votes) > len(votes)}
            )
        summaries.append({"summary": summary, "marks": marks, "score": scores.get(summary.pk)})
    return render(
        request,
        "annotation/document_detail.html",
        {"dataset": dataset, "document": document, "sentences": sentences, "acus": acus, "summaries": summaries},
    )


@large_upload
@role_required(LEAD)
@require_http_methods(["GET", "POST"])
def dataset_import(request):
    """Security behavior: leads only. A failed import shows its one error message and
    writes nothing."""
    form = ImportDatasetForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            summary = import_upload(
                data["file"], name=data["name"], fmt=data["format"], replace=data["replace"], created_by=request.user
            )
        except DatasetExists as exc:
            form.add_error(
                None, f"Nothing was imported: {exc}. Choose another name, or tick “Replace” to overwrite that dataset."
            )
        except DatasetImportError as exc:
            form.add_error(None, f"Nothing was imported. {exc}")
        else:
            messages.success(request, str(summary))
            return redirect("dataset_detail", dataset_id=summary.dataset_id)
    return render(request, "annotation/dataset_import.html", {"form": form}, status=400 if form.errors else 200)


@role_required(LEAD)
def dataset_export(request, dataset_id: int):
    """Security behavior: leads only; downloads the dataset with its labels as RoSE JSONL."""
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return streamed_download(rose_lines(dataset), download_name(dataset, None, "rose.jsonl"), kind="ndjson")
