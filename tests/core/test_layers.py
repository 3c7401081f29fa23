"""The package's layers (issue 12): evaluator <- analysis <- viz <- report <- hosting; app.

The evaluator is the flat top of ``ovearth_core``; ``analysis`` and ``convert`` (the format
converters, issue 16) may import it; ``viz`` and ``audit`` (issue 36, beside viz) the
evaluator and analysis; ``report`` all of them (it draws with viz); ``hosting`` (issue 40:
the platforms' scorer renders the report) all of them; ``synth`` only itself and the
standard-library leaves (``ovearth_core.files``: file safety, so that the generator writes
files as every command does; ``bounds``: numbers read with bounds; ``workers``: process
pools); nothing in
``ovearth_core`` imports the app, and the evaluator and the analyses import neither plotly
nor streamlit.
Checked on the source (every import statement, including ones inside functions) and in a
fresh interpreter (what importing the evaluator really loads).

No import circles (issue 47): among the modules of ``ovearth_core``, and among the scripts of
``benchmarks/``, every import (inside a function, or under ``TYPE_CHECKING``, too) points one
way; a piece two modules share lives in a module both import.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "ovearth_core"
# Layer rank of each subpackage; modules at the top of ovearth_core are the evaluator (0).
RANK = {"analysis": 1, "convert": 1, "synth": 1, "viz": 2, "audit": 2, "report": 3,
        "hosting": 4}
# Pure commands kept at their documented names; nothing imports them.
ENTRY_SHIMS = {"ovearth_core.leaderboard", "ovearth_core.export"}
# Modules of the evaluator layer that import only the standard library (and each other): any
# layer may use them.
LEAVES = {"ovearth_core.files", "ovearth_core.bounds", "ovearth_core.workers"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> tuple[int, str]:
    parts = module.split(".")
    sub = parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in RANK) else ""
    return RANK.get(sub, 0), sub


def _is_module(name: str, root: Path = ROOT) -> bool:
    path = root / Path(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _imports(path: Path) -> list[str]:
    """Absolute names of every ovearth_core / third-party module ``path`` imports."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append(mod)
            out += [f"{mod}.{a.name}" for a in node.names if _is_module(f"{mod}.{a.name}")]
    return out


MODULES = sorted(p for p in PKG.rglob("*.py"))


def _module_edges(path: Path, root: Path = ROOT) -> set[str]:
    """The modules of ``path``'s own top package that it imports, anywhere in it: ``from P
    import m`` is an edge to the submodule ``P.m`` (to ``P`` itself only for names that are
    not modules)."""
    name = _relative_name(path, root)
    top = name.split(".")[0]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            subs = {f"{mod}.{a.name}" for a in node.names
                    if _is_module(f"{mod}.{a.name}", root)}
            out |= subs
            if len(subs) < len(node.names):
                out.add(mod)
    return {t for t in out if t.split(".")[0] == top and t != name and _is_module(t, root)}


def _relative_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph`` (module -> modules it imports): its strongly connected
    components of two or more modules, each sorted (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next((t for t in targets if t in graph), None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


def import_graph(folder: Path, root: Path = ROOT) -> dict[str, set[str]]:
    return {_relative_name(p, root): _module_edges(p, root) for p in sorted(folder.rglob("*.py"))}


def _violations(me: str, targets: list[str]) -> list[str]:
    rank, sub = _layer(me)
    out = []
    for target in targets:
        top = target.split(".")[0]
        if top in {"streamlit", "pages", "app"}:
            out.append(f"{me} imports the app layer ({target})")
        elif top == "plotly" and sub not in {"report", "viz"}:
            out.append(f"{me} (layer {sub or 'evaluator'}) imports {target}")
        elif target.startswith("ovearth_core.") and target not in ENTRY_SHIMS:
            t_rank, t_sub = _layer(target)
            if sub == "synth" and t_sub != "synth" and target not in LEAVES:
                out.append(f"the synthetic generator {me} imports {target}")
            elif t_sub != sub and t_rank >= rank:
                out.append(f"{me} (layer {sub or 'evaluator'}) imports {target} (layer "
                           f"{t_sub or 'evaluator'}): imports point from report to viz to "
                           "analysis to the evaluator only")
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_upward(path: Path) -> None:
    me = _module_name(path)
    if me not in ENTRY_SHIMS:
        assert _violations(me, _imports(path)) == []


@pytest.mark.parametrize(("me", "target", "bad"), [
    ("ovearth_core.metrics", "ovearth_core.analysis.ap", True),
    ("ovearth_core.metrics", "ovearth_core.masks", False),
    ("ovearth_core.analysis.ap", "ovearth_core.geometry", False),
    ("ovearth_core.analysis.ap", "ovearth_core.viz.figures", True),
    ("ovearth_core.viz.figures", "ovearth_core.report.draw", True),
    ("ovearth_core.report.draw", "ovearth_core.viz.overlay", False),
    ("ovearth_core.evaluate", "plotly.graph_objects", True),
    ("ovearth_core.viz.figures", "plotly.graph_objects", False),
    ("ovearth_core.report.html", "streamlit", True),
    ("ovearth_core.synth.scene", "ovearth_core.masks", True),
    ("ovearth_core.synth.writer", "ovearth_core.files", False),
    ("ovearth_core.synth.writer", "ovearth_core.cli", True),
    ("ovearth_core.synth.writer", "ovearth_core.bounds", False),
])
def test_the_rule_refuses_what_it_should(me: str, target: str, bad: bool) -> None:
    assert bool(_violations(me, [target])) is bad


@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_leaves_import_only_the_standard_library(leaf: str) -> None:
    path = ROOT / Path(*leaf.split(".")).with_suffix(".py")
    names = [name for name in _imports(path) if name not in LEAVES]
    tops = {name.split(".")[0] for name in names}
    assert tops <= set(sys.stdlib_module_names) | {"__future__"}, tops


def test_evaluator_and_analysis_load_neither_plotly_nor_streamlit() -> None:
    code = ("import sys, ovearth_core, ovearth_core.cli, ovearth_core.io, ovearth_core.analysis, "
            "ovearth_core.analysis.ap, ovearth_core.analysis.compare, "
            "ovearth_core.analysis.leaderboard, ovearth_core.analysis.diagnose, "
            "ovearth_core.analysis.attribution, ovearth_core.analysis.sweep; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('plotly', 'streamlit', 'pages')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "[]"


@pytest.mark.parametrize("folder", ["ovearth_core", "benchmarks"])
def test_no_import_circles(folder: str) -> None:
    cycles = import_cycles(import_graph(ROOT / folder))
    assert cycles == [], "import circles (each: modules importing each other, maybe through "\
        f"others): {cycles}"


@pytest.mark.parametrize(("graph", "cycles"), [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b", "x"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
])
def test_the_cycle_finder_finds_what_it_should(graph: dict[str, set[str]],
                                                cycles: list[list[str]]) -> None:
    assert import_cycles(graph) == cycles


def test_imports_inside_functions_and_type_checking_blocks_count(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from .b import B\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n    from .sub import c\n")
    (pkg / "sub" / "c.py").write_text("from ..a import name\nimport pkg.b\n")
    graph = import_graph(pkg, tmp_path)
    assert graph == {"pkg": set(), "pkg.sub": set(), "pkg.a": {"pkg.b"},
                     "pkg.b": {"pkg.a", "pkg.sub.c"}, "pkg.sub.c": {"pkg.a", "pkg.b"}}
    assert import_cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
