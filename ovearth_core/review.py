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
file order. The current state (:func:`load_state`) folds the events in order; a line that
is not a valid event is reported (``problems``) and skipped, never fatal.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from .cli import dump_json, write_output
from .errors import OVEarthInputError, Problem
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
    if not text or len(text) > MAX_TAG or any(not c.isprintable() for c in text):
        raise OVEarthInputError([Problem("(review)", "tag", f"1 to {MAX_TAG} printable "
                                         "characters", repr(tag))])
    return text


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def append(path: str | os.PathLike[str], event: Mapping[str, Any]) -> dict[str, Any]:
    """Append one event (``v`` and ``ts`` added) and return it as written.

    The line is written whole by one ``write`` under an exclusive lock on a descriptor
    opened with ``O_APPEND`` (creating the folder and file when needed), then synced.
    """
    record = {"v": VERSION, "ts": _now(), **event}
    problem = _event_problem(record)
    if problem:
        raise OVEarthInputError([Problem(str(path), "event", problem, repr(dict(event)))])
    line = (json.dumps(record, ensure_ascii=False, separators=(", ", ": ")) + "\n").encode()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        written = os.write(fd, line)
        while written < len(line):  # a signal may cut a write short; finish the same line
            written += os.write(fd, line[written:])
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock
    return record


def tag(path: str | os.PathLike[str], target: Target, name: str, by: str | None = None,
        ) -> dict[str, Any]:
    return append(path, {"event": "tag", **target.as_fields(), "tag": _clean_tag(name),
                         **({"by": by} if by else {})})


def untag(path: str | os.PathLike[str], target: Target, name: str, by: str | None = None,
          ) -> dict[str, Any]:
    return append(path, {"event": "untag", **target.as_fields(), "tag": _clean_tag(name),
                         **({"by": by} if by else {})})


def note(path: str | os.PathLike[str], target: Target, text: str, by: str | None = None,
         ) -> dict[str, Any]:
    return append(path, {"event": "note", **target.as_fields(), "text": str(text),
                         **({"by": by} if by else {})})


def save_view(path: str | os.PathLike[str], name: str, params: Mapping[str, str],
              ) -> dict[str, Any]:
    """Save (or replace) a named view: the app's link parameters."""
    return append(path, {"event": "save_view", "name": _clean_tag(name),
                         "params": {str(k): str(v) for k, v in params.items()}})


def delete_view(path: str | os.PathLike[str], name: str) -> dict[str, Any]:
    """Delete a saved view: a tombstone line (the file is only ever appended to)."""
    return append(path, {"event": "delete_view", "name": _clean_tag(name)})


def rename_view(path: str | os.PathLike[str], name: str, new_name: str) -> dict[str, Any]:
    """Rename a saved view (one line; a view already called ``new_name`` is replaced)."""
    return append(path, {"event": "rename_view", "name": _clean_tag(name),
                         "new_name": _clean_tag(new_name)})


def _event_problem(e: Mapping[str, Any]) -> str | None:
    """What is wrong with an event (``None`` when it is valid)."""
    kind = e.get("event")
    if kind not in EVENTS:
        return f"event one of {', '.join(EVENTS)}"
    if kind in ("save_view", "delete_view", "rename_view"):
        if not isinstance(e.get("name"), str) or not e["name"]:
            return "a view name"
        if kind == "rename_view" and not (isinstance(e.get("new_name"), str)
                                          and e["new_name"]):
            return "a new_name"
        if kind == "save_view" and not (isinstance(e.get("params"), dict) and all(
                isinstance(v, str) for v in e["params"].values())):
            return "params: an object of strings"
        return None
    if e.get("task") not in TASK_KEYS.values():
        return f"task one of {', '.join(TASK_KEYS.values())}"
    if not isinstance(e.get("query_id"), str) or not e["query_id"]:
        return "a query_id"
    obj = e.get("object")
    if obj is not None and not (isinstance(obj, dict) and obj.get("source") in SOURCES
                                and obj.get("modality") in OBJECT_MODALITIES
                                and isinstance(obj.get("index"), int) and obj["index"] >= 0):
        return "object: {source: gt|pred, modality, index >= 0}"
    if kind == "note":
        return None if isinstance(e.get("text"), str) else "a note text"
    return None if isinstance(e.get("tag"), str) and e["tag"] else "a tag"


def _target(e: Mapping[str, Any]) -> Target:
    obj = e.get("object") or {}
    return Target(e["task"], e["query_id"], obj.get("source"), obj.get("modality"),
                  obj.get("index"))


def read_events(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Every valid event of the file in order, and one problem per invalid line
    (a missing file has no events)."""
    try:
        with open(path, "rb") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
            data = handle.read()
    except FileNotFoundError:
        return [], []
    events, problems = [], []
    for n, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            e = json.loads(raw)
        except ValueError:
            problems.append(Problem(str(path), "(line)", "one JSON object per line",
                                    raw[:80].decode(errors="replace"), line=n))
            continue
        why = _event_problem(e) if isinstance(e, dict) else "a JSON object"
        if why:
            problems.append(Problem(str(path), "event", why, raw[:80].decode(errors="replace"),
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


def export_without(gt_path: str | os.PathLike[str], pred_paths: Iterable[str | os.PathLike[str]],
                   task: str, exclude: set[str], out: str | os.PathLike[str]) -> list[Path]:
    """Write ``out/ground_truth.json`` and ``out/predictions/<name>.json`` without the
    queries ``exclude`` of ``task``; returns the files written."""
    key = task_key(task)
    folder = Path(out)
    (folder / "predictions").mkdir(parents=True, exist_ok=True)
    written = [folder / "ground_truth.json"]
    write_output(written[0], dump_json(without_queries(read_json(gt_path, "ground-truth"), key,
                                                       exclude)))
    for p in pred_paths:
        target = folder / "predictions" / Path(p).name
        write_output(target, dump_json(without_queries(read_json(p, "prediction"), key,
                                                       exclude)))
        written.append(target)
    return written


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
    ex.add_argument("--out", required=True, help="output folder")
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
                path, Target(key, args.query), args.text, by="cli")
            return 0
        if args.command == "delete-view":
            delete_view(path, args.name)
            return 0
        if args.command == "rename-view":
            rename_view(path, args.name, args.new_name)
            return 0
        state = load_state(path)
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
        files = export_without(args.gt, args.predictions, key, exclude, args.out)
        print(f"left out {len(exclude)} queries; wrote {', '.join(map(str, files))}",
              file=sys.stderr)
        return 0
    except OVEarthInputError as err:
        print(f"{parser.prog}: invalid input\n{err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
