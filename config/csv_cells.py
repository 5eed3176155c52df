"""CSV cells that a spreadsheet will not run as formulas (OWASP, "CSV Injection").

Every CSV the app writes passes its text cells through `safe_cell`: a text cell beginning with
`=`, `+`, `-`, `@`, a tab or a carriage return gets a single quote in front, so Excel, LibreOffice
and Google Sheets show it as text instead of evaluating it (`=HYPERLINK(...)`, `-2+3*cmd`).
Numbers (int, float, Decimal) are written as they are, so a negative score stays a number; only
text is changed. A reader that wants the original text back removes the leading quote of a cell
that starts with a quote followed by one of those characters (`original_text` does this).
"""

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """`value` unchanged unless it is text a spreadsheet would read as a formula: then `'` + value."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def safe_row(row) -> list:
    return [safe_cell(value) for value in row]


def original_text(cell: str) -> str:
    """The text `safe_cell` was given, from the cell it wrote."""
    if cell.startswith("'") and cell[1:].startswith(FORMULA_START):
        return cell[1:]
    return cell
