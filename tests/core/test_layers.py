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


def _is_module(name: str) -> bool:
    path = ROOT / Path(*name.split("."))
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
