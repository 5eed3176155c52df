"""Automatic metric scores: import from JSONL (one object per document) in one transaction."""

import json
from pathlib import Path

from django.db import transaction

from annotation.importing import DatasetImportError
from scoring.models import MetricScore


def import_metric_scores(dataset, path) -> dict:
    """Each line: {"example_id": ID, METRIC: {SYSTEM: score, ...}, ...} (or the metrics under
    a "metrics" key). Replaces earlier scores of the same metrics; all or nothing."""
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise DatasetImportError("file is missing", str(path))
    documents = dict(dataset.documents.values_list("external_id", "pk"))
    systems = dict(dataset.systems.values_list("name", "pk"))
    rows, metrics = [], set()
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError:
        raise DatasetImportError("the file is not UTF-8 text", name) from None
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DatasetImportError(f"invalid JSON: {exc.msg}", name, lineno) from None
        if not isinstance(obj, dict) or "example_id" not in obj:
            raise DatasetImportError("each line needs an object with example_id", name, lineno)
        document = documents.get(str(obj["example_id"]))
        if document is None:
            raise DatasetImportError(f"unknown example_id {obj['example_id']!r}", name, lineno)
        per_metric = (
            obj.get("metrics")
            if isinstance(obj.get("metrics"), dict)
            else {k: v for k, v in obj.items() if k != "example_id"}
        )
        for metric, by_system in per_metric.items():
            if not isinstance(by_system, dict):
                raise DatasetImportError(f"{metric!r} must map systems to scores", name, lineno)
            for system, value in by_system.items():
                if system not in systems:
                    raise DatasetImportError(f"unknown system {system!r} under {metric!r}", name, lineno)
                if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
                    raise DatasetImportError(f"score of {system!r} under {metric!r} is not a number", name, lineno)
                rows.append(
                    MetricScore(
                        dataset=dataset,
                        document_id=document,
                        system_id=systems[system],
                        metric=str(metric),
                        value=float(value),
                    )
                )
                metrics.add(str(metric))
    if not rows:
        raise DatasetImportError("no metric scores", name)
    with transaction.atomic():
        MetricScore.objects.filter(dataset=dataset, metric__in=metrics).delete()
        MetricScore.objects.bulk_create(rows, batch_size=5000)
    return {"metrics": sorted(metrics), "scores": len(rows)}
