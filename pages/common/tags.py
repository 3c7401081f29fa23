"""Review tags, notes and saved views in the app: the sidecar of :mod:`ovearth_core.review`
beside the evaluated ground truth.

Every change is one appended event, written when the user acts: a multiselect change
writes only what the user added or removed, so a tag another session wrote meanwhile is
never lost. Widget keys carry the sidecar's event count, so a rerun after any write (from
any session) shows the file's state.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from ovearth_core import review
from ovearth_core.errors import OVEarthInputError

from . import data, state, views
from .run import Run

OBJECT_KINDS = (("gt", "bbox", "GT box"), ("pred", "bbox", "predicted box"),
                ("gt", "oriented_bbox", "GT oriented box"),
                ("pred", "oriented_bbox", "predicted oriented box"),
                ("gt", "segmentation", "GT mask"), ("pred", "segmentation", "predicted mask"))


def sidecar(run: Run) -> Path:
    return review.sidecar_for(run.gt[0])


def current(run: Run) -> review.ReviewState:
    return data.review_state(data.file_key(sidecar(run)))


def query_tags(run: Run) -> dict[str, frozenset[str]]:
    """``{query_id: review tags}`` of the run's task (object tags count for their query)."""
    return current(run).query_tags(review.task_key(run.options.task))


def _write(action: str, *args: object) -> bool:
    """Run one review write; a failure (read-only folder, bad tag, a link or special file
    where the sidecar should be) is a message; a torn last line it kept apart, a note."""
    try:
        getattr(review, action)(*args, notify=_torn_note)
    except (OSError, OVEarthInputError) as err:
        st.session_state["_rv_error"] = f"Not saved: {views.md_text(str(err))}"
        return False
    return True


def _torn_note(message: str) -> None:
    st.session_state["_rv_note"] = message.removeprefix("note: ")


def _on_tags(path: Path, target: review.Target, shown: frozenset[str], key: str) -> None:
    chosen = set(st.session_state[key])
    for name in sorted(chosen - shown):
        _write("tag", path, target, name)
    for name in sorted(shown - chosen):
        _write("untag", path, target, name)


def _on_new_tag(path: Path, target: review.Target, key: str) -> None:
    name = st.session_state.get(key, "").strip()
    if name:
        _write("tag", path, target, name)
    st.session_state[key] = ""


def _on_note(path: Path, target: review.Target, key: str) -> None:
    _write("note", path, target, st.session_state[key])


def _on_object(path: Path, task: str, query_id: str, action: str, key: str) -> None:
    source, modality, index = st.session_state[f"{key}_obj"]
    _write(action, path, review.Target(task, query_id, source, modality, index),
           st.session_state[f"{key}_obj_tag"])


def _objects(run: Run, query_id: str) -> dict[tuple[str, str, int], str]:
    """The query's GT and predicted objects, ``(source, modality, index) -> label``."""
    sample = run.evaluation.run.sample(query_id)
    counts = {("gt", "bbox"): len(sample.gt_boxes), ("pred", "bbox"): len(sample.pred_boxes),
              ("gt", "oriented_bbox"): len(sample.gt_obbs),
              ("pred", "oriented_bbox"): len(sample.pred_obbs),
              ("gt", "segmentation"): int(sample.gt_mask is not None),
              ("pred", "segmentation"): int(sample.pred_mask is not None)}
    return {(src, mod, i): f"{label} {i + 1}" if mod != "segmentation" else label
            for src, mod, label in OBJECT_KINDS for i in range(counts[(src, mod)])}


def panel(run: Run, query_id: str, key: str = "_rv", export: bool = True) -> None:
    """Tags and note of the shown query and of its objects, written to the sidecar.

    ``key`` prefixes the widget keys (the explorer and Compare each have their own);
    ``export`` adds the export expander."""
    path, rs = sidecar(run), current(run)
    task = review.task_key(run.options.task)
    target = review.Target(task, query_id)
    st.subheader("Review")
    st.caption(f"Saved in {state.code(str(path))} (beside the ground truth, shared by every "
               "session).")
    show_error()
    if rs.unreadable is not None:
        st.error(f"The review file cannot be read, so tags are not shown or written: "
                 f"{rs.unreadable}")
        return
    for p in rs.problems[:3]:
        st.warning(f"Skipped a bad line of the review file: {views.md_text(str(p))}")
    shown = rs.tags.get(target, frozenset())
    tags_key = f"{key}_tags_{query_id}_{rs.num_events}"
    cols = st.columns([3, 2, 1])
    cols[0].multiselect("Tags of this query", rs.all_tags(), default=sorted(shown),
                        key=tags_key, on_change=_on_tags, args=(path, target, shown, tags_key))
    cols[1].text_input("New tag", key=f"{key}_new", placeholder="a free tag")
    cols[2].button("Add tag", on_click=_on_new_tag, args=(path, target, f"{key}_new"),
                   width="stretch", key=f"{key}_add")
    note = rs.notes.get(target)
    note_key = f"{key}_note_{query_id}_{rs.num_events}"
    st.text_area("Note", value=note.text if note else "", key=note_key, height=80)
    st.button("Save note", on_click=_on_note, args=(path, target, note_key),
              key=f"{key}_save_note")
    _object_tags(run, rs, path, task, query_id, key)
    if export:
        _export(run, rs, task)


def show_error() -> None:
    """The last failed write's message, a torn line a write kept apart, and what a write
    without a tag saved, once."""
    if st.session_state.get("_rv_error"):
        st.error(st.session_state.pop("_rv_error"))
    if st.session_state.get("_rv_note"):
        st.warning(st.session_state.pop("_rv_note"))
    if st.session_state.get("_rv_saved"):
        st.success(st.session_state.pop("_rv_saved"))


def _object_tags(run: Run, rs: review.ReviewState, path: Path, task: str,
                 query_id: str, key: str) -> None:
    objects = _objects(run, query_id)
    tagged = [(t, tags) for t, tags in sorted(rs.tags.items())
              if t.task == task and t.query_id == query_id and t.is_object]
    for t, tags in tagged:
        label = objects.get((t.source, t.modality, t.index), f"{t.source} {t.modality} {t.index}")
        st.text(f"{label}: {', '.join(sorted(tags))}")
    if not objects:
        return
    cols = st.columns([2, 2, 1, 1])
    cols[0].selectbox("Object", list(objects), format_func=objects.get, key=f"{key}_obj")
    cols[1].selectbox("Object tag", rs.all_tags(), key=f"{key}_obj_tag")
    cols[2].button("Tag object", on_click=_on_object,
                   args=(path, task, query_id, "tag", key), width="stretch",
                   key=f"{key}_tag_obj")
    cols[3].button("Untag object", on_click=_on_object,
                   args=(path, task, query_id, "untag", key), width="stretch",
                   key=f"{key}_untag_obj")


def target_tags(rs: review.ReviewState, target: review.Target) -> frozenset[str]:
    """Tags on ``target`` itself (for an object: not its query's)."""
    return rs.tags.get(target, frozenset())


def _on_bulk(path: Path, targets: tuple[review.Target, ...], action: str, key: str,
             done: Callable[[], None] | None, current_tags: tuple[str, ...],
             what: tuple[str, str] = ("target", "targets")) -> None:
    name = (st.session_state.get(f"{key}_new") or st.session_state.get(f"{key}_tag")
            or "").strip()
    note = st.session_state.get(f"{key}_note", "").strip()
    if not name and not (action == "tag" and note):
        st.session_state["_rv_error"] = "Not saved: choose or type a tag first."
        return
    if name and name not in current_tags:
        st.session_state["_rv_new_tag_made"] = True  # the page's tag lists must grow
    for target in targets:
        if name:
            _write(action, path, target, name)
        if action == "tag" and note:
            _write("note", path, target, note)
    if action == "tag" and note and not name:
        n = len(targets)
        st.session_state["_rv_saved"] = (
            f"Saved the note on {n} {what[n != 1]}, with no tag (choose or type a tag to "
            "tag them too).")
    st.session_state[f"{key}_note"] = ""
    st.session_state[f"{key}_new"] = ""
    if done is not None:
        done()


def bulk_bar(run: Run, targets: list[review.Target], key: str, what: tuple[str, str],
             done: Callable[[], None] | None = None) -> None:
    """Tag (or untag) every target of ``targets`` at once: a built-in or used tag, or a
    new free one (typed; it wins over the list), and an optional note, one appended event
    per target and action; ``done`` runs after a write (e.g. to clear the selection)."""
    path, rs = sidecar(run), current(run)
    show_error()
    cols = st.columns([2, 2, 3, 1.2, 1])
    cols[0].selectbox("Tag", rs.all_tags(), index=None, placeholder="choose a tag",
                      key=f"{key}_tag")
    cols[1].text_input("…or a new tag", key=f"{key}_new", placeholder="a free tag")
    cols[2].text_input("Note (optional)", key=f"{key}_note",
                       placeholder="written on each tagged target")
    chosen = tuple(targets)
    cols[3].button(f"Tag {len(chosen)} {what[len(chosen) != 1]}", on_click=_on_bulk,
                   args=(path, chosen, "tag", key, done, tuple(rs.all_tags()), what),
                   disabled=not chosen,
                   width="stretch", key=f"{key}_do_tag", type="primary")
    cols[4].button(f"Untag {len(chosen)}", on_click=_on_bulk,
                   args=(path, chosen, "untag", key, done, tuple(rs.all_tags())),
                   disabled=not chosen,
                   width="stretch", key=f"{key}_do_untag")


def _export(run: Run, rs: review.ReviewState, task: str) -> None:
    tagged = rs.query_tags(task)
    with st.expander(f"Export ({len(tagged)} tagged queries in this task)"):
        listing = "".join(f"{q}\t{','.join(sorted(t))}\n" for q, t in sorted(tagged.items()))
        st.download_button("Download the tagged queries (TSV)", listing,
                           file_name=f"tagged_{task}.tsv", disabled=not tagged)
        name = st.selectbox("Leave out the queries tagged", rs.all_tags(), key="_rv_export")
        if st.button("Write the benchmark without them"):
            exclude = set(rs.tagged(task, name))
            out = review.export_folder(run.gt[0], name)
            try:  # confined to the benchmark's folder; the previous export is replaced
                written = review.export_without(run.gt[0], [run.pred[0]], task, exclude,
                                                out, root=sidecar(run).parent.parent,
                                                replace=True, images=run.images_dir)
            except (OSError, OVEarthInputError) as err:
                st.error(f"Not written: {views.md_text(str(err))}")
                return
            st.success(f"Left out {len(exclude)} queries; wrote "
                       f"{state.code(f'{out}/ground_truth.json')}, "
                       f"{state.code(f'predictions/{Path(run.pred[0]).name}')} and "
                       f"{len(written.images):,} images (hard links where the file system "
                       "allows).")
            if written.missing:
                st.warning(f"{len(written.missing):,} images the annotations name are not in "
                           "the images folder, so not in the export: "
                           + views.md_text(", ".join(written.missing[:20])))


def saved_views(run: Run) -> list[review.View]:
    return list(current(run).views.values())


def save_view(run: Run, name: str) -> None:
    """Save the current view under ``name``: the options and filters (state's link
    parameters), Compare's B, and the explorer's viewer (its query, picked box, zoom, layers
    and view options), so that opening it shows what was on screen."""
    ss = st.session_state
    extra = {"b": ss["cmp_b_path"]} if ss["cmp_b_path"] else {}
    query = (ss.get("selected") or {}).get(ss["task"])
    if query:
        extra.update(state.view_params(query))
    _write("save_view", sidecar(run), name, state.link_params(**extra))


def delete_view(run: Run, name: str) -> bool:
    return _write("delete_view", sidecar(run), name)


def rename_view(run: Run, name: str, new_name: str) -> bool:
    return _write("rename_view", sidecar(run), name, new_name)


def view_link(view: review.View) -> str:
    """A Markdown link to a saved view (its name shown as text)."""
    return f"[{views.md_text(view.name)}]({state.url_of(view.params)})"
