"""Every flag a message or a doc names exists, on the command it is named for (issue 46).

``from-coco`` refused a 104.9-megapixel predicted mask suggesting ``--large-masks``, a flag
``from-coco`` does not take. Here every ``--flag`` is collected

* from the string literals of ``ovearth_core/`` (messages, help texts, docstrings; an
  f-string with its ``{NAME}`` parts kept), except the flags an ``add_argument`` call
  defines, each attributed to the command whose module raises it (:data:`MODULE_COMMANDS`:
  a core module's message reaches the evaluator's own command, so it must take the flag);
  a message that names the commands a flag belongs to ("--large-masks of
  {EXTENSION_COMMANDS}") attributes it to those;
* from README.md and docs/*.md: in a code span or block, to the command it starts with
  (``python -m ovearth_core.X [sub]``, ``ovearth-eval``, ``streamlit run app.py --``: the
  app's own); a flag alone in prose, to any of the project's commands;

and checked against the flags each command's own ``--help`` lists (argparse's, the public
interface; the app's are :mod:`ovearth_core.paths`'s).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from cli_inprocess import run_module

from ovearth_core import paths
from ovearth_core.options import EXTENSION_COMMANDS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ovearth_core"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:[-.][a-z0-9]+)*")

# Each command as it is run, with its subcommands.
COMMANDS: dict[str, list[str]] = {
    "ovearth-eval": ["ovearth_core"],
    "analysis": ["ovearth_core.analysis"],
    "suite": ["ovearth_core.suite"],
    "report": ["ovearth_core.report"],
    "leaderboard": ["ovearth_core.leaderboard"],
    "export geojson": ["ovearth_core.export", "geojson"],
    "synth": ["ovearth_core.synth"],
    "audit": ["ovearth_core.audit"],
    **{f"hosting {s}": ["ovearth_core.hosting", s] for s in ("codabench", "evalai", "score")},
    **{f"convert {s}": ["ovearth_core.convert", s] for s in (
        "from-coco", "from-dota", "from-voc", "from-rsvg", "from-label-maps", "to-coco")},
    **{f"review {s}": ["ovearth_core.review", s] for s in (
        "list", "export", "views", "delete-view", "rename-view", "tag", "untag", "note")},
    # The speed benchmarks' commands (docs/benchmarks.md).
    **{f"benchmarks.{m}": [f"benchmarks.{m}"] for m in (
        "run", "convert", "browser_timing", "import_times", "nms_ap", "coco_peers")},
}
HOSTING = [c for c in COMMANDS if c.startswith("hosting ")]
CONVERT = [c for c in COMMANDS if c.startswith("convert ")]
REVIEW = [c for c in COMMANDS if c.startswith("review ")]
APP_FLAGS = frozenset({paths.FLAG, paths.DATA_FLAG})
# Flags of other programs the docs show how to run.
EXTERNAL = {"streamlit": {"--server.port", "--server.address", "--server.headless",
                          "--server.maxuploadsize", "--server.enablecors"},
            "pytest": {"--runslow", "--timeout", "--lf", "--durations"}}

# Which command raises the messages of a module: the first matching prefix (paths relative
# to ovearth_core/). A module of the evaluator reaches its own command; the commands' shared
# helpers (the cache's and the workers' options) reach those that take them.
MODULE_COMMANDS: tuple[tuple[str, list[str]], ...] = (
    ("convert/coco.py", ["convert from-coco", "convert to-coco"]),
    ("convert/dota.py", ["convert from-dota"]),
    ("convert/chips.py", ["convert from-dota"]),
    ("convert/voc.py", ["convert from-voc"]),
    ("convert/rsvg.py", ["convert from-rsvg"]),
    ("convert/label_maps.py", ["convert from-label-maps"]),
    ("convert/", CONVERT),
    ("analysis/export.py", ["export geojson"]),
    ("export.py", ["export geojson"]),
    ("analysis/leaderboard", ["leaderboard"]),
    ("leaderboard.py", ["leaderboard"]),
    ("analysis/", ["analysis"]),
    ("report/", ["report"]),
    ("hosting/", HOSTING),
    ("audit/", ["audit"]),
    ("synth/", ["synth"]),
    ("review.py", REVIEW),
    ("suite.py", ["suite"]),
    ("paths.py", ["app"]),
    ("files.py", [*CONVERT, "review export"]),  # the folder writes: converters, exports
    ("cache.py", ["leaderboard", "report"]),
    ("workers.py", ["leaderboard"]),
    ("viz/", []),  # drawing: the app's and the report's, no flags of their own
    ("", ["ovearth-eval"]),
)
# "--flag of the analysis, report, ... commands": the commands a message names for a flag.
NAMED = re.compile(r"(--[a-z][a-z0-9-]*) of (?:\{EXTENSION_COMMANDS\}|" +
                   re.escape(EXTENSION_COMMANDS) + ")")
NAMED_COMMANDS = ["analysis", "report", "suite", "leaderboard", "audit", *HOSTING[:2]]


# Commands whose --help runs as a real process: those no other test runs as one (their
# shipped entry point); the others' run in this process (tests/cli_inprocess.py).
REAL_PROCESS = frozenset({"export geojson",
                          *(c for c in COMMANDS if c.startswith("benchmarks."))})


@cache
def accepted(command: str) -> frozenset[str]:
    """The flags ``command --help`` lists."""
    if command == "app":
        return APP_FLAGS
    if command in REAL_PROCESS:
        done = subprocess.run([sys.executable, "-m", *COMMANDS[command], "--help"], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    else:
        done = run_module(*COMMANDS[command], "--help", cwd=ROOT)
    assert done.returncode == 0, (command, done.stderr)
    return frozenset(FLAG.findall(done.stdout)) | {"--help"}


def any_command() -> frozenset[str]:
    return frozenset().union(*map(accepted, COMMANDS), APP_FLAGS)


def commands_of(module: str) -> list[str]:
    return next(cmds for prefix, cmds in MODULE_COMMANDS if module.startswith(prefix))


# ---------------------------------------------------------------- the package's literals


def _text(node: ast.AST) -> str | None:
    """A string constant's text, or an f-string's with each ``{NAME}`` part kept."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else
                       "{" + ast.unparse(v.value) + "}" for v in node.values)
    return None


def literals(path: Path) -> list[tuple[int, str, bool]]:
    """``(line, text, is_docstring)`` of the strings of a module naming a flag, without the
    flags ``add_argument`` defines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defining: set[int] = set()
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            defining.update(id(a) for a in node.args)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) \
                and node.body and isinstance(node.body[0], ast.Expr):
            docstrings.add(id(node.body[0].value))
    out = []
    for node in ast.walk(tree):
        text = _text(node)
        if text is None or id(node) in defining or not FLAG.search(text):
            continue
        if isinstance(node, ast.Constant) and any(
                isinstance(p, ast.JoinedStr) and node in p.values for p in ast.walk(tree)):
            continue  # a part of an f-string: checked with it
        out.append((node.lineno, text, id(node) in docstrings))
    return out


def wrong_flags(module: str, text: str, docstring: bool) -> list[str]:
    """The flags of one literal that the commands it is attributed to do not take: those a
    message names the commands of (each must take it), those after a command line the
    message shows (that command), else the command(s) raising the module's messages (one
    of them: a module serving several subcommands raises each message from one of them);
    a docstring's, any command."""
    problems = []
    named = {m.group(1) for m in NAMED.finditer(text)}
    runs = list(RUNS.finditer(text))
    for m in FLAG.finditer(text):
        flag = m.group()
        before = [r for r in runs if r.start() < m.start()]
        shown = _command_of(before[-1]) if before else None
        if flag in named:
            problems += [f"{flag}: not a flag of {c}" for c in NAMED_COMMANDS
                         if flag not in accepted(c)]
        elif shown in COMMANDS or shown == "app":
            if flag not in accepted(shown):
                problems.append(f"{flag}: not a flag of {shown} (the command shown)")
        elif docstring or not commands_of(module):
            if flag not in any_command():
                problems.append(f"{flag}: no command takes it")
        elif not any(flag in accepted(c) for c in commands_of(module)):
            problems.append(f"{flag}: not a flag of {' or '.join(commands_of(module))}")
    return list(dict.fromkeys(problems))


def package_problems() -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for line, text, docstring in literals(path):
            problems += [f"ovearth_core/{module}:{line}: {p}"
                         for p in wrong_flags(module, text, docstring)]
    return problems


def test_the_collector_finds_a_wrong_flag(tmp_path: Path) -> None:
    """The test can fail: from-coco's message of c100000, the spec's cap with its old hint,
    and a core message naming a flag the evaluator lacks."""
    old = ("at most 100,000,000 pixels (the spec's cap on a predicted mask; --large-masks, "
           "or 'Masks beyond the spec's cap' in the app, takes up to 536,870,911)")
    assert wrong_flags("masks.py", old, False) == ["--large-masks: not a flag of ovearth-eval"]
    assert wrong_flags("convert/coco.py", old, False) == [
        "--large-masks: not a flag of convert from-coco or convert to-coco"]
    shown = "a COCO file: python -m ovearth_core.convert from-coco --instances F --task x"
    assert wrong_flags("io.py", shown, False) == [
        "--task: not a flag of convert from-coco (the command shown)"]
    fixed = "--large-masks of {EXTENSION_COMMANDS}, or ..."
    assert wrong_flags("masks.py", fixed, False) == []
    assert wrong_flags("cli.py", "see --no-such-flag", True) == [
        "--no-such-flag: no command takes it"]
    module = tmp_path / "m.py"
    module.write_text('"""Doc naming --doc-flag."""\n'
                      'p.add_argument("--defined", help="x")\n'
                      'X = 1\nraise E(f"use --bad-{X} or --other")\n')
    found = literals(module)
    assert [(line, doc) for line, _, doc in found] == [(1, True), (4, False)]
    assert found[1][1] == "use --bad-{X} or --other"


def test_every_flag_a_message_names_is_taken_by_its_command() -> None:
    assert package_problems() == []


# ---------------------------------------------------------------------------- the docs

CODE_SPAN = re.compile(r"`([^`]+)`")
RUNS = re.compile(r"(?:python -m |\.venv/bin/python -m )((?:ovearth_core|benchmarks)"
                  r"(?:\.[a-z_]+)*)(?:\s+([a-z][a-z-]+))?|(ovearth-eval)|"
                  r"(streamlit run app\.py)|(pytest)|(streamlit)|"
                  r"(?<![\w-])(from-coco|from-dota|from-voc|from-rsvg|from-label-maps|to-coco|"
                  r"export geojson)(?![\w-])")


def _command_of(match: re.Match[str]) -> str | None:
    """The :data:`COMMANDS` key (or ``app``, ``pytest``, ``streamlit``) a run names."""
    module, sub, evaluator, app, pytest_, streamlit, bare = match.groups()
    if bare:
        return f"convert {bare}" if bare != "export geojson" else bare
    if evaluator:
        return "ovearth-eval"
    if app:
        return "app"
    if pytest_ or streamlit:
        return pytest_ or streamlit
    for name, argv in COMMANDS.items():
        if argv[0] == module and (len(argv) == 1 or argv[1] == sub):
            return name
    return None


def _ok(flag: str, owner: str | None) -> bool:
    if owner in EXTERNAL:
        return flag in EXTERNAL[owner] or flag in any_command()
    if owner == "app":
        return flag in APP_FLAGS or flag.startswith("--server.")
    if owner in COMMANDS:
        return flag in accepted(owner)
    return flag in any_command()


def doc_problems(path: Path) -> list[str]:
    """Flags of ``path`` no command they are attributed to takes: in a fenced block, the
    command of its line (with continuations); in a code span, the command before it; a
    flag alone in prose, any command (prose names flags of several commands at once: the
    attribution there would be a guess)."""
    problems = []
    text = path.read_text(encoding="utf-8")
    blocks = re.split(r"^(?:```|~~~).*$", text, flags=re.M)
    for k, block in enumerate(blocks):
        fenced = k % 2 == 1
        units = (re.split(r"(?<!\\)\n(?=\S)", block) if fenced
                 else re.split(r"\n\s*\n", block))
        for unit in units:
            spans = [unit] if fenced else CODE_SPAN.findall(unit)
            for span in spans:
                runs = list(RUNS.finditer(span))
                for m in FLAG.finditer(span):
                    before = [r for r in runs if r.start() < m.start()]
                    flag = m.group()
                    owners = [_command_of(before[-1])] if before else [None]
                    if not any(_ok(flag, owner) for owner in owners):
                        problems.append(f"{path.name}: {flag} ({' or '.join(map(str, owners))})"
                                        f" in {span[:80]!r}")
    return problems


def test_the_doc_collector_attributes_flags(tmp_path: Path) -> None:
    doc = tmp_path / "d.md"
    doc.write_text("Run `python -m ovearth_core.convert from-coco --large-masks` or\n"
                   "`ovearth-eval --concave-obb`; `--nope-flag` alone.\n\n"
                   "```sh\nstreamlit run app.py -- --data DIR\n"
                   "python -m ovearth_core.analysis --concave-obb \\\n    --large-masks\n```\n")
    found = doc_problems(doc)
    assert len(found) == 3, found
    assert "--large-masks (convert from-coco)" in found[0]
    assert "--concave-obb (ovearth-eval)" in found[1]
    assert "--nope-flag (None)" in found[2]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_flag_a_doc_names_is_taken_by_its_command(path: Path) -> None:
    assert doc_problems(path) == []
