"""Dead code in the apps: functions, classes, methods, properties and imports nothing uses (vulture).

Uses are counted over the whole project: the apps, their migrations, tests, bench/ and scripts/,
plus two kinds of use vulture cannot see, read here so that no whitelist is kept by hand:
- a name in a string constant (Django settings name classes by dotted path, the Prolific provider
  calls its client's methods by name, the beat schedule names its tasks);
- a name in a template (`{{ batch.progress }}`, `{% load money %}`).
Only the apps' own modules are reported (not migrations), and only the kinds of finding that have
no false positive on this code: a model field or serializer field read by the framework is a
variable, which vulture cannot tell from a dead one, so variables and attributes are left out.
The framework calls the methods in FRAMEWORK_NAMES by name (management commands, forms,
serializers, admin, middleware, session stores).

    .venv/bin/python scripts/deadcode.py      # prints each finding; exit status 1 if any
"""

import ast
import re
import sys
from pathlib import Path

import vulture

ROOT = Path(__file__).resolve().parent.parent
APPS = ("config", "annotation", "hits", "scoring")
USES = (*APPS, "tests", "bench", "scripts", "manage.py")
REPORTED = {"function", "class", "method", "property", "import", "unreachable_code"}
FRAMEWORK_NAMES = [
    "Command",  # management commands
    "add_arguments",
    "handle",
    "clean_*",  # forms and models
    "validate_*",  # DRF serializers
    "get_*",  # DRF SerializerMethodField getters, views' get_queryset
    "to_python",  # form fields
    "has_*permission",  # admin sites and DRF permissions
    "process_view",  # middleware
    "_validate_session_key",  # session stores
    "get_failures",  # django-axes handler
    "max_page_size",  # DRF pagination
    "*Admin",  # admin classes, registered by decorator
    "*Config",  # AppConfig classes, found by Django
    "*Extension",  # drf-spectacular extensions, found by subclassing
    "map_serializer_field",
]
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def python_files() -> list[Path]:
    files: list[Path] = []
    for name in USES:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def named_in_strings_and_templates() -> set[str]:
    names: set[str] = set()
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
                names |= set(IDENTIFIER.findall(node.value))
    for template in (ROOT / "templates").rglob("*.html"):
        names |= set(IDENTIFIER.findall(template.read_text(encoding="utf-8")))
    return names


def findings() -> list[str]:
    finder = vulture.Vulture(ignore_names=FRAMEWORK_NAMES)
    finder.scavenge([str(ROOT / name) for name in USES])
    used = named_in_strings_and_templates()
    found = []
    for item in finder.get_unused_code(min_confidence=60):
        relative = Path(item.filename).resolve().relative_to(ROOT)
        if relative.parts[0] not in APPS or "migrations" in relative.parts or item.typ not in REPORTED:
            continue
        if item.typ != "unreachable_code" and item.name in used:
            continue
        found.append(f"{relative}:{item.first_lineno}: unused {item.typ} {item.name!r}")
    return found


if __name__ == "__main__":
    lines = findings()
    print("\n".join(lines) if lines else "no dead code found")
    sys.exit(1 if lines else 0)
