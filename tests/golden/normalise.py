"""Canonical form of command outputs for the layout golden test (tests/core/test_layout_golden.py).

The expected files were written by the commit before the package was split into layers
(tests/golden/make_layout_golden.sh). To pass on any CPU, floats are compared at 10 decimals;
to keep the repository small, plotly's bundled JavaScript is replaced by a marker and every
inlined image by the SHA-256 of its base64 text, and the report's generation time by a
marker. Everything else is compared byte for byte.
"""

from __future__ import annotations

import hashlib
import re

_PLOTLY_BUNDLE = re.compile(rb'(<script type="text/javascript">).*?(</script>)', re.S)
_IMAGE = re.compile(rb"(data:image/[a-z]+;base64,)([A-Za-z0-9+/=]+)")
_GENERATED = re.compile(rb"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC")
_FLOAT = re.compile(rb"(?<![\w.])(-?\d+\.\d{11,})(e[-+]?\d+)?")


def _image_digest(m: re.Match[bytes]) -> bytes:
    return m.group(1) + b"sha256:" + hashlib.sha256(m.group(2)).hexdigest().encode()


def _float(m: re.Match[bytes]) -> bytes:
    return f"{float(m.group(0).decode()):.10g}".encode()


def normalise(data: bytes) -> bytes:
    """Return `data` (JSON or HTML bytes) in the canonical form described above."""
    data = _PLOTLY_BUNDLE.sub(rb"\1plotly.js\2", data, count=1)
    data = _IMAGE.sub(_image_digest, data)
    data = _GENERATED.sub(b"Generated (time) UTC", data)
    return _FLOAT.sub(_float, data)
