"""The pointers in .streamlit/config.toml's comments resolve (issue 34, item 10: it named a
README section, "Exposing the app", that no longer existed). A comment may name a file
(``docs/security.md``) and, quoted after it, one of its headings."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POINTER = re.compile(r'\b((?:docs/)?[\w.-]+\.md)(?:\s+"([^"]+)")?')


def _headings(path: Path) -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.*)$", path.read_text(),
                                                    re.MULTILINE)}


def test_config_comments_point_to_existing_docs() -> None:
    comments = [line for line in (ROOT / ".streamlit" / "config.toml").read_text().splitlines()
                if line.lstrip().startswith("#")]
    pointers = [m.groups() for line in comments for m in POINTER.finditer(line)]
    assert pointers, "the config's comments name no document"
    for name, section in pointers:
        path = ROOT / name
        assert path.is_file(), f"config.toml points to {name}, which does not exist"
        if section:
            assert section in _headings(path), f"no heading {section!r} in {name}"
    # and the old pointer, a README section, is gone for good
    assert not any('README "' in line for line in comments)


def test_the_pointed_document_says_how_to_serve_other_machines() -> None:
    text = (ROOT / "docs" / "security.md").read_text()
    assert "--server.address 0.0.0.0" in text and "other machines" in text
