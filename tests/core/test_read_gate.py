"""The one gate (issue 48): no page, no command reads or lists a file any other way.

Every read of a file in ``pages/``, ``app.py`` and ``ovearth_core/`` goes through
``ovearth_core.files.open_input`` (and the readers built on it: ``read_bounded``,
``io.read_input``, ``io.read_json``...), every listing of a folder through
``ovearth_core.paths.folder_inputs``, which passes each file through the gate
``paths.check_input`` (inside the roots, a regular file within the cap; docs/security.md,
"The gate"). This test walks the code (every function, every module body) and fails on any
other read primitive: ``open()``, ``Path.open`` / ``read_text`` / ``read_bytes``,
``os.open``, ``os.listdir`` / ``scandir`` / ``walk``, ``glob``, ``Path.glob`` / ``rglob`` /
``iterdir``, ``json.load``, ``np.load`` / ``fromfile``, ``pandas.read_*``, ``tomllib.load``,
``zipfile`` / ``tarfile``, ``shutil.copy*``, PIL's ``Image.open`` and ``rasterio.open`` (any
``X.open(...)``), except

* an ``X.open(handle)`` whose ``handle`` was opened by ``files.open_input`` in the same
  function (PIL decoding a file the gate let through), and
* the reads of :data:`ALLOWED`: places that read no user path (the package's own files,
  the result cache's folder, the app's upload folder, the writes' own folders) or that are
  the gate itself, each with its reason. An entry no longer needed fails too.

``test_a_planted_read_is_caught`` plants raw reads in a page and sees them caught.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [ROOT / "app.py", *sorted((ROOT / "pages").rglob("*.py")),
           *sorted((ROOT / "ovearth_core").rglob("*.py"))]

# Calls of ``module.function`` that read or list files.
MODULE_READS = {
    ("os", "open"), ("os", "listdir"), ("os", "scandir"), ("os", "walk"), ("os", "fwalk"),
    ("io", "open"), ("glob", "glob"), ("glob", "iglob"), ("json", "load"),
    ("np", "load"), ("np", "fromfile"), ("np", "memmap"), ("np", "loadtxt"),
    ("np", "genfromtxt"), ("numpy", "load"), ("tomllib", "load"), ("pickle", "load"),
    ("zipfile", "ZipFile"), ("tarfile", "open"), ("gzip", "open"), ("bz2", "open"),
    ("lzma", "open"), ("shutil", "copy"), ("shutil", "copyfile"), ("shutil", "copy2"),
    ("shutil", "copytree"), ("codecs", "open"), ("linecache", "getline"),
    ("fileinput", "input"),
}
# Method names that read or list whatever they are called on (a path, PIL's Image,
# rasterio, a zip archive...).
METHOD_READS = {"open", "read_text", "read_bytes", "glob", "rglob", "iterdir", "walk"}
NAME_READS = {"open", "ZipFile", "TarFile", "listdir", "scandir"}
# The gate's reader: a handle it returns may be handed to a decoder.
GATE_OPENERS = {"open_input"}


@dataclass(frozen=True)
class Read:
    """A read primitive found in the code: file, function (dotted; ``<module>`` for the
    module body), line and the call as written."""

    file: str
    function: str
    line: int
    call: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}: {self.call}"


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{_dotted(node.func)}(...)"
    return type(node).__name__


def _is_read(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in NAME_READS
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value
    if isinstance(owner, ast.Name) and (owner.id, func.attr) in MODULE_READS:
        return True
    if isinstance(owner, ast.Name) and owner.id in {"pd", "pandas"} and func.attr.startswith(
            "read_"):
        return True
    return func.attr in METHOD_READS


def _gate_handles(function: ast.AST) -> set[str]:
    """Names bound in ``function`` to what ``files.open_input`` returned."""
    out = set()
    for node in ast.walk(function):
        items = node.items if isinstance(node, ast.With) else []
        for item in items:
            call = item.context_expr
            if (isinstance(call, ast.Call) and _dotted(call.func).split(".")[-1] in GATE_OPENERS
                    and isinstance(item.optional_vars, ast.Name)):
                out.add(item.optional_vars.id)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _dotted(
                node.value.func).split(".")[-1] in GATE_OPENERS:
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _decodes_a_gated_handle(call: ast.Call, handles: set[str]) -> bool:
    return (isinstance(call.func, ast.Attribute) and call.func.attr == "open" and bool(
        call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id in handles)


class _Finder(ast.NodeVisitor):
    def __init__(self, file: str):
        self.file, self.scope, self.found = file, ["<module>"], []
        self.handles: list[set[str]] = [set()]

    def _enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.handles.append(self.handles[-1] | (
            set() if isinstance(node, ast.ClassDef) else _gate_handles(node)))
        self.generic_visit(node)
        self.scope.pop()
        self.handles.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _enter

    def visit_Call(self, node: ast.Call) -> None:
        if _is_read(node) and not _decodes_a_gated_handle(node, self.handles[-1]):
            name = ".".join(s for s in self.scope if s != "<module>") or "<module>"
            self.found.append(Read(self.file, name, node.lineno, _dotted(node.func)))
        self.generic_visit(node)


def raw_reads(source: str, file: str) -> list[Read]:
    """Every read primitive of ``source`` not routed through the gate."""
    finder = _Finder(file)
    finder.visit(ast.parse(source))
    return finder.found


def _all_reads() -> Iterator[Read]:
    for path in SCANNED:
        yield from raw_reads(path.read_text(), str(path.relative_to(ROOT)))


# (file, function) -> why its reads need no gate. Keep it short: every entry is a place a
# reviewer must agree reads no user path (or is the gate).
ALLOWED: dict[tuple[str, str], str] = {
    # -- the gate itself
    ("ovearth_core/files.py", "open_input"):
        "THE reader: a regular file within the cap, checked on stat and on the descriptor",
    ("ovearth_core/paths.py", "folder_inputs"):
        "THE lister: the folder confined to the roots, each file through check_input",
    # -- writes (files.py, the one write path): folders and targets of outputs, not inputs
    ("ovearth_core/files.py", "_stream"): "opens an output pipe or device for writing",
    ("ovearth_core/files.py", "atomic_write"): "the output's folder, to rename inside it",
    ("ovearth_core/files.py", "_open_dirs"): "an output's folders, O_NOFOLLOW one by one",
    ("ovearth_core/files.py", "_write_temp"): "creates the temporary output (O_EXCL)",
    ("ovearth_core/files.py", "append_line"):
        "the review sidecar being appended to (confined, O_NOFOLLOW, one name)",
    ("ovearth_core/files.py", "FolderWriter.place"):
        "creates the copy in the output folder; the source is read by open_input",
    ("ovearth_core/files.py", "_non_empty"): "whether an output folder is empty (no read)",
    ("ovearth_core/cli.py", "_cannot_write"): "opens os.devnull",
    ("ovearth_core/hosting/bundle.py", "zip_bytes"): "writes a zip into memory",
    ("ovearth_core/analysis/leaderboard_cli.py", "main"):
        "names the folder's files --output must not replace (nothing read; folder_files "
        "gates them before any read)",
    # -- the package's own files, the app's own folders
    ("pages/common/viewer_card.py", "<module>"): "the bundled viewer_card.js beside it",
    ("ovearth_core/cache.py", "source_files"): "the evaluator's own source files",
    ("ovearth_core/cache.py", "files_digest"): "the package's source files (code digest)",
    ("ovearth_core/hosting/bundle.py", "package_files"):
        "the package's own Python files, copied into the scoring program",
    ("ovearth_core/cache.py", "ResultCache._read"):
        "an entry of the result cache's own folder (O_NOFOLLOW, regular only)",
    ("ovearth_core/cache.py", "ResultCache.entries"): "the result cache's own folder",
    ("pages/common/data.py", "prune_uploads"): "the app's own upload folder (its temp dir)",
    # -- readers handed paths that passed the gate
    ("ovearth_core/georef.py", "open_raster"):
        "the one rasterio opener (GDAL opens by name): called with paths the gate let "
        "through (image_paths.resolve_image_path inside the images folder, "
        "convert.source_files); checks a regular file first, GTiff driver only",
    # -- the hosted scorer: the participant's archive is the root (hosting/archive.py is the
    # scorer's own gate: docs/hosting.md "A participant's archive")
    ("ovearth_core/hosting/archive.py", "find_json"):
        "walks the unpacked archive without recursion or following links, within the entry "
        "and depth limits; the one JSON found is read without following links",
    ("ovearth_core/hosting/archive.py", "declared_entries"):
        "reads the upload's end-of-central-directory record (the entry count) before "
        "Python parses the zip: the archive EvalAI hands over, not a user-named path",
    ("ovearth_core/hosting/archive.py", "read_json_member"):
        "the upload EvalAI hands over; every entry checked (encryption, method, names, "
        "links, duplicates), the one member inflated within the size cap, entries never "
        "become paths",
    # -- names only, nothing read
    ("ovearth_core/convert/voc.py", "_skipped"):
        "lists the names of the annotations folder's entries that are not converted, so "
        "the summary can say so; none of them is opened (the .xml files come from "
        "source_files, through the gate)",
    ("ovearth_core/analysis/leaderboard.py", "_rank_code"):
        "the package's own analysis/*.py files (the rank cache's code digest)",
}


def test_every_read_goes_through_the_gate() -> None:
    found = list(_all_reads())
    outside = [str(r) for r in found if (r.file, r.function) not in ALLOWED]
    assert not outside, ("reads or listings that go round the gate (use files.open_input / "
                         "read_bounded / io.read_input for a file, paths.folder_inputs for a "
                         "folder; or add a reasoned ALLOWED entry for a non-user path):\n"
                         + "\n".join(outside))


def test_every_allowed_entry_is_still_needed() -> None:
    used = {(r.file, r.function) for r in _all_reads()}
    assert not set(ALLOWED) - used, sorted(set(ALLOWED) - used)


PLANTS = [
    "json.loads(Path(folder).read_text())",
    "sorted(folder.glob('*.json'))",
    "os.listdir(folder)",
    "open(folder / 'x.json').read()",
    "Image.open(folder / 'x.png')",
    "rasterio.open(str(folder / 'x.tif'))",
    "zipfile.ZipFile(folder / 'x.zip')",
    "np.load(folder / 'x.npy')",
    "json.load(handle)",
    "[p for p in folder.iterdir()]",
    "os.walk(folder)",
    "pd.read_csv(folder / 'x.csv')",
]


@pytest.mark.parametrize("plant", PLANTS)
def test_a_planted_read_is_caught(plant: str) -> None:
    """A raw read planted in the Audit page's ``inputs_ui`` (where the submissions folder
    is read) is found, named by file, function and line."""
    page = ROOT / "pages" / "Audit.py"
    source = page.read_text()
    anchor = "    state.sync_url(**state.audit_params())\n"
    assert anchor in source
    planted = source.replace(anchor, anchor + f"    planted = {plant}\n")
    line = planted[:planted.index("planted =")].count("\n") + 1
    assert raw_reads(source, "pages/Audit.py") == []
    found = raw_reads(planted, "pages/Audit.py")
    assert [(r.function, r.line) for r in found] == [("inputs_ui", line)], found


def test_a_decoder_on_the_gates_handle_is_not_a_raw_read() -> None:
    gated = ("def picture(path):\n"
             "    with files.open_input(path, CAP) as handle, Image.open(handle) as img:\n"
             "        return img.size\n")
    raw = gated.replace("Image.open(handle)", "Image.open(path)")
    assert raw_reads(gated, "x.py") == []
    assert [r.call for r in raw_reads(raw, "x.py")] == ["Image.open"]
