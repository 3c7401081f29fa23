"""Competition bundles: everything a platform needs to host the leaderboard, in one zip.

:func:`codabench_bundle` writes Codabench's layout (``competition.yaml`` version 2, its
pages and logo, ``scoring_program.zip``, ``reference_data.zip``, ``starting_kit.zip`` and
``solution.zip``); :func:`evalai_bundle` writes EvalAI's (``challenge_config.yaml``, its
HTML templates and logo, ``evaluation_script.zip``, ``annotations/ground_truth.json``).
Each program carries a copy of this ``ovearth_core`` (its Python files) and the
:class:`~.config.HostingConfig` as ``scoring.json``: what a platform runs is the code that
wrote the bundle. The libraries come from the Docker image of ``docker/Dockerfile`` (built
from ``requirements.txt``), which ``competition.yaml`` names.

Every zip is built in memory with fixed timestamps (the same inputs give the same bytes)
and written once, atomically (:func:`~ovearth_core.files.write_output`).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import yaml

from ..labels import TASK_LABELS
from ..options import TASK_KEYS
from .config import HostingConfig
from .scorer import CONFIG_NAME, GROUND_TRUTH_NAME

PACKAGE = Path(__file__).resolve().parents[1]
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
FAR_FUTURE = "2099-12-31 23:59:59"  # EvalAI needs an end date; its own starter uses 2099
PREDICTIONS_NAME = "predictions.json"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)

SCORE_PY = '''"""Codabench runs this (see metadata): the scorer of the ovearth_core beside it."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ovearth_core.hosting.scorer import codabench_main  # noqa: E402

sys.exit(codabench_main([*sys.argv[1:], "--config", str(HERE / "scoring.json")]))
'''

EVALAI_INIT = "from .main import evaluate  # noqa: F401\n"
EVALAI_MAIN = '''"""EvalAI calls evaluate(): the scorer of the ovearth_core beside this file."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from ovearth_core.hosting.scorer import evaluate as _evaluate  # noqa: E402
from ovearth_core.hosting.scorer import load_config  # noqa: E402

CONFIG = load_config(HERE / "scoring.json")


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    return _evaluate(test_annotation_file, user_submission_file, phase_codename,
                     config=CONFIG, **kwargs)
'''


@dataclass(frozen=True)
class Phase:
    """One phase: its name, start and end (``None``: open-ended, the last phase only)."""

    name: str
    start: datetime
    end: datetime | None = None

    @property
    def codename(self) -> str:
        return re.sub(r"[^a-z0-9]+", "_", self.name.lower()).strip("_") or "phase"


def parse_phase(text: str) -> Phase:
    """``NAME,START[,END]`` (ISO dates, ``2026-01-01`` or ``2026-01-01 12:00``)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (2, 3) or not parts[0]:
        raise ValueError(f"expected NAME,START[,END], found {text!r}")
    start = datetime.fromisoformat(parts[1])
    end = datetime.fromisoformat(parts[2]) if len(parts) == 3 and parts[2] else None
    if end is not None and end <= start:
        raise ValueError(f"phase {parts[0]}: the end {end} is not after the start {start}")
    return Phase(parts[0], start, end)


def check_phases(phases: Sequence[Phase]) -> None:
    """Codabench's rule: phases follow each other; every phase but the last has an end."""
    for a, b in zip(phases, phases[1:], strict=False):
        if a.end is None:
            raise ValueError(f"phase {a.name} needs an end: phase {b.name} follows it")
        if b.start < a.end:
            raise ValueError(f"phase {b.name} starts before phase {a.name} ends")
    codes = [p.codename for p in phases]
    if len(set(codes)) != len(codes):
        raise ValueError(f"phase names must differ in letters and digits: {', '.join(codes)}")


def yaml_bytes(doc: dict[str, Any]) -> bytes:
    """``doc`` (strings, numbers, booleans, ``None``, lists and mappings) as the platforms'
    YAML, written by PyYAML (``yaml.safe_dump``), the parser both platforms read it with.

    Keys keep their order. A string that would read back as another type (``"no"``,
    ``"1e3"``, ``"2026-01-01 00:00:00"``: Codabench parses phase dates from strings) is
    quoted. The text is ASCII, every other character escaped in a double-quoted scalar:
    with ``allow_unicode`` PyYAML writes U+0085 (NEL) raw in a single-quoted scalar and
    reads it back as a line break (``tests/core/test_hosting_yaml.py``).

    >>> print(yaml_bytes({"title": "A: b", "tasks": [0], "hidden": False}).decode(), end="")
    title: 'A: b'
    tasks:
    - 0
    hidden: false
    """
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=False).encode("ascii")


def zip_bytes(files: Mapping[str, bytes]) -> bytes:
    """A zip of ``{name: bytes}`` (fixed timestamps: the same files give the same bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, _ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def package_files(prefix: str = "ovearth_core/") -> dict[str, bytes]:
    """This package's Python files, ``{prefix + relative path: bytes}``."""
    return {prefix + p.relative_to(PACKAGE).as_posix(): p.read_bytes()
            for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


def skeleton(gt_doc: Mapping[str, Any], config: HostingConfig) -> bytes:
    """An empty answer to every scored query (``query_id`` and its text; no mask, no box):
    the format, without a word of the ground truth's answers or of a query's type."""
    rows: dict[str, list[dict[str, Any]]] = {}
    mods = config.options.modalities
    for task in config.tasks:
        key = TASK_KEYS[task]
        text = "phrase" if key == "open_vocabulary" else "query"
        rows[key] = [{"query_id": q["query_id"], text: q.get(text, ""),
                      **({"segmentation": None} if "segmentation" in mods else {}),
                      **{f: [] for f in ("bbox", "oriented_bbox") if f in mods}}
                     for q in gt_doc["tasks"].get(key, [])]
    return orjson.dumps({"tasks": rows}, option=orjson.OPT_INDENT_2) + b"\n"


def logo() -> bytes:
    """A 128 x 128 PNG tile (both platforms ask for an image)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (128, 128), (31, 94, 120)).save(out, "PNG")
    return out.getvalue()


def _columns_md(config: HostingConfig) -> str:
    return "\n".join(f"| `{c.key}` | {c.title} |" for c in config.columns)


def evaluation_text(config: HostingConfig) -> str:
    """What is scored and the rules a submission must keep (Markdown)."""
    o, lim = config.options, config.limits
    tasks = ", ".join(TASK_LABELS[TASK_KEYS[t]] for t in config.tasks)
    threshold = "none" if o.score_threshold is None else f"{o.score_threshold:g}"
    return f"""# Evaluation

Submissions are scored by the OVEarth Inspector evaluator (`python -m ovearth_core`), the
same numbers it prints on the same files.

- Tasks: {tasks}
- Modalities: {", ".join(o.modalities)}
- IoU threshold: {o.iou_threshold:g}; score threshold: {threshold}; box format: {o.bbox_format}

The leaderboard ranks by its first column, then the next ones:

| key | metric |
| --- | --- |
{_columns_md(config)}

A metric that is undefined for a submission (e.g. an MCC with an empty margin) leaves its cell
empty.

## Rules

A submission is a zip holding one JSON prediction file (e.g. `predictions.json`) in the
format of the starting kit. It is rejected, with a message naming the file, query_id, field,
what was expected and what was found, and no scores, when:

- the file is larger than {lim.max_mb:g} MB, or is not valid JSON in the prediction format;
- it has no rows for any of the scored tasks;
- a query has more than {lim.max_boxes:,} boxes in one box field;
- scoring takes longer than {lim.time_limit_s:g} s.
"""


def starting_kit_readme(config: HostingConfig) -> str:
    return evaluation_text(config).replace("# Evaluation", "# Starting kit", 1) + f"""
## Files

- `{PREDICTIONS_NAME}`: an empty answer to every query (no mask, no box). Fill in your
  model's answers and zip the file alone: `zip submission.zip {PREDICTIONS_NAME}`.
"""


def _scoring_json(config: HostingConfig) -> bytes:
    return orjson.dumps(config.to_json(), option=orjson.OPT_INDENT_2) + b"\n"


def codabench_bundle(config: HostingConfig, gt_bytes: bytes, sample: bytes, *, title: str,
                     description: str, phases: Sequence[Phase], docker_image: str,
                     images: Mapping[str, bytes] | None = None) -> bytes:
    """Codabench's competition bundle (version 2 of ``competition.yaml``), as zip bytes.

    ``images``: ``{image_path: bytes}`` added to the reference data (for the detailed
    results' gallery, ``config.gallery`` > 0)."""
    command = "python3 $program/score.py $input $output"
    program = {"metadata": yaml_bytes({"command": command}),
               "score.py": SCORE_PY.encode(), CONFIG_NAME: _scoring_json(config),
               **package_files()}
    reference = {GROUND_TRUTH_NAME: gt_bytes, **(images or {})}
    pages = {"pages/overview.md": f"# {title}\n\n{description}\n",
             "pages/evaluation.md": evaluation_text(config),
             "pages/terms.md": "# Terms\n\nSubmit your own model's predictions only.\n"}
    doc = {
        "version": 2,
        "title": title,
        "description": description,
        "image": "logo.png",
        "terms": "pages/terms.md",
        "docker_image": docker_image,
        "enable_detailed_results": True,
        "show_detailed_results_in_submission_panel": True,
        # The detailed results are for the submitter, not for everyone on the leaderboard.
        "show_detailed_results_in_leaderboard": False,
        "make_programs_available": True,
        "make_input_data_available": False,
        "pages": [{"title": "Overview", "file": "pages/overview.md"},
                  {"title": "Evaluation", "file": "pages/evaluation.md"}],
        "phases": [{"index": i, "name": p.name, "description": f"{p.name} phase",
                    "start": p.start.strftime(DATE_FORMAT),
                    **({"end": p.end.strftime(DATE_FORMAT)} if p.end else {}),
                    # The scorer's own limit comes first, with its message; this is the
                    # platform's backstop.
                    "execution_time_limit": int(config.limits.time_limit_s) + 60,
                    "accepts_only_result_submissions": True,
                    "starting_kit": "starting_kit.zip", "tasks": [0]}
                   for i, p in enumerate(phases)],
        "tasks": [{"index": 0, "name": "OVEarth scoring",
                   "description": "Scores a prediction JSON against the hidden ground truth",
                   "scoring_program": "scoring_program.zip",
                   "reference_data": "reference_data.zip"}],
        "solutions": [{"index": 0, "path": "solution.zip", "tasks": [0]}],
        "leaderboards": [{"title": "Results", "key": "main", "columns": [
            {"title": c.title, "key": c.key, "index": i, "sorting": "desc", "precision": 4}
            for i, c in enumerate(config.columns)]}],
    }
    return zip_bytes({
        "competition.yaml": yaml_bytes(doc),
        "logo.png": logo(),
        **{name: text.encode() for name, text in pages.items()},
        "scoring_program.zip": zip_bytes(program),
        "reference_data.zip": zip_bytes(reference),
        "starting_kit.zip": zip_bytes({"README.md": starting_kit_readme(config).encode(),
                                       PREDICTIONS_NAME: sample}),
        "solution.zip": zip_bytes({PREDICTIONS_NAME: sample}),
    })


def evalai_bundle(config: HostingConfig, gt_bytes: bytes, sample: bytes, *, title: str,
                  description: str, phases: Sequence[Phase]) -> bytes:
    """EvalAI's challenge configuration (``challenge_config.yaml`` and what it names), as
    zip bytes; ``config.splits`` must map each phase's codename to its split."""
    script = {"__init__.py": EVALAI_INIT.encode(), "main.py": EVALAI_MAIN.encode(),
              CONFIG_NAME: _scoring_json(config), **package_files()}
    html = {"description": f"<p>{description}</p>",
            "evaluation_details": "<pre>" + evaluation_text(config) + "</pre>",
            "terms_and_conditions": "<p>Submit your own model's predictions only.</p>",
            "submission_guidelines": "<pre>" + starting_kit_readme(config) + "</pre>"}
    labels = [c.key for c in config.columns]
    doc = {
        "title": title,
        "short_description": description[:140],
        **{k: f"templates/{k}.html" for k in html},
        "image": "logo.png",
        "leaderboard_description": "Ranked by " + config.columns[0].title,
        "evaluation_script": "evaluation_script.zip",
        "remote_evaluation": False,
        "is_docker_based": False,
        "start_date": phases[0].start.strftime(DATE_FORMAT),
        "end_date": phases[-1].end.strftime(DATE_FORMAT) if phases[-1].end else FAR_FUTURE,
        "published": False,
        "leaderboard": [{"id": 1, "schema": {"labels": labels, "default_order_by": labels[0]}}],
        "challenge_phases": [{
            "id": i + 1, "name": p.name, "description": "templates/description.html",
            "leaderboard_public": True, "is_public": True, "is_submission_public": False,
            "start_date": p.start.strftime(DATE_FORMAT),
            "end_date": p.end.strftime(DATE_FORMAT) if p.end else FAR_FUTURE,
            "test_annotation_file": f"annotations/{GROUND_TRUTH_NAME}",
            "codename": p.codename, "max_submissions_per_day": 5,
            "max_submissions_per_month": 50, "max_submissions": 100,
            "allowed_submission_file_types": ".json, .zip"} for i, p in enumerate(phases)],
        "dataset_splits": [{"id": i + 1, "name": f"{p.name} split",
                            "codename": config.splits[p.codename]}
                           for i, p in enumerate(phases)],
        "challenge_phase_splits": [{
            "challenge_phase_id": i + 1, "leaderboard_id": 1, "dataset_split_id": i + 1,
            "visibility": 3, "leaderboard_decimal_precision": 4,
            "is_leaderboard_order_descending": True} for i, _ in enumerate(phases)],
    }
    return zip_bytes({
        "challenge_config.yaml": yaml_bytes(doc),
        "logo.png": logo(),
        **{f"templates/{k}.html": v.encode() for k, v in html.items()},
        "evaluation_script.zip": zip_bytes(script),
        f"annotations/{GROUND_TRUTH_NAME}": gt_bytes,
        f"starting_kit/{PREDICTIONS_NAME}": sample,
    })
