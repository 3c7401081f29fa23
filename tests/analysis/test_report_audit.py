"""The report's audit section (issue 36): ``--audit P1 P2 ...`` adds the suspects of the
consensus audit, best first; without it there is none; one voter is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from audit_scene import INJECTED, write_audit_dataset

from ovearth_core.report.cli import main


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    return write_audit_dataset(tmp_path_factory.mktemp("report_audit"))


def _rows(html: str) -> list[list[str]]:
    section = html.split('<h2 id="audit">', 1)[1]
    body = section.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in body.split("<tr>")[1:]]


def test_audit_section_lists_the_injected_errors_first(scene: tuple[Path, list[Path]],
                                                       tmp_path: Path) -> None:
    gt, preds = scene
    out = tmp_path / "report.html"
    assert main(["--gt", str(gt), "--predictions", str(preds[-1]), "--modalities", "bbox",
                 "--out", str(out), "--worst", "0", "--audit", *map(str, preds)]) == 0
    html = out.read_text(encoding="utf-8")
    assert '<a href="#audit">Audit</a>' in html
    rows = _rows(html)
    first = {(r[1].replace(" ", "_"), int(r[2][1]), r[2].split("_")[1])
             for r in rows[:len(INJECTED)]}
    assert first == INJECTED
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
    assert "consensus of 10 submissions" in html


def test_no_audit_section_unless_asked(scene: tuple[Path, list[Path]], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    gt, preds = scene
    out = tmp_path / "report.html"
    assert main(["--gt", str(gt), "--predictions", str(preds[-1]), "--modalities", "bbox",
                 "--out", str(out), "--worst", "0"]) == 0
    assert 'id="audit"' not in out.read_text(encoding="utf-8")
    out.unlink()
    assert main(["--gt", str(gt), "--predictions", str(preds[-1]), "--modalities", "bbox",
                 "--out", str(out), "--worst", "0", "--audit", str(preds[0])]) == 2
    assert "at least 2 submissions" in capsys.readouterr().err
    assert not out.exists()
