"""The report writes user text as text (issue 47): submission names, categories, phrases and
queries reach the HTML escaped wherever they appear, in markup, attributes and embedded
figures alike.

The rule is checked by what a browser's parser sees, not by looking for one string: with
hostile text in every user field, the document holds no element or attribute the text
smuggled in, and the text itself is there, as text, so the check cannot pass vacuously.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import orjson
import pytest
from report_fixtures import build_dataset

from ovearth_core.report import main
from ovearth_core.report.html import audit_section

# Each tries a different way out: a tag, an attribute value, the end of a <script>.
NAME_A = '<x-evil-a onmouseover="1">A&B</x-evil-a>'
NAME_B = "B\"'><x-evil-b>"
CATEGORY = "pond</script><x-evil-c>"
PHRASE_MARK = "<x-evil-p>"
QUERY_MARK = '"><x-evil-q data-evil="1">'


class _Doc(HTMLParser):
    """Tags, attribute names and text (outside scripts) as a browser would read them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.text: list[str] = []
        self.attr_values: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            self.attrs.add(name)
            if value is not None:
                self.attr_values.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Doc:
    doc = _Doc()
    doc.feed(html)
    doc.close()
    return doc


def _assert_nothing_smuggled(doc: _Doc) -> None:
    smuggled = {t for t in doc.tags if t.startswith("x-evil")}
    assert not smuggled, f"user text became elements: {sorted(smuggled)}"
    assert not {"onmouseover", "data-evil"} & doc.attrs, "user text became attributes"


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("hostile")
    data = build_dataset(root / "d", n_annotations=4)
    gt = orjson.loads(data.gt.read_bytes())
    for ann in gt["annotations"]:
        ann["category_name"] = CATEGORY
    for row in gt["tasks"]["open_vocabulary"]:
        row["phrase"] = f"{PHRASE_MARK} {row['phrase']}"
    for key in ("referring", "reasoning"):
        for row in gt["tasks"][key]:
            row["query"] = f"{QUERY_MARK} {row['query']}"
    data.gt.write_bytes(orjson.dumps(gt))
    out = root / "report.html"
    assert main(["--gt", str(data.gt), "--predictions", str(data.pred_a), "--compare",
                 str(data.pred_b), "--name", NAME_A, "--name", NAME_B, "--modalities",
                 "segmentation,bbox", "--worst", "2", "--out", str(out),
                 "--resamples", "1000"]) == 0
    return out.read_text(encoding="utf-8")


def test_hostile_user_text_is_escaped_everywhere_in_the_report(hostile_report: str) -> None:
    doc = _parse(hostile_report)
    _assert_nothing_smuggled(doc)
    text = "".join(doc.text)
    for shown in (NAME_A, NAME_B, CATEGORY, PHRASE_MARK, QUERY_MARK):
        assert shown in text, f"{shown!r} should be in the report as text"


def test_hostile_text_in_attributes_stays_inside_its_attribute(hostile_report: str) -> None:
    """An ``alt`` or ``data-*`` value holding a name is the name, quotes and all."""
    doc = _parse(hostile_report)
    assert any(NAME_A in v for v in doc.attr_values)
    assert any(NAME_B in v for v in doc.attr_values)


def _audit_result(text: str) -> dict[str, Any]:
    suspect = {"rank": 1, "kind": "wrong_class", "query_id": text, "category": text,
               "negative": True, "bbox": [1, 2, 3, 4], "gt_bbox": None,
               "proposed_category": text, "score": 0.5, "support": 0.5}
    return {"suspects": [suspect], "modality": text,
            "submissions": [{"name": text, "weight": 1.0}, {"name": "b", "weight": 0.5}],
            "warnings": [{"message": text}]}


def test_the_audit_section_escapes_every_user_field() -> None:
    hostile = '<x-evil-q data-evil="1">"&'
    doc = _parse(audit_section(_audit_result(hostile)))
    _assert_nothing_smuggled(doc)
    text = "".join(doc.text)
    # query, category, proposed category, modality, voter, warning: six places
    assert text.count(hostile) >= 6
