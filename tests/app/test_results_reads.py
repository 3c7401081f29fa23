"""Pages read the evaluator's results through the typed view (issue 39), never by string key.

A static check of every module under pages/: no subscript and no ``.get`` of a value that
holds the evaluator's result dict or a part of it. Such a value is an attribute
``.results`` (``Evaluation.results``, the core ``Run.results``), ``.per_sample``,
``.summary`` or ``.config`` read as a dict, a record's ``.json`` (handed to the core, never
read), a core ``Run.row(query_id)``, and whatever is taken out of one of those: a subscript,
a ``.get``/``.items``/``.values``, a name bound to it (by assignment, loop or unpacking),
a parameter some call of the same or another pages module passes it to, and what a pages
function returns from one. Besides, a string subscript by one of the output's top-level
keys (``["summary"]``, ``["per_sample"]``, ...) is refused wherever it is.

The rule is shown to refuse what it should on a table of snippets, and to find the reads
the pages made before the view (see the commit).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "pages"
# The output's blocks (its "task" and "warnings" are also other things' keys: the widget
# state's task, an audit's warnings).
TOP_KEYS = {"config", "summary", "per_sample", "per_category", "coverage"}
SOURCE_ATTRS = {"results", "per_sample", "summary", "config", "json"}
SOURCE_CALLS = {"row"}  # ovearth_core.run.Run.row: the per_sample dict of a query
PASS_THROUGH = {"get", "items", "values"}
Taint = bool | tuple  # a tuple: one per element of a tuple value


def _any(t: Taint) -> bool:
    return any(_any(x) for x in t) if isinstance(t, tuple) else bool(t)


@dataclass
class _Module:
    name: str
    tree: ast.Module
    label: str
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)


def _package_of(name: str, is_init: bool) -> str:
    return name if is_init else name.rsplit(".", 1)[0]


def _module(name: str, source: str, label: str, is_init: bool = False) -> _Module:
    tree = ast.parse(source)
    mod = _Module(name, tree, label)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mod.functions[node.name] = node
    package = _package_of(name, is_init)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for a in node.names:
                # ``from X import y``: y is a module X.y or a function of X; both kept.
                mod.imports[a.asname or a.name] = (base, a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                mod.imports[a.asname or a.name.split(".")[0]] = (a.name, None)
    return mod


class _Checker:
    """Taint of the evaluator's result dicts over a set of modules, to a fixed point."""

    def __init__(self, modules: list[_Module]):
        self.modules = {m.name: m for m in modules}
        self.names: set[tuple[int, str]] = set()  # (id of the scope node, name)
        self.params: set[tuple[str, str, int | str]] = set()  # (module, function, pos | name)
        self.returns: dict[tuple[str, str], Taint] = {}

    # --- resolution ---------------------------------------------------------------------
    def _function(self, mod: _Module, func: ast.expr) -> tuple[str, str] | None:
        if isinstance(func, ast.Name):
            if func.id in mod.functions:
                return mod.name, func.id
            target = mod.imports.get(func.id)
            if target and target[1] and target[0] in self.modules and \
                    target[1] in self.modules[target[0]].functions:
                return target[0], target[1]
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            target = mod.imports.get(func.value.id)
            if target:
                name = target[0] if target[1] is None else f"{target[0]}.{target[1]}"
                if name in self.modules and func.attr in self.modules[name].functions:
                    return name, func.attr
        return None

    # --- taint of an expression ---------------------------------------------------------
    def taint(self, mod: _Module, node: ast.AST, scopes: list[ast.AST]) -> Taint:
        if isinstance(node, ast.Attribute):
            return node.attr in SOURCE_ATTRS
        if isinstance(node, ast.Name):
            return any((id(s), node.id) in self.names for s in scopes)
        if isinstance(node, ast.Subscript):
            return _any(self.taint(mod, node.value, scopes))
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute):
                if f.attr in SOURCE_CALLS:
                    return True
                if f.attr in PASS_THROUGH and _any(self.taint(mod, f.value, scopes)):
                    return True
            target = self._function(mod, f)
            return self.returns.get(target, False) if target else False
        if isinstance(node, ast.BoolOp):
            return any(_any(self.taint(mod, v, scopes)) for v in node.values)
        if isinstance(node, ast.IfExp):
            return (_any(self.taint(mod, node.body, scopes))
                    or _any(self.taint(mod, node.orelse, scopes)))
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(self.taint(mod, e, scopes) for e in node.elts)
        if isinstance(node, (ast.NamedExpr, ast.Starred, ast.Await)):
            return self.taint(mod, node.value, scopes)
        return False

    def bind(self, target: ast.AST, taint: Taint, scope: ast.AST) -> bool:
        changed = False
        if isinstance(target, ast.Name):
            if _any(taint) and (id(scope), target.id) not in self.names:
                self.names.add((id(scope), target.id))
                changed = True
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = (taint if isinstance(taint, tuple) and len(taint) == len(target.elts)
                     else (_any(taint),) * len(target.elts))
            for t, p in zip(target.elts, parts, strict=True):
                changed |= self.bind(t, p, scope)
        elif isinstance(target, ast.Starred):
            changed |= self.bind(target.value, _any(taint), scope)
        return changed

    # --- one pass over a module ---------------------------------------------------------
    def propagate(self, mod: _Module) -> bool:
        changed = False

        def visit(node: ast.AST, scopes: list[ast.AST], func: str | None) -> None:
            nonlocal changed
            here = scopes[-1]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inner = [*scopes, node]
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        node.name in mod.functions and mod.functions[node.name] is node:
                    args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                    for i, a in enumerate([*node.args.posonlyargs, *node.args.args]):
                        if (mod.name, node.name, i) in self.params:
                            changed |= self.bind(ast.Name(a.arg), True, node)
                    for a in args:
                        if (mod.name, node.name, a.arg) in self.params:
                            changed |= self.bind(ast.Name(a.arg), True, node)
                    func = node.name
                for child in ast.iter_child_nodes(node):
                    visit(child, inner, func)
                return
            if isinstance(node, ast.Assign):
                t = self.taint(mod, node.value, scopes)
                for target in node.targets:
                    changed |= self.bind(target, t, here)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                changed |= self.bind(node.target, self.taint(mod, node.value, scopes), here)
            elif isinstance(node, ast.NamedExpr):
                changed |= self.bind(node.target, self.taint(mod, node.value, scopes), here)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                changed |= self.bind(node.target, _any(self.taint(mod, node.iter, scopes)),
                                     here)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                changed |= self.bind(node.optional_vars,
                                     self.taint(mod, node.context_expr, scopes), here)
            elif isinstance(node, ast.Return) and node.value is not None and func:
                t = self.taint(mod, node.value, scopes)
                key = (mod.name, func)
                if _any(t) and not _any(self.returns.get(key, False)):
                    self.returns[key] = t
                    changed = True
            elif isinstance(node, ast.Call):
                target = self._function(mod, node.func)
                if target:
                    marks = [i for i, a in enumerate(node.args)
                             if _any(self.taint(mod, a, scopes))]
                    marks += [k.arg for k in node.keywords
                              if k.arg and _any(self.taint(mod, k.value, scopes))]
                    for m in marks:
                        if (*target, m) not in self.params:
                            self.params.add((*target, m))
                            changed = True
            for child in ast.iter_child_nodes(node):
                visit(child, scopes, func)

        visit(mod.tree, [mod.tree], None)
        return changed

    # --- the reads ----------------------------------------------------------------------
    def reads(self, mod: _Module) -> list[str]:
        out: list[str] = []

        def visit(node: ast.AST, scopes: list[ast.AST]) -> None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                scopes = [*scopes, node]
            bad = False
            if isinstance(node, ast.Subscript):
                key = node.slice
                bad = _any(self.taint(mod, node.value, scopes)) or (
                    isinstance(key, ast.Constant) and key.value in TOP_KEYS)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "get":
                bad = _any(self.taint(mod, node.func.value, scopes))
            if bad:
                out.append(f"{mod.label}:{node.lineno}: {ast.unparse(node)}")
            for child in ast.iter_child_nodes(node):
                visit(child, scopes)

        visit(mod.tree, [mod.tree])
        return out


def string_key_reads(modules: list[_Module]) -> list[str]:
    """Every read of the evaluator's results by key in ``modules`` (``path:line: code``)."""
    checker = _Checker(modules)
    while any([checker.propagate(m) for m in modules]):
        pass
    return sorted({r for m in modules for r in checker.reads(m)})


def pages_modules(root: Path) -> list[_Module]:
    out = []
    for path in sorted((root / "pages").rglob("*.py")):
        rel = path.relative_to(root)
        parts = list(rel.with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_init else parts)
        out.append(_module(name, path.read_text(encoding="utf-8"), str(rel), is_init))
    return out


def test_no_page_reads_the_results_by_string_key() -> None:
    modules = pages_modules(ROOT)
    assert len(modules) > 20
    assert string_key_reads(modules) == []


def _reads(*sources: str) -> list[str]:
    mods = [_module(f"pages.common.m{i}", src, f"m{i}") for i, src in enumerate(sources)]
    return [r.split(": ", 1)[1] for r in string_key_reads(mods)]


VIEWS = """
def coverage_warnings(results, who=''):
    for w in results.get('warnings', ()):
        print(w['message'])
"""


@pytest.mark.parametrize(("sources", "found"), [
    # The output's top-level keys, wherever they are.
    (["s = run.evaluation.results['summary']"], ["run.evaluation.results['summary']"]),
    (["x = anything['per_category']"], ["anything['per_category']"]),
    (["m = run.evaluation.results['config']['modalities']"],
     ["run.evaluation.results['config']", "run.evaluation.results['config']['modalities']"]),
    # A name bound to a part of the results, and what is taken out of it.
    (["s = ev.results\nn = s['num_samples']"], ["s['num_samples']"]),
    (["def f(run):\n    r = run.row(q)\n    return r['seg']['iou']"],
     ["r['seg']", "r['seg']['iou']"]),
    (["for row in ev.run.per_sample:\n    print(row.get('bbox'))"], ["row.get('bbox')"]),
    (["n = sum((row.get(m) or {}).get('num_pred', 0) for row in ev.results['x'])"],
     ["(row.get(m) or {}).get('num_pred', 0)", "ev.results['x']", "row.get(m)"]),
    (["c = run.config\nprint(c['iou_threshold'])"], ["c['iou_threshold']"]),
    (["s = view.summary.json\nprint(s['seg'])"], ["s['seg']"]),
    # Through a function's parameter (same module, another module) and its return.
    (["def t(row):\n    return row['seg']\n\n"
      "def g(run, q):\n    return t(run.evaluation.run.row(q))"], ["row['seg']"]),
    ([VIEWS, "from pages.common import m0\nm0.coverage_warnings(evaluation.results)"],
     ["results.get('warnings', ())", "w['message']"]),
    (["def pair(ev, q):\n    return ev.sample(q), ev.row(q)\n\n"
      "def show(ev, q):\n    sample, row = pair(ev, q)\n    return row['seg'], sample.width"],
     ["row['seg']"]),
    # Not the results: the typed view, widget state, a table the page built, a core call.
    (["v = run.view\nprint(v.summary.seg.iou, v.row(q).bbox.matches[0])"], []),
    (["st.session_state['task'] = st.query_params.get('task')"], []),
    (["rows = run.evaluation.rows\nprint(rows[0]['failure'])"], []),
    (["figures.key_metric_bars(run.view.summary.json)"], []),
    (["def f(row):\n    return row['failure']\n\nf(table_rows[0])"], []),
])
def test_the_rule_refuses_what_it_should(sources: list[str], found: list[str]) -> None:
    assert _reads(*sources) == sorted(found)


@pytest.mark.usefixtures("fresh_caches")
def test_a_result_the_view_refuses_is_a_report_not_a_traceback(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The app reads its evaluation's view once, where it evaluates: a result that is not
    the evaluator's output (here a count made a string) stops at the validation report,
    naming the field, as bad input does."""
    from app_fixtures import app_on

    from ovearth_core import pipeline
    from ovearth_core.run import Run

    evaluate_cached = pipeline.evaluate_cached

    def spoiled(loaded, store):  # noqa: ANN001, ANN202 - the patched function's own
        run, from_cache = evaluate_cached(loaded, None)
        results = {**run.results, "summary": {**run.results["summary"], "num_samples": "195"}}
        return Run(results, run.samples, run.box_facts), from_cache

    monkeypatch.setattr(pipeline, "evaluate_cached", spoiled)
    at = app_on().run()
    assert not at.exception, [e.value for e in at.exception]
    [error] = at.error
    assert "field `summary.num_samples`: expected an integer; found str '195'" in error.value
