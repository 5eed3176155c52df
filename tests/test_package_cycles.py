"""No import cycle between the second-level packages and modules of an app (scoring.tasks,
scoring.runs, scoring.machine, ...): each layer of an app only imports the layers below it
(pyproject.toml's import-linter contracts keep the order). grimp reads every import, those
inside functions included. Run as a script, it prints every app's package cycles with the
imports that close them: `.venv/bin/python tests/test_package_cycles.py`."""

import grimp
import pytest

APPS = ("config", "annotation", "hits", "scoring")


def package_imports(graph, app: str) -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the module imports behind it, for the
    second-level packages and modules of `app`."""

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[tuple[str, str], list[str]] = {}
    for module in sorted(graph.find_descendants(app)):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported.startswith(app + ".") and package(module) != package(imported):
                edges.setdefault((package(module), package(imported)), []).append(f"{module} -> {imported}")
    return edges


def package_cycles(edges) -> list[list[str]]:
    """The strongly connected groups of more than one package, sorted."""
    successors: dict[str, set[str]] = {}
    for a, b in edges:
        successors.setdefault(a, set()).add(b)
        successors.setdefault(b, set())
    return strongly_connected(successors)


def strongly_connected(successors: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node of a graph given as node -> successors
    (every successor a node too), each sorted, in sorted order (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(successors[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(successors):
        if v not in index:
            visit(v)
    return sorted(found)


def report(graph, app: str) -> str:
    edges = package_imports(graph, app)
    lines = []
    for group in package_cycles(edges):
        lines.append(" <-> ".join(group))
        lines += [f"  {a} -> {b}: {'; '.join(edges[a, b][:3])}" for a in group for b in group if (a, b) in edges]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*APPS, cache_dir=None)


@pytest.mark.parametrize("app", APPS)
def test_no_package_cycle_in_the_app(graph, app):
    assert package_cycles(package_imports(graph, app)) == [], report(graph, app)


def test_the_package_cycle_finder_finds_one_through_an_import_inside_a_package():
    """The check above can fail: scoring.runs.services -> scoring.machine.runs and back through
    scoring.machine.qc -> scoring.runs.data is one cycle of two packages; scoring.models, which
    only the two import, is in none."""
    g = grimp.ImportGraph()
    for m in ("scoring", "scoring.runs", "scoring.runs.services", "scoring.runs.data", "scoring.machine"):
        g.add_module(m)
    for m in ("scoring.machine.runs", "scoring.machine.qc", "scoring.models"):
        g.add_module(m)
    g.add_import(importer="scoring.runs.services", imported="scoring.machine.runs")
    g.add_import(importer="scoring.machine.qc", imported="scoring.runs.data")
    g.add_import(importer="scoring.runs.data", imported="scoring.models")
    g.add_import(importer="scoring.machine.runs", imported="scoring.models")
    assert package_cycles(package_imports(g, "scoring")) == [["scoring.machine", "scoring.runs"]]


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    built = grimp.build_graph(*APPS, cache_dir=None)
    for app in APPS:
        cycles = package_cycles(package_imports(built, app))
        print(f"{app}: {len(cycles)} package cycle(s)")
        if cycles:
            print(report(built, app))
