"""Files the pages and the API stream to the browser as a download (CSV, NDJSON): one response
builder, so every download has the same type and the same file-name quoting."""

from collections.abc import Iterable

from django.http import StreamingHttpResponse
from django.utils.http import content_disposition_header

CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "ndjson": "application/x-ndjson; charset=utf-8",
}


def streamed_download(chunks: Iterable[str | bytes], filename: str, *, kind: str) -> StreamingHttpResponse:
    """The chunks streamed as an attachment named `filename` (RFC 6266, as
    `content_disposition_header` quotes it: `filename="..."` for an ASCII name, `filename*=utf-8''...`
    percent-encoded otherwise, so a quote or a non-Latin-1 letter in a dataset's name never ends or
    garbles it); `kind` is "csv" or "ndjson"."""
    response = StreamingHttpResponse(chunks, content_type=CONTENT_TYPES[kind])
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
