"""The structure the README's Layout section describes, checked on the import graph.

grimp (import-linter's graph library) reads every import, those inside functions included.
"""

import grimp
import pytest

from .test_package_cycles import strongly_connected

PACKAGES = ("config", "annotation", "hits", "scoring")


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*PACKAGES, include_external_packages=True, cache_dir=None)


def cycles(graph) -> list[set[str]]:
    """Strongly connected components of more than one project module."""
    modules = [m for m in graph.modules if m.split(".")[0] in PACKAGES]
    successors = {
        m: {w for w in graph.find_modules_directly_imported_by(m) if w.split(".")[0] in PACKAGES} for m in modules
    }
    return [set(group) for group in strongly_connected(successors)]


def test_no_import_cycle_among_project_modules(graph):
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    """The check above can fail: a graph with a two-module cycle is reported."""
    g = grimp.ImportGraph()
    for m in ("hits", "hits.a", "hits.b", "hits.c"):
        g.add_module(m)
    g.add_import(importer="hits.a", imported="hits.b")
    g.add_import(importer="hits.b", imported="hits.a")
    g.add_import(importer="hits.c", imported="hits.a")
    assert cycles(g) == [{"hits.a", "hits.b"}]


def test_only_the_mturk_client_imports_boto3(graph):
    importers = set(graph.find_modules_that_directly_import("boto3")) | set(
        graph.find_modules_that_directly_import("botocore")
    )
    assert importers == {"hits.providers.mturk.client"}


def test_the_numerical_core_imports_no_django(graph):
    allowed = {"numpy", "scipy", "krippendorff"}
    for module in graph.find_descendants("scoring.stats") | {"scoring.stats"}:
        for imported in graph.find_modules_directly_imported_by(module):
            top = imported.split(".")[0]
            assert (
                top in allowed
                or imported.startswith("scoring.stats")
                or top not in {"django", "rest_framework", "celery", *PACKAGES}
            ), f"{module} imports {imported}"


def test_no_caller_of_the_provider_interface_names_the_panel_provider(graph):
    """The panel provider (issue 31) is reached only through the interface: the registry names
    it (the site's URLs include its pages by their dotted name); no service, view, API, task or
    form imports it."""
    panel = graph.find_descendants("hits.providers.panel") | {"hits.providers.panel"}
    importers = set()
    for module in panel:
        importers |= set(graph.find_modules_that_directly_import(module))
    assert importers - panel == set()
    # the registry names it by dotted path, as Django names its backends
    from hits.provider_interface import provider_class

    assert provider_class("panel").__module__ == "hits.providers.panel.provider"


def test_no_caller_names_the_panel_provider_in_its_source():
    """Nor by its name: the callers (services, views, API, tasks, forms, scoring) ask for
    capabilities and options, never for "panel" or its models."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    callers = [*root.glob("hits/services/*.py"), *root.glob("hits/views/*.py"), *root.glob("hits/api/*.py")]
    callers += [root / "hits/tasks.py", root / "hits/forms.py", *root.glob("scoring/**/*.py")]
    pattern = re.compile(r"""["']panel["']|Panel(Session|Payment|Provider)|providers\.panel""")
    named = [str(p.relative_to(root)) for p in callers if pattern.search(p.read_text(encoding="utf-8"))]
    assert len(callers) > 20 and named == []
