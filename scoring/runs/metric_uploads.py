"""Metric files uploaded on the Metrics page, parsed by a task with its progress, not in the request
(issue 45 item 8): the page stores the file (`start`) and hands `scoring.tasks.import_metric_upload`
to the one dispatch (`config.dispatch`: a thread of the embedded server, or a Celery worker); the
task reads it through the same all-or-nothing import as the command (`scoring.runs.metrics`),
writing how many lines it has read as it goes, and the page shows that until it is done."""

import logging

from django.utils import timezone

from annotation.importing import DatasetImportError
from scoring.models import MetricUpload
from scoring.runs.metrics import import_metric_bytes

logger = logging.getLogger(__name__)


def start(dataset, data: bytes, name: str) -> MetricUpload:
    """Store an uploaded file for the task (its lines counted for the progress)."""
    return MetricUpload.objects.create(
        dataset=dataset, name=name[:255], data=data, size=len(data), lines=data.count(b"\n") + 1
    )


def latest(dataset) -> MetricUpload | None:
    return dataset.metric_uploads.order_by("-pk").defer("data").first()


def _finish(upload_id: int, status: str, message: str) -> None:
    MetricUpload.objects.filter(pk=upload_id).update(
        status=status, message=message, data=b"", finished_at=timezone.now()
    )


def run(upload_id: int) -> str:
    """The task's work: import the stored file; its outcome as the page says it. A rerun (a retried
    task) imports again: the import replaces the same metrics, all or nothing."""
    upload = MetricUpload.objects.filter(
        pk=upload_id, status__in=(MetricUpload.Status.QUEUED, MetricUpload.Status.RUNNING)
    ).first()
    if upload is None:
        return "This upload was imported already."
    MetricUpload.objects.filter(pk=upload.pk).update(status=MetricUpload.Status.RUNNING)

    def progress(line: int) -> None:
        MetricUpload.objects.filter(pk=upload.pk).update(lines_read=line)

    try:
        result = import_metric_bytes(upload.dataset, bytes(upload.data), upload.name, progress=progress)
    except DatasetImportError as exc:
        message = f"Nothing was imported. {exc}"
        _finish(upload.pk, MetricUpload.Status.FAILED, message)
        return message
    except Exception:
        logger.exception("metric upload %s failed", upload.pk)
        message = "Nothing was imported: the import failed unexpectedly (the error was logged)."
        _finish(upload.pk, MetricUpload.Status.FAILED, message)
        raise
    n = result["scores"]
    message = f"Imported {n} score{'' if n == 1 else 's'} of {', '.join(result['metrics'])}."
    MetricUpload.objects.filter(pk=upload.pk).update(lines_read=upload.lines)
    _finish(upload.pk, MetricUpload.Status.DONE, message)
    return message
