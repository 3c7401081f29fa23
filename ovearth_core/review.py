"""Review sidecar: tags, notes and saved views beside a benchmark, in one JSON-lines file.

The file is ``<folder of the ground truth>/.ovearth/review.jsonl`` (:func:`sidecar_for`):
beside the benchmark, never inside the user's ground truth or predictions. Each line is one
event, a JSON object, appended and never rewritten::

    {"v": 1, "ts": "2026-12-01T10:25:28.123+00:00", "event": "tag", "task": "open_vocabulary",
     "query_id": "ov_000001", "tag": "gt_error"}
    {"v": 1, "ts": "...", "event": "tag", "task": "referring", "query_id": "ref_000002",
     "object": {"source": "gt", "modality": "bbox", "index": 1}, "tag": "duplicate"}
    {"v": 1, "ts": "...", "event": "note", "task": "open_vocabulary", "query_id": "ov_000001",
     "text": "the second tank is not annotated"}
    {"v": 1, "ts": "...", "event": "save_view", "name": "tiny misses",
     "params": {"data": "assets/demo", "task": "vocabulary", "failed": "1"}}
    {"v": 1, "ts": "...", "event": "rename_view", "name": "tiny misses",
     "new_name": "tiny misses (HBB)"}
    {"v": 1, "ts": "...", "event": "delete_view", "name": "tiny misses (HBB)"}

``event`` is ``tag``, ``untag``, ``note`` (the latest note of a target is its note; an empty
``text`` removes it), ``save_view`` (a saved view is the app's link parameters, see
``pages/common/state.py``; saving a name again replaces it), ``delete_view`` (a tombstone:
the view is gone, its earlier lines stay) or ``rename_view`` (``name`` becomes ``new_name``,
replacing a view of that name; one line, so a reader never sees both or neither). ``task`` is
the ground truth's task key; ``object`` (optional) names one GT or predicted object of the
query: ``source`` ``gt`` or ``pred``, ``modality`` ``bbox``, ``oriented_bbox`` or
``segmentation``, ``index`` its position in that list. ``by`` (optional) says who wrote it.

Writes are one ``write(2)`` of one line on a descriptor opened with ``O_APPEND`` under an
exclusive ``flock``, then ``fsync``: two sessions writing at once both land, whole, in
file order. They go through :func:`ovearth_core.files.append_line`, confined to the
benchmark's folder: ``.ovearth`` and ``review.jsonl`` must be a real folder and a regular
file (a symbolic link, a pipe or a device is refused, nothing is written). When the file
ends mid-line (a crash, a full disk), the new event starts on a fresh line and the torn
line is reported, never merged into the next record. Ids, tags and view names are
printable text (no control characters); every text is UTF-8.

The current state (:func:`load_state`) folds the events in order; the file is read only
if it is a regular file within the input cap (:func:`ovearth_core.files.read_bounded`),
so a pipe or a device is reported at once, never read. A line that is not a valid event is
reported (``problems``) and skipped, never fatal; reading never raises.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from . import files, paths
from .cli import dump_json
from .errors import OVEarthInputError, Problem
from .image_paths import ImagePathError, resolve_image_path
from .io import read_json
from .types import TASK_KEYS

SIDECAR_DIR = ".ovearth"
SIDECAR_NAME = "review.jsonl"
VERSION = 1
BUILTIN_TAGS = ("gt_error", "ambiguous_query", "model_error", "duplicate")
EVENTS = ("tag", "untag", "note", "save_view", "delete_view", "rename_view")
SOURCES = ("gt", "pred")
OBJECT_MODALITIES = ("bbox", "oriented_bbox", "segmentation")
MAX_TAG = 64


@dataclass(frozen=True, order=True)
class Target:
    """What a tag or note is on: a query, or one of its GT / predicted objects."""

    task: str  # ground-truth task key: open_vocabulary, referring, reasoning
    query_id: str
    source: str | None = None  # "gt" or "pred" for an object
    modality: str | None = None
    index: int | None = None

    @property
    def is_object(self) -> bool:
        return self.source is not None

    def as_fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"task": self.task, "query_id": self.query_id}
        if self.is_object:
            out["object"] = {"source": self.source, "modality": self.modality,
                             "index": self.index}
        return out


@dataclass(frozen=True)
class Note:
    text: str
    ts: str


@dataclass(frozen=True)
class View:
    name: str
    params: dict[str, str]
    ts: str


@dataclass
class ReviewState:
    """The sidecar's current state (events folded in file order)."""

    tags: dict[Target, frozenset[str]] = field(default_factory=dict)
    notes: dict[Target, Note] = field(default_factory=dict)
    views: dict[str, View] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    num_events: int = 0

    @property
    def unreadable(self) -> Problem | None:
        """Why the file could not be read at all (a pipe, a device, a link, too large),
        or ``None``: then its state is unknown, not empty."""
        return next((p for p in self.problems if p.line is None), None)

    def query_tags(self, task: str) -> dict[str, frozenset[str]]:
        """``{query_id: tags}`` of one task; an object's tags count for its query too."""
        out: dict[str, set[str]] = {}
        for target, tags in self.tags.items():
            if target.task == task and tags:
                out.setdefault(target.query_id, set()).update(tags)
        return {q: frozenset(t) for q, t in out.items()}

    def tagged(self, task: str, tag: str) -> list[str]:
        """Query ids of ``task`` tagged ``tag`` (on the query or an object), sorted."""
        return sorted(q for q, tags in self.query_tags(task).items() if tag in tags)

    def all_tags(self) -> list[str]:
        """The built-in tags, then every free tag in use, alphabetically."""
        used = set().union(*self.tags.values()) if self.tags else set()
        return [*BUILTIN_TAGS, *sorted(used - set(BUILTIN_TAGS))]


def sidecar_for(gt_path: str | os.PathLike[str]) -> Path:
    """The review file of the benchmark whose ground truth is ``gt_path``."""
    return Path(gt_path).resolve().parent / SIDECAR_DIR / SIDECAR_NAME


def task_key(task: str) -> str:
    """Ground-truth task key of a CLI task name (``vocabulary``) or of a key itself."""
    if task in TASK_KEYS.values():
        return task
    if task in TASK_KEYS:
        return TASK_KEYS[task]
    raise OVEarthInputError([Problem("(options)", "task", " or ".join(TASK_KEYS), repr(task))])


def _clean_tag(tag: str) -> str:
    text = str(tag).strip()
    if not text or len(text) > MAX_TAG or not _printable(text):
        raise OVEarthInputError([Problem("(review)", "tag", f"1 to {MAX_TAG} printable "
                                         "characters", repr(tag))])
    return text


def _printable(text: str) -> bool:
    """No control characters, line or paragraph separators, nor lone surrogates."""
    return text.isprintable() and _utf8(text)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes of a command line that are not UTF-8
        return False
    return True


Notify = Callable[[str], None]


def _root(path: Path) -> Path:
    """The folder a sidecar write is confined to: the benchmark's folder for
    ``DIR/.ovearth/review.jsonl`` (so ``.ovearth`` is checked too), else its folder."""
    return path.parent.parent if path.parent.name == SIDECAR_DIR else path.parent


def _refusal(err: files.FileRefused, field_: str = "(file)") -> OVEarthInputError:
    return OVEarthInputError([Problem(err.path, field_, err.expected, err.found)])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def append(path: str | os.PathLike[str], event: Mapping[str, Any],
           notify: Notify | None = None) -> dict[str, Any]:
    """Append one event (``v`` and ``ts`` added) and return it as written.

    The line is written whole by :func:`ovearth_core.files.append_line` (creating the
    folder and file when needed; a link or special file is refused). ``notify`` hears of
    a torn last line the new event was kept apart from.
    """
    record = {"v": VERSION, "ts": _now(), **event}
    problem = _event_problem(record)
    if problem:
        field_, expected = problem
        raise OVEarthInputError([Problem(str(path), field_, expected,
                                         ascii(_found(record, field_)))])
    line = (json.dumps(record, ensure_ascii=False, separators=(", ", ": ")) + "\n").encode()
    target = Path(path)
    try:
        torn = files.append_line(_root(target), target, line)
    except files.FileRefused as err:
        raise _refusal(err) from None
    if torn is not None and notify is not None:
        notify(f"note: {target} ended mid-line (line {torn.line}: "
               f"{torn.kept.decode(errors='replace')!r}); that line is kept as it is (and "
               f"reported when read); the new event is line {torn.line + 1}")
    return record


def _found(record: Mapping[str, Any], field_: str) -> object:
    value: Any = record
    for key in field_.split("."):
        value = value.get(key, "<missing>") if isinstance(value, dict) else value
    return value


def _by(by: str | None) -> dict[str, str]:
    return {"by": by} if by else {}


def tag(path: str | os.PathLike[str], target: Target, name: str, by: str | None = None,
        notify: Notify | None = None) -> dict[str, Any]:
    return append(path, {"event": "tag", **target.as_fields(), "tag": _clean_tag(name),
                         **_by(by)}, notify)


def untag(path: str | os.PathLike[str], target: Target, name: str, by: str | None = None,
          notify: Notify | None = None) -> dict[str, Any]:
    return append(path, {"event": "untag", **target.as_fields(), "tag": _clean_tag(name),
                         **_by(by)}, notify)


def note(path: str | os.PathLike[str], target: Target, text: str, by: str | None = None,
         notify: Notify | None = None) -> dict[str, Any]:
    return append(path, {"event": "note", **target.as_fields(), "text": str(text),
                         **_by(by)}, notify)


def save_view(path: str | os.PathLike[str], name: str, params: Mapping[str, str],
              notify: Notify | None = None) -> dict[str, Any]:
    """Save (or replace) a named view: the app's link parameters."""
    return append(path, {"event": "save_view", "name": _clean_tag(name),
                         "params": {str(k): str(v) for k, v in params.items()}}, notify)


def delete_view(path: str | os.PathLike[str], name: str, notify: Notify | None = None,
                ) -> dict[str, Any]:
    """Delete a saved view: a tombstone line (the file is only ever appended to)."""
    return append(path, {"event": "delete_view", "name": _clean_tag(name)}, notify)


def rename_view(path: str | os.PathLike[str], name: str, new_name: str,
                notify: Notify | None = None) -> dict[str, Any]:
    """Rename a saved view (one line; a view already called ``new_name`` is replaced)."""
    return append(path, {"event": "rename_view", "name": _clean_tag(name),
                         "new_name": _clean_tag(new_name)}, notify)


def _all_utf8(value: object) -> bool:
    if isinstance(value, str):
        return _utf8(value)
    if isinstance(value, dict):
        return all(_all_utf8(k) and _all_utf8(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_all_utf8(v) for v in value)
    return True


def _name_problem(e: Mapping[str, Any], key: str, what: str) -> tuple[str, str] | None:
    value = e.get(key)
    if not isinstance(value, str) or not value:
        return key, what
    if not _printable(value):
        return key, f"{what} without control characters (printable UTF-8 text)"
    return None


def _event_problem(e: Mapping[str, Any], check_utf8: bool = True,
                   ) -> tuple[str, str] | None:
    """``(field, expected)`` of what is wrong with an event (``None`` when it is valid);
    ``check_utf8=False`` when its text is known to be UTF-8."""
    kind = e.get("event")
    if kind not in EVENTS:
        return "event", f"one of {', '.join(EVENTS)}"
    for key, value in e.items() if check_utf8 else ():
        if not _all_utf8(value):
            return key, "text in UTF-8 (found bytes that are not UTF-8)"
    if kind in ("save_view", "delete_view", "rename_view"):
        problem = _name_problem(e, "name", "a view name")
        if problem is None and kind == "rename_view":
            problem = _name_problem(e, "new_name", "a new view name")
        if problem is None and kind == "save_view" and not (
                isinstance(e.get("params"), dict)
                and all(isinstance(v, str) for v in e["params"].values())):
            problem = "params", "an object of strings"
        return problem
    if e.get("task") not in TASK_KEYS.values():
        return "task", f"one of {', '.join(TASK_KEYS.values())}"
    problem = _name_problem(e, "query_id", "a query_id")
    if problem:
        return problem
    obj = e.get("object")
    if obj is not None and not (isinstance(obj, dict) and obj.get("source") in SOURCES
                                and obj.get("modality") in OBJECT_MODALITIES
                                and type(obj.get("index")) is int and obj["index"] >= 0):
        return "object", "{source: gt|pred, modality, index >= 0}"
    if kind == "note":
        return None if isinstance(e.get("text"), str) else ("text", "a note text")
    return _name_problem(e, "tag", "a tag")


def _target(e: Mapping[str, Any]) -> Target:
    obj = e.get("object") or {}
    return Target(e["task"], e["query_id"], obj.get("source"), obj.get("modality"),
                  obj.get("index"))


def _read(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes under a shared lock: a regular file within the input cap, not a
    link (:func:`ovearth_core.files.open_input`; never blocks), inside the benchmark's
    folder (the gate, :func:`ovearth_core.paths.check_input`: a ``.ovearth`` that links
    out of it is refused, unread)."""
    cap = files.input_cap(path)
    if os.path.lexists(path):  # a missing sidecar has no events (FileNotFoundError below)
        why = paths.refusal(path, (_root(Path(path)).resolve(),), cap)
        if why is not None:
            raise files.InputRefused(path, *why)
    with files.open_input(path, cap, follow_links=False) as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise files.InputRefused(path, f"a file of at most {cap // 2**20} MB",
                                 f"more than {files.size_text(cap)}")
    return data


def _shown(raw: bytes) -> str:
    """A line's start as printable text (control characters escaped: it is printed)."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1]
                   for c in raw.decode(errors="replace"))


def read_events(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Every valid event of the file in order, and one problem per invalid line (a
    missing file has no events; a file that cannot be read is one problem). Lines end
    with ``\n`` (a ``\r`` before it is dropped). Never raises."""
    try:
        data = _read(path)
    except FileNotFoundError:
        return [], []
    except files.FileRefused as err:
        return [], [Problem(str(path), "(file)", err.expected, err.found)]
    except OSError as err:
        return [], [Problem(str(path), "(file)", "a readable file",
                            err.strerror or type(err).__name__)]
    events, problems = [], []
    for n, raw in enumerate(data.split(b"\n"), start=1):
        raw = raw.removesuffix(b"\r")
        if not raw.strip():
            continue
        try:
            e = json.loads(raw)
        except (ValueError, RecursionError):
            cut = raw.lstrip().startswith(b"{") and not raw.rstrip().endswith(b"}")
            problems.append(Problem(str(path), "(line)", "one JSON object per line" + (
                " (this line is cut short: a crash or a full disk while it was written?)"
                if cut else ""), _shown(raw[:80]), line=n))
            continue
        # Valid UTF-8 bytes decode to UTF-8 text; only a \ud... escape can make a lone
        # surrogate, so the text is walked only then.
        surrogate = b"\\ud" in raw or b"\\uD" in raw
        why = (_event_problem(e, check_utf8=surrogate) if isinstance(e, dict)
               else ("(line)", "a JSON object"))
        if why:
            problems.append(Problem(str(path), f"event {why[0]}", why[1], _shown(raw[:80]),
                                    line=n))
            continue
        events.append(e)
    return events, problems


def fold(events: Iterable[Mapping[str, Any]]) -> ReviewState:
    """The state after ``events`` in order."""
    state = ReviewState()
    for e in events:
        state.num_events += 1
        kind = e["event"]
        if kind == "save_view":
            state.views[e["name"]] = View(e["name"], dict(e["params"]), e.get("ts", ""))
        elif kind == "delete_view":
            state.views.pop(e["name"], None)
        elif kind == "rename_view":
            old = state.views.pop(e["name"], None)
            if old is not None:
                state.views[e["new_name"]] = View(e["new_name"], old.params, e.get("ts", ""))
        elif kind == "note":
            t = _target(e)
            if e["text"].strip():
                state.notes[t] = Note(e["text"], e.get("ts", ""))
            else:
                state.notes.pop(t, None)
        else:
            t = _target(e)
            tags = set(state.tags.get(t, ()))
            (tags.add if kind == "tag" else tags.discard)(e["tag"])
            state.tags[t] = frozenset(tags)
    state.tags = {t: v for t, v in state.tags.items() if v}
    return state


def load_state(path: str | os.PathLike[str]) -> ReviewState:
    """The sidecar's current state (empty when the file does not exist)."""
    events, problems = read_events(path)
    state = fold(events)
    state.problems = problems
    return state


# --- export ---------------------------------------------------------------------------------

def without_queries(doc: dict[str, Any], task: str, exclude: set[str]) -> dict[str, Any]:
    """A copy of a ground-truth or prediction document whose ``tasks[task]`` lacks the rows
    whose ``query_id`` is in ``exclude`` (annotations and other tasks are kept as they are)."""
    tasks = dict(doc.get("tasks", {}))
    if task in tasks:
        tasks[task] = [r for r in tasks[task]
                       if not (isinstance(r, dict) and r.get("query_id") in exclude)]
    return {**doc, "tasks": tasks}


def export_folder(gt_path: str | os.PathLike[str], tag_name: str) -> Path:
    """The app's export folder for "without the queries tagged ``tag_name``":
    ``DIR/.ovearth/exports/without_<tag>`` (characters other than letters, digits,
    ``.``, ``-`` and ``_`` become ``_``)."""
    return (sidecar_for(gt_path).parent / "exports"
            / ("without_" + re.sub(r"[^\w.-]", "_", tag_name)))


@dataclass(frozen=True)
class Export:
    """What :func:`export_without` wrote: the JSON files, the images placed (paths inside
    the folder) and the image paths of annotations whose image was not found."""

    files: list[Path]
    images: list[Path]
    missing: list[str]


def export_without(gt_path: str | os.PathLike[str], pred_paths: Iterable[str | os.PathLike[str]],
                   task: str, exclude: set[str], out: str | os.PathLike[str], *,
                   root: str | os.PathLike[str] | None = None, replace: bool = False,
                   images: str | os.PathLike[str] | None = None) -> Export:
    """Write the folder ``out`` (``ground_truth.json``, ``predictions/<name>.json`` and,
    from the folder ``images``, every image the annotations name, at its ``image_path``:
    a hard link where the file system allows, else a copy) without the queries
    ``exclude`` of ``task``, all or nothing. An image path that is not a file inside
    ``images`` is left out and listed (``missing``); ``images`` ``None``: no image.

    The folder is built beside ``out`` and renamed into place
    (:func:`ovearth_core.files.folder_writer`), confined to ``root`` (default: the folder
    ``out`` is in; no link below it is followed); an existing non-empty ``out`` is
    replaced only with ``replace``, and never when it holds one of the inputs.
    """
    key = task_key(task)
    preds = [Path(p) for p in pred_paths]
    names = [p.name for p in preds]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise OVEarthInputError([Problem("(options)", "--predictions", "submissions with "
                                         "distinct file names", ", ".join(dupes))])
    docs = {"ground_truth.json": without_queries(read_json(gt_path, "ground-truth"), key,
                                                 exclude)}
    for p in preds:
        docs[f"predictions/{p.name}"] = without_queries(read_json(p, "prediction"), key,
                                                        exclude)
    found, missing = _annotation_images(docs["ground_truth.json"], images)
    base = Path(out).absolute().parent if root is None else Path(root)
    try:
        with files.folder_writer(base, Path(out).absolute(), replace=replace,
                                 inputs=[gt_path, *preds, *found.values()]) as folder:
            for rel, doc in docs.items():
                folder.write(rel, dump_json(doc))
            for rel, source in found.items():
                folder.place(rel, source, link=True)
    except files.FileRefused as err:
        raise _refusal(err, "--out") from None
    return Export([folder.target / rel for rel in docs],
                  [folder.target / rel for rel in found], missing)


def _annotation_images(gt: dict[str, Any], images: str | os.PathLike[str] | None
                       ) -> tuple[dict[str, Path], list[str]]:
    """``{image_path: file}`` of the ground truth's annotations' images found inside
    ``images`` (regular files), and the image paths not found there (sorted)."""
    if images is None:
        return {}, []
    names = sorted({a["image_path"] for a in gt.get("annotations", [])
                    if isinstance(a, dict) and isinstance(a.get("image_path"), str)})
    found, missing = {}, []
    for name in names:
        try:
            path = resolve_image_path(images, name)
        except ImagePathError:
            missing.append(name)
            continue
        if path.is_file():
            found["/".join(p for p in name.replace("\\", "/").split("/") if p)] = path
        else:
            missing.append(name)
    return found, missing


def main(argv: list[str] | None = None) -> int:
    """``python -m ovearth_core.review {list,export,tag,untag,note,views,delete-view,
    rename-view}``."""
    parser = argparse.ArgumentParser(prog="python -m ovearth_core.review",
                                     description="Read and write a benchmark's review tags.")
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--gt", required=True, help="ground-truth JSON (the sidecar is beside)")
    common.add_argument("--task", default="vocabulary", help="vocabulary, referring, reasoning")
    ls = sub.add_parser("list", parents=[common], help="tagged query ids, one per line")
    ls.add_argument("--tag", help="only queries with this tag (default: every tagged query)")
    ex = sub.add_parser("export", parents=[common],
                        help="ground truth and submissions without queries tagged X")
    ex.add_argument("--predictions", nargs="*", default=[], help="submissions to filter")
    ex.add_argument("--without", required=True, help="comma-separated tags to leave out")
    ex.add_argument("--out", required=True, help="output folder (new or empty)")
    ex.add_argument("--images", help="images folder (default: the ground truth's folder); "
                    "the images the annotations name go along (hard links where possible)")
    ex.add_argument("--no-images", action="store_true", help="write the JSON files only")
    ex.add_argument("--force", action="store_true",
                    help="replace --out when it is a non-empty folder (never one that holds "
                    "the inputs)")
    sub.add_parser("views", parents=[common], help="saved views: name<TAB>link parameters")
    dv = sub.add_parser("delete-view", parents=[common], help="delete a saved view")
    dv.add_argument("name")
    rv = sub.add_parser("rename-view", parents=[common], help="rename a saved view")
    rv.add_argument("name")
    rv.add_argument("new_name")
    for name in ("tag", "untag", "note"):
        p = sub.add_parser(name, parents=[common], help=f"{name} a query")
        p.add_argument("--query", required=True)
        p.add_argument("text", help="the tag" if name != "note" else "the note")
    args = parser.parse_args(argv)
    path = sidecar_for(args.gt)
    try:
        key = task_key(args.task)
        if args.command in ("tag", "untag", "note"):
            {"tag": tag, "untag": untag, "note": note}[args.command](
                path, Target(key, args.query), args.text, by="cli", notify=_stderr)
            return 0
        if args.command == "delete-view":
            delete_view(path, args.name, notify=_stderr)
            return 0
        if args.command == "rename-view":
            rename_view(path, args.name, args.new_name, notify=_stderr)
            return 0
        state = load_state(path)
        if state.unreadable is not None:  # no tags would look like "nothing tagged"
            print(f"{parser.prog}: cannot read the review file: {state.unreadable}",
                  file=sys.stderr)
            return 2
        for p in state.problems:
            print(f"{parser.prog}: warning: skipped {p}", file=sys.stderr)
        if args.command == "views":
            for view in state.views.values():
                print(f"{view.name}\t{urlencode(view.params)}")
            return 0
        if args.command == "list":
            tagged = state.query_tags(key)
            for q in sorted(tagged):
                if args.tag is None or args.tag in tagged[q]:
                    print(f"{q}\t{','.join(sorted(tagged[q]))}")
            return 0
        exclude = {q for t in args.without.split(",") if t for q in state.tagged(key, t)}
        images = None if args.no_images else (args.images or Path(args.gt).parent)
        written = export_without(args.gt, args.predictions, key, exclude, args.out,
                                 replace=args.force, images=images)
        print(f"left out {len(exclude)} queries; wrote "
              f"{', '.join(map(str, written.files))}"
              + ("" if images is None else f" and {len(written.images)} images"),
              file=sys.stderr)
        if written.missing:
            _stderr(f"warning: {len(written.missing)} images the annotations name are not in "
                    f"{images}, so not in the export: {', '.join(written.missing[:20])}"
                    + (" …" if len(written.missing) > 20 else ""))
        return 0
    except OVEarthInputError as err:
        print(f"{parser.prog}: invalid input\n{err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{parser.prog}: cannot write {err.filename or path}: {err.strerror or err}",
              file=sys.stderr)
        return 2


def _stderr(message: str) -> None:
    print(f"python -m ovearth_core.review: {message}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
