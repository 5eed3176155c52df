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

import pytest

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


# ---- docs/api.md names every route and option of the API's OpenAPI schema -------------------

API_DOC = PROJECT / "docs" / "api.md"
ROUTE = re.compile(r"`(GET|POST|PUT|PATCH|DELETE) (/api/[^`?\s]*)[^`]*`")


def api_operations() -> dict[tuple[str, str], set[str]]:
    """(METHOD, path with every path parameter written `{id}`) -> the operation's options: its
    query parameters and the top-level fields of its request body, from drf-spectacular's schema."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    operations = {}
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            options = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
            for content in operation.get("requestBody", {}).get("content", {}).values():
                body = content["schema"]
                body = components[body["$ref"].rsplit("/", 1)[1]] if "$ref" in body else body
                options |= set(body.get("properties", {}))
            operations[method.upper(), re.sub(r"\{\w+\}", "{id}", path)] = options
    return operations


def documented_operations() -> dict[tuple[str, str], str]:
    """(METHOD, path) -> the line of docs/api.md's table that documents it (query strings dropped)."""
    rows = {}
    for line in API_DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            for method, path in ROUTE.findall(line.split("|")[1]):
                rows[method, path] = line
    return rows


def test_the_schema_reader_finds_the_api():
    operations = api_operations()
    assert ("POST", "/api/batches/{id}/sync/") in operations
    assert {"allocation", "prolific", "systems"} <= operations["POST", "/api/batches/"]
    assert "cross_encoder" in operations["POST", "/api/datasets/{id}/judge-runs/"]
    assert {"page", "page_size"} <= operations["GET", "/api/datasets/"]


@pytest.mark.django_db
def test_every_api_route_is_documented_and_every_documented_route_exists():
    documented, served = set(documented_operations()), set(api_operations())
    assert sorted(served - documented) == [], "served by the API, missing in docs/api.md's table"
    assert sorted(documented - served) == [], "in docs/api.md's table, not served by the API"


@pytest.mark.django_db
def test_every_api_option_is_named_on_its_route_row():
    rows = documented_operations()
    missing = {
        f"{method} {path}": sorted(
            o for o in options if f"`{o}`" not in rows[method, path] and f"`?{o}=" not in rows[method, path]
        )
        for (method, path), options in api_operations().items()
        if (method, path) in rows
    }
    assert {route: names for route, names in missing.items() if names} == {}


# ---- the README's layout names every package ---------------------------------------------

APPS = ("config", "annotation", "hits", "scoring")
NOT_LISTED = {"migrations", "management", "commands"}  # named once in the prose above the layout


def layout_sections() -> dict[str, set[str]]:
    """app -> the folder names (`name/`) its part of the README's layout block lists."""
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    sections: dict[str, set[str]] = {}
    current = None
    for line in block.splitlines():
        if line and not line.startswith(" "):
            current = line.split("/", 1)[0] if line.split("/", 1)[0] in APPS else None
            names = set(re.findall(r"(\w+)/", line)[1:])
        else:
            names = set(re.findall(r"(\w+)/", line))
        if current:
            sections.setdefault(current, set()).update(names)
    return sections


def packages(app: str) -> set[str]:
    """The names of the app's packages (folders with an __init__.py), at any depth."""
    return {
        init.parent.name
        for init in (PROJECT / app).rglob("__init__.py")
        if init.parent != PROJECT / app and not NOT_LISTED & set(init.parent.relative_to(PROJECT).parts)
    }


def test_the_layout_reader_finds_the_apps_and_their_packages():
    sections = layout_sections()
    assert set(sections) == set(APPS)
    assert {"providers", "mturk", "services"} <= sections["hits"]
    assert {"providers", "mturk", "panel", "prolific", "api"} <= packages("hits")


@pytest.mark.parametrize("app", APPS)
def test_the_readme_layout_names_every_package_and_only_packages(app):
    listed = layout_sections()[app]
    assert sorted(packages(app) - listed) == [], f"packages of {app}/ missing in the README's layout"
    assert sorted(listed - packages(app)) == [], f"folders in the README's layout that {app}/ does not have"


# ---- bench/RESULTS.md holds a figure and a command for every benchmark --------------------


def test_every_benchmark_has_a_section_with_its_command_and_every_command_names_a_benchmark():
    results = (PROJECT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    scripts = {p.name for p in (PROJECT / "bench").glob("*.py")}
    commands = "\n".join(block.split("\n", 1)[1] for block in results.split("```bash")[1:])
    run = set(re.findall(r"bench/(\w+\.py)", commands))
    assert len(scripts) > 15 and "load_bench.py" in run
    assert sorted(run - scripts) == [], "commands in bench/RESULTS.md for scripts bench/ does not have"
    named = set(re.findall(r"`(?:bench/)?(\w+\.py)`", results)) | run
    assert sorted(scripts - named) == [], "scripts of bench/ that bench/RESULTS.md does not name"
