"""CSV cells that a spreadsheet will not run as formulas (OWASP, "CSV Injection").

Every CSV the app writes passes its text cells through `safe_cell`: a text cell beginning with
`=`, `+`, `-`, `@`, a tab or a carriage return gets a single quote in front, so Excel, LibreOffice
and Google Sheets show it as text instead of evaluating it (`=HYPERLINK(...)`, `-2+3*cmd`).
Numbers (int, float, Decimal) are written as they are, so a negative score stays a number; only
text is changed. A reader that wants the original text back removes the leading quote of a cell
that starts with a quote followed by one of those characters (`original_text` does this).

OWASP adds that the start of the text is not enough: a separator inside it starts a new cell.
Excel in a region with a decimal comma (most of continental Europe) splits a CSV at semicolons
whatever the file's own separator, so a system name `bart;=cmd|' /C calc'!A0;` put a formula in
a cell of its own there. A separator (`;`, `,`, a tab) followed by one of those characters (after
any spaces or double quotes) gets the same quote before that character (`bart;'=cmd...`), and
`original_text` takes that quote out as well.
"""

import re

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_STARTS = "=+\\-@\t\r"
# A separator, then any spaces and double quotes (a quoted cell is still evaluated), then a formula start.
_AFTER_SEPARATOR = re.compile(f'([;,\t][ "]*)(?=[{_STARTS}])')
_QUOTED_AFTER_SEPARATOR = re.compile(f"([;,\t][ \"]*)'(?=[{_STARTS}])")


def safe_cell(value):
    """`value` unchanged unless it is text a spreadsheet would read as a formula, at its start or
    after a separator within it: then `'` before each such place."""
    if not isinstance(value, str):
        return value
    value = _AFTER_SEPARATOR.sub(r"\1'", value)
    return "'" + value if value.startswith(FORMULA_START) else value


def safe_row(row) -> list:
    return [safe_cell(value) for value in row]


class CsvLines:
    """A file-like sink for csv.writer that keeps what was written until taken: a streamed CSV
    download writes rows to it and yields what it took."""

    def __init__(self):
        self.parts: list[str] = []

    def write(self, text):
        self.parts.append(text)

    def take(self) -> str:
        text, self.parts = "".join(self.parts), []
        return text


def original_text(cell: str) -> str:
    """The text `safe_cell` was given, from the cell it wrote."""
    if cell.startswith("'") and cell[1:].startswith(FORMULA_START):
        cell = cell[1:]
    return _QUOTED_AFTER_SEPARATOR.sub(r"\1", cell)
