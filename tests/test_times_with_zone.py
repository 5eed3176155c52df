"""Every time of day a page shows carries its time zone (TIME_ZONE may be any zone, and leads,
workers and panels sit in others): a template's date format with hours ends in T, or is ISO 8601
("c"), which carries the offset. Python-made times use %Z (hits.services: "ran out at 14:02 UTC")."""

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.portable  # reads files only

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
FORMAT = re.compile(r'\|date:"([^"]*)"')


def test_every_template_time_of_day_carries_its_zone():
    missing = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for fmt in FORMAT.findall(line):
                if re.search(r"[GHgh]", fmt) and not fmt.endswith(" T") and fmt != "c":
                    missing.append(f"{path.relative_to(TEMPLATES)}:{number}: {fmt}")
    assert not missing, "a time without its zone:\n" + "\n".join(missing)
