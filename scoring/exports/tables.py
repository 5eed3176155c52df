"""CSV exports: raw judgments and aggregated scores."""

import csv

from annotation.models import ACU
from scoring.judgments import counted_judgments

JUDGMENT_COLUMNS = ["worker", "example_id", "system", "acu_index", "label"]


def acu_indexes(dataset) -> dict[int, int]:
    """Each ACU's index within its reference, from 0, in sentence then position order."""
    index, last_reference, i = {}, None, 0
    for acu_id, reference_id in (
        ACU.objects.filter(reference__document__dataset=dataset)
        .order_by("reference_id", "sentence__position", "position")
        .values_list("pk", "reference_id")
    ):
        i = 0 if reference_id != last_reference else i + 1
        last_reference = reference_id
        index[acu_id] = i
    return index


class _Lines:
    """A file-like sink for csv.writer that keeps what was written until taken."""

    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)

    def take(self) -> str:
        text, self.parts = "".join(self.parts), []
        return text


def iter_judgments_csv(dataset, batch=None, rows_per_chunk: int = 20000):
    """The judgments CSV in chunks of text, read through a server-side cursor: a download
    streams from the first row on, with flat memory."""
    sink = _Lines()
    writer = csv.writer(sink)
    writer.writerow(JUDGMENT_COLUMNS)
    for n, row in enumerate(_judgment_rows(dataset, batch), 1):
        writer.writerow(row)
        if n % rows_per_chunk == 0:
            yield sink.take()
    yield sink.take()


def _judgment_rows(dataset, batch=None):
    indexes = acu_indexes(dataset)
    rows = (
        counted_judgments(dataset, batch)
        .values_list(
            "assignment__worker__provider",
            "assignment__worker__external_id",
            "assignment__hit__summary__document__external_id",
            "assignment__hit__summary__system__name",
            "acu_id",
            "present",
        )
        .order_by(
            "assignment__hit__summary__document__position",
            "assignment__hit__summary__system__name",
            "assignment__worker_id",
            "acu_id",
        )
    )
    for provider, worker, example, system, acu_id, present in rows.iterator(chunk_size=20000):
        yield [f"{provider}:{worker}", example, system, indexes[acu_id], int(present)]


def write_judgments_csv(dataset, stream, batch=None) -> int:
    writer = csv.writer(stream)
    writer.writerow(JUDGMENT_COLUMNS)
    count = 0
    for row in _judgment_rows(dataset, batch):
        writer.writerow(row)
        count += 1
    return count


def write_scores_csv(run, stream) -> int:
    """Aggregated per-summary scores of a scoring run."""
    from annotation.models import Summary

    summaries = run.outputs.get("summaries", {})
    info = {
        pk: (ext, system)
        for pk, ext, system in Summary.objects.filter(pk__in=summaries.get("ids", [])).values_list(
            "pk", "document__external_id", "system__name"
        )
    }
    writer = csv.writer(stream)
    writer.writerow(["example_id", "system", "acu", "normalized_acu", "summary_words"])
    rows = sorted(
        zip(
            summaries.get("ids", []),
            summaries.get("acu", []),
            summaries.get("normalized_acu", []),
            summaries.get("words", []),
            strict=False,
        ),
        key=lambda r: (info[r[0]][0], info[r[0]][1]),
    )
    for pk, acu, norm, words in rows:
        writer.writerow([info[pk][0], info[pk][1], repr(acu), repr(norm), words])
    return len(rows)
