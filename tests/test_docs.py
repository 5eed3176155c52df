"""docs/configuration.md documents exactly the settings config/settings.py reads (issue 25, item 8).

The settings are found by reading the source, not by importing it: every call of a reader of
`config/env.py` (`env_str`, `env_int`, `env_bool`, `env_list`, `env_choice`, ...) whose first
argument is a string, in `config/settings.py` and in the `config` modules it imports with
`from . import name` (e.g. `api_settings`). The documented ones are the backticked upper-case
names in the first column of the table in docs/configuration.md.
"""

import ast
import re
from pathlib import Path

from .conftest import PROJECT

CONFIG = PROJECT / "config"
TABLE = PROJECT / "docs" / "configuration.md"


def env_readers() -> set[str]:
    """The public functions of config/env.py: each reads one variable named by its first argument."""
    tree = ast.parse((CONFIG / "env.py").read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")}


def read_variables(path: Path, readers: set[str]) -> set[str]:
    """Variables named by a reader call in this module, and in the sibling modules it imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if func in readers and node.args and isinstance(node.args[0], ast.Constant):
                names.add(node.args[0].value)
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
            for alias in node.names:
                sibling = path.parent / f"{alias.name}.py"
                if sibling.is_file():
                    names |= read_variables(sibling, readers)
    return names


def settings_read() -> set[str]:
    return read_variables(CONFIG / "settings.py", env_readers())


def documented() -> list[str]:
    """Every name in the first cell of the table's rows (a row may name several: `A`, `B`)."""
    names = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line.startswith("|") and not line.startswith("| ---"):
            first = line.split("|")[1]
            names += re.findall(r"`([A-Z][A-Z0-9_]*)`", first)
    return names


def test_the_reader_finds_what_settings_read():
    # The parse itself: known variables of settings.py and of api_settings.py, each reader kind.
    found = settings_read()
    assert {"DATABASE_URL", "DEBUG", "CELERY_TASK_TIME_LIMIT", "ALLOWED_HOSTS", "LOG_LEVEL"} <= found
    assert "API_MAX_PAGE_SIZE" in found
    assert len(found) > 40


def test_every_setting_read_is_documented_once():
    names = documented()
    assert sorted(n for n in set(names) if names.count(n) > 1) == [], "listed twice in docs/configuration.md"
    assert sorted(settings_read() - set(names)) == [], "read in config/settings.py, missing in docs/configuration.md"


def test_every_documented_setting_is_read():
    assert sorted(set(documented()) - settings_read()) == [], "in docs/configuration.md, not read by config/settings.py"


def test_the_readme_is_a_short_page_that_links_to_every_document():
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", readme))
    assert linked == {str(p.relative_to(PROJECT)) for p in (PROJECT / "docs").glob("*.md")}
    assert "bench/RESULTS.md" in readme
