"""CSV exports: raw judgments and aggregated scores. Every text cell goes through
`config.csv_cells.safe_cell` (no formulas in a spreadsheet); numbers are written as numbers."""

import csv

import numpy as np

from annotation.models import Summary
from config.csv_cells import CsvLines, safe_row
from hits.models import Worker
from scoring.results.exports.labels import annotator_key, label_groups
from scoring.runs.selectors import run_summaries

JUDGMENT_COLUMNS = ["worker", "example_id", "system", "acu_index", "label"]
ROWS_PER_CHUNK = 20000


def _summary_order(dataset):
    """The summaries in export order (document position, system name as the database sorts
    it): their ids, a function from ids to that rank, and each one's (example_id, system)."""
    rows = list(
        Summary.objects.filter(document__dataset=dataset)
        .order_by("document__position", "document_id", "system__name")
        .values_list("pk", "document__external_id", "system__name")
    )
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    by_id = np.argsort(ids)
    sorted_ids = ids[by_id]

    def rank(summary_ids):
        return by_id[np.searchsorted(sorted_ids, summary_ids)]

    return rank, {pk: (example, system) for pk, example, system in rows}


def _judgment_chunks(dataset, batch=None, rows_per_chunk: int = ROWS_PER_CHUNK):
    """The judgments CSV as (text, rows in it), the header first, in export order: document,
    system, worker id, ACU index (each worker named as the RoSE JSONL export names them). The
    judgments are read through the ORM and ordered as arrays; what remains in Python per
    judgment is one string concatenation."""
    sink = CsvLines()
    writer = csv.writer(sink)
    writer.writerow(JUDGMENT_COLUMNS)
    yield sink.take(), 0
    rank, names = _summary_order(dataset)
    groups = label_groups(dataset, batch, rank=rank)
    workers = {w.pk: annotator_key(w, dataset) for w in Worker.objects.filter(pk__in=set(groups.worker.tolist()))}
    codes = (groups.index * 2 + groups.present).tolist()
    width = int(groups.index.max()) + 1 if groups.index.size else 0
    tails = [f"{i // 2},{i % 2}\r\n" for i in range(2 * width)]
    start = groups.start.tolist()
    parts: list[str] = []
    for g, (summary, worker) in enumerate(zip(groups.summary.tolist(), groups.worker.tolist(), strict=True)):
        writer.writerow([*safe_row([workers[worker], *names[summary]]), ""])
        prefix = sink.take()[:-2]  # "worker,example_id,system," with the CSV quoting of each
        parts.extend([prefix + tails[c] for c in codes[start[g] : start[g + 1]]])
        if len(parts) >= rows_per_chunk:
            yield "".join(parts), len(parts)
            parts = []
    if parts:
        yield "".join(parts), len(parts)


def iter_judgments_csv(dataset, batch=None, rows_per_chunk: int = ROWS_PER_CHUNK):
    """The judgments CSV in chunks of text, for a streamed download."""
    for text, _ in _judgment_chunks(dataset, batch, rows_per_chunk):
        yield text


def write_judgments_csv(dataset, stream, batch=None) -> int:
    """Write the judgments CSV to a text stream; returns the number of judgments written."""
    count = 0
    for text, rows in _judgment_chunks(dataset, batch):
        stream.write(text)
        count += rows
    return count


def _number(value):
    """A score as a number cell (csv writes a float as its repr); a missing one as None (empty)."""
    return None if value is None else float(value)


def write_scores_csv(run, stream) -> int:
    """Aggregated per-summary scores of a scoring run."""
    from annotation.models import Summary

    summaries = run_summaries(run)
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
        writer.writerow([*safe_row([info[pk][0], info[pk][1]]), _number(acu), _number(norm), words])
    return len(rows)
