"""The Protocols page of a dataset (RoSE §5): import and export of rating rounds, and the comparison
of Prior, Ref-free and Ref-based ratings with the normalized ACU score.

Security behavior: leads only (role_required(LEAD)) on every view; every change is a POST. The
page computes a round's figures once (scoring.protocols.cached) and the power analysis only when
a lead asks for it."""

import json

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_POST

from annotation.importing import DatasetImportError
from annotation.importing.protocols import read_protocol_file
from annotation.models import Dataset, RatingRound
from annotation.services.ratings import export_ratings, import_ratings
from annotation.uploads import upload_too_large, uploaded_dataset_path
from config.limits import large_upload
from config.roles import LEAD, role_required
from scoring.protocols import cached
from scoring.protocols.selectors import pick_round, rounds
from scoring.results import charts, dashboard
from scoring.runs.services import SMALL_SAMPLE


class RatingImportForm(forms.Form):
    file = forms.FileField(help_text="A protocol file (.json), as RoSE's protocol-comparison.json or an export.")
    name = forms.CharField(max_length=100, initial="imported", help_text="The rating round's name.")
    replace = forms.BooleanField(required=False, help_text="Replace a round of the same name.")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if refusal := upload_too_large(upload, "import_ratings"):
            raise forms.ValidationError(refusal)
        return upload


def _round(request, dataset):
    asked = request.GET.get("rating_round") or request.POST.get("rating_round")
    if asked and not (asked.isdecimal() and len(asked) < 19):
        raise Http404("No such rating round.")
    round_ = pick_round(dataset, int(asked) if asked else None)
    if asked and round_ is None:
        raise Http404("No such rating round in this dataset.")
    return round_


def _matrix(report: dict, level: str) -> dict:
    """The pairwise correlations of a level as a square table: rows and columns the measures."""
    names = [n for n in report["labels"] if n != "length"]
    cells = {(e["a"], e["b"]): e for e in report["correlations"][level]}
    cells |= {(b, a): e for (a, b), e in list(cells.items())}
    return {
        "columns": [report["labels"][n] for n in names],
        "rows": [{"label": report["labels"][a], "cells": [cells.get((a, b)) for b in names]} for a in names],
    }


def _rankings(report: dict) -> dict:
    names = list(report["rankings"])
    depth = max((len(r) for r in report["rankings"].values()), default=0)
    return {
        # each protocol's label and the documents behind its ranking (its complete documents)
        "headers": [
            (report["labels"][n], report["rankings"][n][0]["documents"] if report["rankings"][n] else 0) for n in names
        ],
        "rows": [
            {
                "rank": k + 1,
                "cells": [report["rankings"][n][k] if k < len(report["rankings"][n]) else None for n in names],
            }
            for k in range(depth)
        ],
    }


def _power_charts(report: dict, power: dict | None) -> list[dict]:
    if not power:
        return []
    return [
        {
            "name": name,
            "chart_id": f"power-{name}",
            "label": report["labels"][name],
            "chart": charts.power_curve(result, f"{report['labels'][name]} score"),
            "result": result,
        }
        for name, result in power.items()
        if result["buckets"]
    ]


def _power_too_few(report: dict, power: dict | None) -> list[dict]:
    """The protocols given no power: fewer complete documents than the dashboards' minimum, or a
    single system rated (a stored run from before ``systems`` was kept reads as two or more)."""
    return [
        {
            "label": report["labels"][name],
            "documents": result["documents"],
            "min": result.get("min_documents"),
            "systems": result.get("systems", 2),
        }
        for name, result in (power or {}).items()
        if not result["buckets"]
    ]


@role_required(LEAD)
def protocols(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    round_ = _round(request, dataset)
    context = {
        "dataset": dataset,
        "batch": None,
        "section": "protocols",
        "rounds": dashboard.round_choices(dataset),
        "round_query": "",
        "rating_rounds": rounds(dataset),
        "rating_round": round_,
        "form": RatingImportForm(),
    }
    if round_ is not None and cached.too_large(round_):
        context["too_large"] = cached.MAX_RATINGS
    elif round_ is not None:
        report = cached.figures(round_)
        power = cached.power(round_)
        context |= {
            "report": report,
            "matrices": [(level, _matrix(report, level)) for level in ("summary", "system")],
            "length_rows": [
                {"label": report["labels"][n], "cells": [report["length"][lv][n] for lv in ("summary", "system")]}
                for n in report["length"]["summary"]
            ],
            "rankings": _rankings(report),
            "small_threshold": SMALL_SAMPLE,
            "power": power,
            "power_charts": _power_charts(report, power),
            "power_too_few": _power_too_few(report, power),
        }
    return render(request, "scoring/protocols.html", context)


def _back(dataset, round_id=None):
    url = reverse("dashboard_protocols", args=[dataset.pk])
    return redirect(f"{url}?rating_round={round_id}" if round_id else url)


@require_POST
@role_required(LEAD)
def protocols_power(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    round_ = _round(request, dataset)
    if round_ is None:
        raise Http404("No rating round.")
    if cached.too_large(round_):
        messages.error(request, f"Over {cached.MAX_RATINGS} ratings: use protocol_report {dataset.name} --power.")
    else:
        cached.power(round_, compute=True, store=True)
    return _back(dataset, round_.pk)


@large_upload(command="import_ratings")
@require_POST
@role_required(LEAD)
def protocols_import(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    form = RatingImportForm(request.POST, request.FILES)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return _back(dataset)
    try:
        with uploaded_dataset_path(form.cleaned_data["file"], "rose-protocols") as path:
            result = import_ratings(
                dataset,
                read_protocol_file(path),
                name=form.cleaned_data["name"],
                replace=form.cleaned_data["replace"],
                created_by=request.user,
            )
    except DatasetImportError as exc:
        messages.error(request, f"Nothing was imported: {exc}")
        return _back(dataset)
    messages.success(request, str(result))
    return _back(dataset, result.round_id)


@role_required(LEAD)
def protocols_export(request, dataset_id: int, round_id: int):
    round_ = RatingRound.objects.filter(dataset_id=dataset_id, pk=round_id).select_related("dataset").first()
    if round_ is None:
        raise Http404("No such rating round in this dataset.")
    response = HttpResponse(json.dumps(export_ratings(round_), indent=1), content_type="application/json")
    response["Content-Disposition"] = content_disposition_header(
        as_attachment=True, filename=f"{round_.dataset.name}-{round_.name}-ratings.json"
    )
    return response
