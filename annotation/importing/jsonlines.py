"""Reading JSON Lines (one JSON object per line) for every JSON-lines importer (RoSE datasets,
metric scores), with one set of plain messages for a line that is not JSON: where it breaks and
what that most likely means (a file cut off, a line broken in two, a CSV file on the JSONL form).
The same words serve a file of one JSON document (RoSE's protocol comparison files).
"""

import json
import re
from collections.abc import Iterator

from config import bounded_json

from .errors import DatasetImportError

# What JSON's parser says, in plain words.
PLAIN = {
    "Expecting ',' delimiter": "a comma or a closing bracket is missing",
    "Expecting ':' delimiter": "a colon is missing after a key",
    "Expecting property name enclosed in double quotes": (
        "a key is not in double quotes, or a comma stands before a closing brace"
    ),
    "Expecting value": "a value is missing or is not JSON (JSON writes text in double quotes, and true, false, null)",
    "Extra data": "more text follows the end of the JSON value",
    "Invalid control character at": "a string holds a raw tab or line break (JSON writes them \\t and \\n)",
    "Invalid \\escape": "a backslash starts an escape JSON does not have (JSON writes a backslash as \\\\)",
    "Invalid \\uXXXX escape": "a \\u escape is not followed by four hexadecimal digits",
}


def plain(exc: json.JSONDecodeError) -> str:
    """The parser's complaint in plain words (its own words when they are not known here)."""
    return PLAIN.get(exc.msg, exc.msg[:1].lower() + exc.msg[1:])


def unfinished(exc: json.JSONDecodeError, text: str) -> str:
    """What is left open when the JSON `text` stops before its value ends ("" when it does not):
    a string never closed, or an object or list the text ends inside."""
    if exc.msg.startswith("Unterminated string"):
        return f"a string opened at column {exc.colno} never closes"
    rest = text[exc.pos :].rstrip()
    if (not rest or cut_word(rest)) and text.lstrip()[:1] in ("{", "["):
        return "it ends inside an object or a list"
    return ""


def cut_word(rest: str) -> bool:
    """Whether `rest`, the end of a text from where the parser stopped, is a number or a true,
    false or null cut short (the parser stops before it, not at the end)."""
    return bool(re.fullmatch(r"[-+.eE0-9]+", rest)) or any(word.startswith(rest) for word in ("true", "false", "null"))


def looks_like(line: str) -> str:
    """What a first line that is no JSON at all looks like, when it is recognizable."""
    text = line.strip()
    if text.startswith("<"):
        return "it looks like HTML or XML: its first line starts with '<'"
    if "{" not in text and "," in text:
        return "it looks like CSV: its first line has commas and no braces"
    if "{" not in text and "\t" in text:
        return "it looks like a tab-separated table: its first line has tabs and no braces"
    return ""


def starts_no_value(exc: json.JSONDecodeError, text: str) -> bool:
    """Whether the text is no JSON from its first character on (a CSV file, a web page)."""
    return exc.msg == "Expecting value" and exc.pos == len(text) - len(text.lstrip())


def document_problem(exc: json.JSONDecodeError, text: str, *, kind: str) -> str:
    """The message for a file of one JSON document (`kind`: what it should be) that does not parse."""
    if open_part := unfinished(exc, text):
        return f"the file is not complete JSON ({open_part}): it may be cut off"
    if starts_no_value(exc, text):
        guess = looks_like(text.lstrip().split("\n", 1)[0])
        return f"the file is not JSON: this does not look like a {kind} file" + (f" ({guess})" if guess else "")
    return f"not valid JSON at column {exc.colno}: {plain(exc)}"


def line_problem(exc: json.JSONDecodeError, raw: str, *, first: bool, last: bool, kind: str, advice: str = "") -> str:
    """The message for a line of a JSON Lines file that does not parse. `first`/`last`: whether
    it is the file's first/last line with text; `kind`: what the file should be ("RoSE JSONL");
    `advice`: where an indented JSON document imports instead, if anywhere."""
    if raw.strip() in ("[", "{", "[{"):
        return (
            "the line holds only a bracket: JSONL holds one JSON object per line, and this file looks like"
            " one indented JSON document" + (f" ({advice})" if advice else "")
        )
    if open_part := unfinished(exc, raw):
        where = "the file may be cut off" if last else "the line may be cut short, or broken over two lines"
        return f"the line is not complete JSON ({open_part}): {where}"
    if starts_no_value(exc, raw):
        if not first:
            return f"the line is not JSON (it starts with {raw.strip()[:20]!r})"
        guess = looks_like(raw)
        return f"the line is not JSON: this does not look like a {kind} file" + (f" ({guess})" if guess else "")
    return f"the line is not valid JSON at column {exc.colno}: {plain(exc)}"


def json_lines(
    text: str, name: str, *, kind: str, max_depth: int, max_int_digits: int, advice: str = ""
) -> Iterator[tuple[int, object]]:
    """(line number from 1, value) of each line with text, parsed with bounds (nesting depth,
    integer digits); a line that does not parse raises DatasetImportError naming the file and line."""
    lines = text.split("\n")
    seen_text = False
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            value = bounded_json.loads(raw, max_depth=max_depth, max_int_digits=max_int_digits)
        except bounded_json.TooDeep:
            raise DatasetImportError(f"the JSON is nested more than {max_depth} levels deep", name, lineno) from None
        except bounded_json.NumberTooLong as exc:
            raise DatasetImportError(f"the JSON has {exc}", name, lineno) from None
        except json.JSONDecodeError as exc:
            last = not any(rest.strip() for rest in lines[lineno:])
            problem = line_problem(exc, raw, first=not seen_text, last=last, kind=kind, advice=advice)
            raise DatasetImportError(problem, name, lineno) from None
        seen_text = True
        yield lineno, value
