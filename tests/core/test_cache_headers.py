"""Cache entries whose checksum is valid but whose header is not what encode writes
(issue 35 item 11): each is a miss (``Rejected``), never an exception or a served array."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core.cache import MAGIC, Rejected, decode, encode

KEY = hashlib.sha256(b"k").hexdigest()


def _seal(doc: Any, data: bytes) -> bytes:
    """An entry laid out as :func:`encode` lays one out, with any JSON document."""
    raw = orjson.dumps(doc)
    parts = [raw, b" " * (-len(raw) % 8), data]
    digest = hashlib.sha256(b"".join(parts)).digest()
    length = sum(map(len, parts))
    return b"".join([MAGIC, bytes.fromhex(KEY), (len(raw) + len(parts[1])).to_bytes(8, "little"),
                     length.to_bytes(8, "little"), digest, *parts])


def _doc(arrays: Any, **other: Any) -> dict[str, Any]:
    return {"key": KEY, "value": {"a": 1}, "deep": False, "arrays": arrays, **other}


DATA = np.arange(6, dtype="<i8").tobytes()


def test_the_seal_is_encodes_layout() -> None:
    blob = encode(KEY, {"a": 1}, {"x": np.arange(6, dtype="<i8").reshape(2, 3)})
    assert _seal(_doc({"x": ["<i8", [2, 3], 0, 48]}), DATA) == blob
    value, arrays = decode(blob, KEY)
    assert value == {"a": 1} and arrays["x"].tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize(("arrays", "why"), [
    ([["<i8", [6], 0, 48]], "header field arrays: expected an object, found list"),
    ("x", "header field arrays: expected an object, found str"),
    ({"x": ["<i8", [-1], 0, 48]}, "a shape of at most 32 sizes >= 0"),
    ({"x": ["<i8", [6], -8, 48]}, "expected an offset"),
    ({"x": ["<i8", [6], 0, -48]}, "expected an offset"),
    ({"x": ["<i8", [6], 4, 48]}, "expected an offset (a multiple of 8)"),
    ({"x": ["<i8", [2, 3], 0, 40]}, "is not 40 bytes"),
    ({"x": ["<i8", [12], 0, 96]}, "beyond the entry's 48"),
    ({"x": ["<i8", [True], 0, 8]}, "a shape of at most"),
    ({"x": [["<i8"], [6], 0, 48]}, "is not stored"),
    ({"x": ["O", [6], 0, 48]}, "is not stored"),
    ({"x": ["<i8", [6], 0]}, "expected [dtype, shape, offset, bytes]"),
])
def test_a_malformed_array_index_is_rejected_by_field(arrays: Any, why: str) -> None:
    # On the main before this: a list or a string raised AttributeError; negative shapes,
    # offsets or sizes were served as hits.
    with pytest.raises(Rejected) as err:
        decode(_seal(_doc(arrays), DATA), KEY)
    assert why in str(err.value)


@pytest.mark.parametrize("doc", [[], "x", {"key": KEY}, _doc({}, extra=1),
                                 {**_doc({}), "deep": "yes"},
                                 {**_doc({}), "deep": True, "value": {"\x00table": 5}}])
def test_a_malformed_document_is_rejected(doc: Any) -> None:
    with pytest.raises(Rejected):
        decode(_seal(doc, b""), KEY)


_json = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(arrays=_json, deep=_json, value=_json)
def test_any_header_is_an_entry_or_rejected(arrays: Any, deep: Any, value: Any) -> None:
    blob = _seal({"key": KEY, "value": value, "deep": deep, "arrays": arrays}, DATA)
    try:
        _, out = decode(blob, KEY)
    except Rejected:
        return
    for a in out.values():  # what is served lies within the data, of its stated size
        assert a.nbytes <= len(DATA)


@settings(max_examples=200, deadline=None)
@given(shape=st.lists(st.integers(-3, 8), max_size=3), offset=st.integers(-16, 64),
       nbytes=st.integers(-16, 96), dtype=st.sampled_from(["<i8", "<f4", "|u1", "<i2"]))
def test_any_array_extent_is_served_exactly_or_rejected(shape: list[int], offset: int,
                                                        nbytes: int, dtype: str) -> None:
    blob = _seal(_doc({"x": [dtype, shape, offset, nbytes]}), DATA)
    try:
        _, out = decode(blob, KEY)
    except Rejected:
        return
    a = out["x"]
    assert list(a.shape) == shape and a.nbytes == nbytes and offset + nbytes <= len(DATA)
    assert a.tobytes() == DATA[offset:offset + nbytes]
