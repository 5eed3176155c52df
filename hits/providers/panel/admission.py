"""Who may start a panel session (issue 45 item 5): the per-study link alone lets anyone name any
participant id, so a study can ask for more, either or both of:

- a signature: the lead stores a secret as `signature_secret`; the study link is then let in
  only with `signature_parameter` (default `sig`) set to the hex HMAC-SHA256 of the participant
  id under that secret. The format is ours: neither Qualtrics nor CloudResearch Connect signs the
  links they send participants to (docs/providers.md says how a Qualtrics survey can send it);
- a list of ids the lead uploads: only listed ids get a session link, and a link made before the
  list was uploaded no longer opens the session of an unlisted id.

The batch page's *Test the link* id (`TEST-<batch>`) is always let in: it is the lead's own.
"""

import csv
import hashlib
import hmac
import re

from config.limits import file_refusal
from hits.models import Batch
from hits.providers.panel.config import PARTICIPANT_ID, config
from hits.providers.panel.tokens import TokenRefused

MAX_LISTED = 10_000
# The most bytes of a list file (the view's own bound: the upload form checks it in the browser,
# config.limits.file_bound). 80 bytes a line hold MAX_LISTED ids of the longest form
# (PARTICIPANT_ID: 64 characters, ASCII) with CRLFs, CSV quotes, a header line and a UTF-8 BOM
# (680,019 bytes with all of them; tests/test_upload_limit.py); docs/providers.md says both.
LIST_FILE_MAX_BYTES = MAX_LISTED * 80
LIST_FILE_HOLDS = f"{MAX_LISTED:,} ids"
AGAIN = "Open the study again from your panel."


class ListRefused(ValueError):
    """An id list the lead uploaded is refused; the message says which line and why."""


def signature(secret: str, participant_id: str) -> str:
    """What the panel puts in the link: hex HMAC-SHA256 of the participant id under the secret."""
    return hmac.new(secret.encode(), participant_id.encode(), hashlib.sha256).hexdigest()


def _is_test_id(batch: Batch, participant_id: str) -> bool:
    return participant_id == f"TEST-{batch.pk}"


def check_entry(batch: Batch, participant_id: str, query) -> None:
    """At the study link: the panel's signature (when the study has its secret) and the list."""
    cfg = config(batch)
    secret = cfg.get("signature_secret") or ""
    if secret and not _is_test_id(batch, participant_id):
        given = (query.get(cfg.get("signature_parameter") or "sig") or "").strip().lower()
        if not hmac.compare_digest(given.encode(), signature(secret, participant_id).encode()):
            raise TokenRefused(f"This study link was not signed by the panel for this participant id. {AGAIN}")
    check_listed(batch, participant_id)


def check_listed(batch: Batch, participant_id: str) -> None:
    """When the lead uploaded a list: only its ids (checked at the study link and on every session page)."""
    listed = config(batch).get("allowed_ids") or []
    if listed and participant_id not in listed and not _is_test_id(batch, participant_id):
        raise TokenRefused(f"This participant id is not on this study's list of participants. {AGAIN}")


# The header of a participant id column in a panel's or a survey's CSV export ("Participant id").
ID_HEADER = re.compile(r"participant[ _-]?id|participantid|pid|prolific[ _-]?pid|id", re.IGNORECASE)


def _id_column(text: str) -> str | None:
    """The ids of a CSV export with a header naming a participant id column ("Submission id,
    Participant id,Status,..."), one a line; None when the first line names no such column.
    Every cell of such a file was listed before: its header words, dates and statuses, so anyone
    naming themselves "Status" passed the list."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines:
        return None
    separator = max(",;\t", key=lines[0].count)
    rows = list(csv.reader(lines, delimiter=separator))
    header = [cell.strip() for cell in rows[0]]
    named = [i for i, cell in enumerate(header) if ID_HEADER.fullmatch(cell)]
    if not named:
        return None
    # A panel's own column wins over a generic "id" (a submission's).
    column = next((i for i in named if header[i].lower() != "id"), named[0])
    return "\n".join(row[column] for row in rows[1:] if len(row) > column)


def parse_ids(text: str) -> list[str]:
    """One id a line (commas and spaces separate too), or the participant id column of a CSV
    export with a header; duplicates dropped; each checked like a link's id; at most MAX_LISTED."""
    column = _id_column(text or "")
    if column is not None:
        text = column
    ids = list(dict.fromkeys(part for part in re.split(r"[\s,;]+", text or "") if part))
    if len(ids) > MAX_LISTED:
        raise ListRefused(f"The list has {len(ids)} ids; at most {MAX_LISTED} can be listed.")
    for number, pid in enumerate(ids, 1):
        if not re.fullmatch(PARTICIPANT_ID, pid):
            raise ListRefused(
                f"Id {number} ({pid[:40]!r}) is not a participant id: letters, digits and . _ - @ : +, "
                "at most 64, not beginning with - + @ ="
            )
    return ids


def read_upload(upload) -> str:
    """The text of an uploaded list (None: no file); at most LIST_FILE_MAX_BYTES, UTF-8."""
    if upload is None:
        return ""
    if upload.size > LIST_FILE_MAX_BYTES:
        raise ListRefused(file_refusal(upload.size, LIST_FILE_MAX_BYTES, LIST_FILE_HOLDS))
    try:
        return upload.read().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ListRefused("The file is not UTF-8 text: save it as plain text, one id a line.") from None


def set_listed(batch: Batch, text: str) -> int:
    """Store the lead's list (an empty one: every id may start again); the number of ids listed."""
    ids = parse_ids(text)
    stored = dict(batch.provider_config or {})
    stored["allowed_ids"] = ids
    batch.provider_config = stored
    batch.save(update_fields=["provider_config"])
    return len(ids)
