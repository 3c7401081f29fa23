"""Issue 39: the app and the evaluator use only the public APIs of Streamlit and scipy.

Every ``.py`` under ``ovearth_core/``, ``pages/`` and ``app.py`` is read by AST (nothing is
imported) for a module of streamlit or scipy that is internal:

- a dotted name with a part that starts with ``_`` (``scipy.optimize._lsap``,
  ``streamlit._x``);
- streamlit's own machinery: ``streamlit.runtime``, ``streamlit.web``,
  ``streamlit.elements``, ``streamlit.proto`` (and anything under them).

Looked at: ``import a.b``, ``from a import b`` (as ``a.b``: ``from streamlit import runtime``
counts), attribute chains on a name bound to such a module (``st.runtime…``,
``st._bidi_component``), and module names given as strings to ``importlib`` (any of its
functions or classes, however imported), ``__import__``, ``LazyModule`` and ``sys.modules``,
directly or through a string constant of the module. The page scripts' JavaScript must not
find Streamlit's elements by their ``data-testid`` (test hooks, not an API).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WATCHED = ("streamlit", "scipy")
STREAMLIT_INTERNAL = ("runtime", "web", "elements", "proto")
# Callables that take a module's name as a string.
LOADERS = ("importlib", "__import__", "LazyModule", "sys.modules")


def internal(module: str) -> bool:
    """Whether the dotted name ``module`` is an internal module (or name) of streamlit or
    scipy."""
    parts = module.split(".")
    if parts[0] not in WATCHED:
        return False
    if any(p.startswith("_") for p in parts[1:]):
        return True
    return parts[0] == "streamlit" and len(parts) > 1 and parts[1] in STREAMLIT_INTERNAL


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` of a chain of attributes on a name, else ``None``."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def findings(source: str) -> list[str]:
    """Each internal streamlit or scipy module ``source`` names (``line: name``)."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # local name -> the dotted name it stands for
    strings: dict[str, str] = {}  # module-level string constants
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(
                node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, ast.Name):
                    strings[target.id] = node.value.value
    found: list[str] = []

    def check(module: str, node: ast.AST) -> None:
        if internal(module):
            found.append(f"{node.lineno}: {module}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                check(alias.name, node)
                top = alias.name.split(".")[0]
                bound[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            check(node.module, node)
            for alias in node.names:
                check(f"{node.module}.{alias.name}", node)
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted:
                head, _, rest = dotted.partition(".")
                if head in bound:
                    check(f"{bound[head]}.{rest}", node)
        elif isinstance(node, ast.Call):
            func = _dotted(node.func)
            if func is None:
                continue
            head, _, rest = func.partition(".")
            full = f"{bound.get(head, head)}{'.' + rest if rest else ''}"
            if not any(full == x or full.startswith(x + ".") for x in LOADERS):
                continue
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    check(arg.value, node)
                elif isinstance(arg, ast.Name) and arg.id in strings:
                    check(strings[arg.id], node)
    return found


def _sources() -> list[Path]:
    return sorted([ROOT / "app.py", *(ROOT / "ovearth_core").rglob("*.py"),
                   *(ROOT / "pages").rglob("*.py")])


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_internal_streamlit_or_scipy_module(path: Path) -> None:
    assert findings(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", sorted((ROOT / "pages").rglob("*.js")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_data_testid_in_the_pages_scripts(path: Path) -> None:
    assert "data-testid" not in path.read_text(encoding="utf-8")


def test_the_pages_have_scripts_and_sources_to_check() -> None:
    sources = {p.relative_to(ROOT).as_posix() for p in _sources()}
    assert {"app.py", "pages/common/viewer_card.py", "ovearth_core/matching.py"} <= sources
    assert (ROOT / "pages" / "common" / "viewer_card.js").is_file()


@pytest.mark.parametrize("source", [
    "from streamlit import runtime",
    "import streamlit.runtime.scriptrunner",
    "import streamlit.web.server as server",
    "from streamlit.elements.lib import layout_utils",
    "from streamlit.proto.Delta_pb2 import Delta",
    "from scipy.optimize._lsap import linear_sum_assignment",
    "from scipy.optimize import _lsap",
    "import streamlit as st\nst._bidi_component('x')",
    "import streamlit as st\nst.runtime.get_instance()",
    "import importlib\nimportlib.import_module('scipy.optimize._lsap')",
    "from importlib import import_module as load\nload('streamlit.runtime')",
    "import importlib.util\nNAME = 'scipy.optimize._lsap'\n"
    "def f():\n    return importlib.util.spec_from_file_location(NAME, 'x.so')",
    "import importlib.machinery as m\nm.ExtensionFileLoader('scipy.sparse._x', 'p')",
    "import sys\nLSAP: str = 'scipy.optimize._lsap'\nsys.modules.get(LSAP)",
    "__import__('streamlit.web.bootstrap')",
    "x = LazyModule('streamlit.proto.ForwardMsg_pb2', globals(), 'x')",
])
def test_the_check_finds_an_internal_module(source: str) -> None:
    assert findings(source), source


@pytest.mark.parametrize("source", [
    "import streamlit as st\nst.components.v2.component('x', js='')",
    "import streamlit as st\nst.session_state['a'] = 1",
    "from scipy.optimize import linear_sum_assignment",
    "from scipy.sparse.csgraph import connected_components",
    "import importlib\nimportlib.import_module('.errors', __name__)",
    "import importlib.util\nimportlib.util.find_spec('scipy')",
    "from streamlit.testing.v1 import AppTest",  # public (tests only, all the same)
    "import pandas._libs",  # not watched
    "_private = 'scipy.optimize._lsap'",  # a string alone loads nothing
])
def test_the_check_passes_public_use(source: str) -> None:
    assert findings(source) == [], source
