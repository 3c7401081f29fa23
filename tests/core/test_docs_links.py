"""README.md and docs/*.md: every relative link and anchor resolves; the README stays short.

Issue 39 ("a README read in five minutes") moved the README's sections into docs/, one file
per topic. A link into another file, or to a heading (``#anchor``) of the same or another
Markdown file, must find that file and that heading. Anchors follow GitHub's rule for
headings: lowercased, punctuation other than hyphens, spaces and underscores removed, each
space a hyphen, and a repeated heading's anchor suffixed ``-1``, ``-2``, ...

The README's tiny example is run through the evaluator: its ground truth and prediction are
the README's two ``json`` blocks, and every ``"key": value`` the trimmed output shows must be
in the real output.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
CHECKED = [README, *DOCS]

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target) and ![alt](target); text may hold one level of brackets ([`x`] ...).
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the lines outside fenced code blocks."""
    out, fenced = [], False
    for number, line in enumerate(text.split("\n"), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((number, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text (before de-duplication)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # \w keeps letters, digits and underscores
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    out = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for m in LINK.finditer(INLINE_CODE.sub("", line)):
            out.append((number, m.group(1)))
    return out


def broken_links(path: Path) -> list[str]:
    problems = []
    for number, target in links(path):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        where = f"{path.relative_to(ROOT)}:{number}: {target}"
        if not dest.exists():
            problems.append(f"{where}: no file {dest}")
            continue
        if ROOT not in dest.parents and dest != ROOT:
            problems.append(f"{where}: leaves the repository")
            continue
        if anchor:
            if dest.is_dir() or dest.suffix.lower() != ".md":
                problems.append(f"{where}: an anchor into a file that is not Markdown")
            elif unquote(anchor) not in anchors(dest):
                problems.append(f"{where}: no heading with anchor #{anchor} in "
                                f"{dest.relative_to(ROOT)}")
    return problems


def test_slug_follows_github() -> None:
    assert slug("Errors on a map (GeoJSON)") == "errors-on-a-map-geojson"
    assert slug("COCO (`from-coco`)") == "coco-from-coco"
    assert slug("Options, the run view and the link table") == \
        "options-the-run-view-and-the-link-table"
    assert slug("Dense scenes and scale (issue 17)") == "dense-scenes-and-scale-issue-17"
    assert slug("`score_sweep`") == "score_sweep"


def test_a_broken_link_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "a.md").write_text("# Top\n\n## Same\n\n## Same\n\n[ok](#same-1) [ok](b.md#b) "
                                   "[bad](#nope) [bad](b.md#nope) [bad](c.md) `[code](x.md)`\n"
                                   "```\n[fenced](y.md)\n```\n[web](https://example.org/#x)\n")
    (tmp_path / "b.md").write_text("# B\n")
    found = broken_links(tmp_path / "a.md")
    assert len(found) == 3, found
    assert all(":7: " in p for p in found)


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_and_anchors_resolve(path: Path) -> None:
    assert broken_links(path) == []


def test_docs_exist_and_are_linked() -> None:
    names = {p.name for p in DOCS}
    assert {"README.md", "app.md", "metrics.md", "analysis.md", "data.md", "reports.md",
            "review.md", "cache.md", "benchmarks.md", "security.md", "cli.md",
            "python-api.md", "synthetic.md", "tests.md"} <= names
    index = {Path(t.partition("#")[0]).name for _, t in links(ROOT / "docs" / "README.md")}
    readme = {Path(t.partition("#")[0]).name for _, t in links(README)}
    for name in names - {"README.md"}:
        assert name in index, f"docs/README.md does not link {name}"
        assert name in readme, f"README.md does not link docs/{name}"


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    blocks = re.findall(r"^```sh\n(.*?)^```$", text, flags=re.M | re.S)
    # .ci/run runs the second ```sh block: the test command a new user is given.
    assert "streamlit run app.py" in blocks[0]
    assert blocks[1].strip().endswith(".venv/bin/python -m pytest -n auto")  # every core
    assert (ROOT / "docs" / "images" / "overview.png").stat().st_size < 400_000


def _scalars(value: object, out: set[tuple[str, str]], key: str | None = None) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _scalars(v, out, k)
    elif isinstance(value, list):
        if key is not None:
            out.add((key, json.dumps(value)))
        for v in value:
            _scalars(v, out, key)
    elif key is not None:
        out.add((key, json.dumps(value)))


def test_readme_example_is_the_evaluators_output(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    gt, pred = re.findall(r"^```json\n(.*?)^```$", text, flags=re.M | re.S)[:2]
    shown = re.findall(r"^```text\n(.*?)^```$", text, flags=re.M | re.S)[0]
    (tmp_path / "gt.json").write_text(gt)
    (tmp_path / "preds.json").write_text(pred)
    done = subprocess.run([sys.executable, "-m", "ovearth_core", "--gt", "gt.json",
                           "--predictions", "preds.json", "--task", "vocabulary",
                           "--modalities", "bbox"], cwd=tmp_path, capture_output=True,
                          text=True, check=True)
    real: set[tuple[str, str]] = set()
    _scalars(json.loads(done.stdout), real)
    pairs = re.findall(r'"([^"]+)": (null|true|false|-?[\d.]+|"[^"]*"|\[[^\]…]*?\]+)', shown)
    assert len(pairs) >= 20
    for key, value in pairs:
        assert (key, json.dumps(json.loads(value))) in real, (key, value)
    for key in json.loads(done.stdout):  # every top-level key of the output is shown
        assert f'"{key}": ' in shown, key


def test_every_app_url_the_docs_write_names_a_page() -> None:
    """Issue 46: an address the docs give opens a page, never "Page not found" (the
    Overview, st.navigation's default page, is served at `/`; `/Overview` is no address).
    tests/browser/test_browser_doc_urls.py opens each in Chromium."""
    from doc_urls import app_urls, page_of

    urls = app_urls()
    assert len(urls) >= 10 and "/" in urls and "/Compare" in urls
    assert {u: where for u, where in urls.items() if page_of(u) is None} == {}
