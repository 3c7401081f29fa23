"""ovearth_core.masks against numpy runs, a scalar COCO-string decoder and pycocotools decode."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import refs
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from pycocotools import mask as cocomask

from ovearth_core import masks
from ovearth_core.masks import FieldError

COCO_ALPHABET = "".join(chr(c) for c in range(48, 112))  # '0' .. 'o'


def _random_mask(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    return (rng.random((h, w)) < rng.random()).astype(np.uint8)


def _coco_string(mask: np.ndarray) -> str:
    return cocomask.encode(np.asfortranarray(mask.astype(np.uint8)))["counts"].decode("ascii")


# ------------------------------------------------------------------ compressed_counts


def test_compressed_counts_equals_numpy_runs_on_random_masks() -> None:
    """COCO strings written by pycocotools decode to the runs numpy finds in the pixels."""
    rng = np.random.default_rng(20261129)
    for _ in range(400):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        mask = _random_mask(rng, h, w)
        got = masks.compressed_counts(_coco_string(mask)).tolist()
        assert got == refs.runs_of(mask)


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("", []),
        ("0", [0]),
        ("5", [5]),
        ("?", [15]),  # 15: largest one-character value without the sign bit
        ("@", [-16]),  # sign bit set in the last group
        ("R1", [34]),  # 'R' = 2 | continuation, '1' = 1 << 5
        ("P0", [0]),  # redundant continuation group
        ("213", [2, 1, 3]),  # the spec's {"size": [2, 3], "counts": [2, 1, 3]}
        ("1232", [1, 2, 3, 4]),  # fourth run is a delta (+2) on the second
        ("151M", [1, 5, 1, 2]),  # 'M' = 29 = -3 in 5-bit two's complement: 5 - 3 = 2
    ],
    ids=["empty", "zero", "five", "fifteen", "minus16", "two-groups", "redundant", "spec-2x3",
         "positive-delta", "negative-delta"],
)
def test_compressed_counts_hand_picked(text: str, runs: list[int]) -> None:
    """Hand-decoded COCO strings (5-bit groups + 48, continuation 0x20, sign 0x10)."""
    assert masks.compressed_counts(text).tolist() == runs


@pytest.mark.parametrize(
    "text",
    ["2 1", "p", "21\u00e9", "2/", "\u20ac"],
    ids=["space", "above-o", "latin1-accent", "below-0", "euro-sign"],
)
def test_compressed_counts_rejects_bad_characters(text: str) -> None:
    with pytest.raises(FieldError):
        masks.compressed_counts(text)


@pytest.mark.parametrize("text", ["2P", "21o", "R"], ids=["after-value", "last-char", "single"])
def test_compressed_counts_rejects_truncated_values(text: str) -> None:
    """A final character with the continuation bit set leaves its value unfinished."""
    with pytest.raises(FieldError):
        masks.compressed_counts(text)


@given(st.lists(st.integers(0, masks.MAX_PIXELS), max_size=40))
@settings(deadline=None)
def test_compressed_counts_inverts_reference_encoder(runs: list[int]) -> None:
    assert masks.compressed_counts(refs.encode_runs_string(runs)).tolist() == runs


@given(st.text(alphabet=COCO_ALPHABET, max_size=30))
@settings(deadline=None, max_examples=300)
def test_compressed_counts_agrees_with_scalar_decoder(text: str) -> None:
    """On any string of the alphabet: same runs as the scalar decoder, or rejected when it is."""
    try:
        expected = refs.decode_runs_string(text)
    except ValueError:
        with pytest.raises(FieldError):
            masks.compressed_counts(text)
        return
    try:
        got = masks.compressed_counts(text)
    except FieldError:
        # Allowed only for encodings no mask within the pixel cap needs: a value beyond the
        # cap, or a group longer than the 6 characters that +-2**29 fits in.
        longest = max(len(g) for g in _groups(text))
        assert any(abs(v) > masks.MAX_PIXELS for v in expected) or longest > 6
        return
    assert got.tolist() == expected


def _groups(text: str) -> list[str]:
    """Split a COCO string into its values (a value ends at a character without bit 0x20)."""
    out, cur = [], ""
    for ch in text:
        cur += ch
        if not (ord(ch) - 48) & 0x20:
            out.append(cur)
            cur = ""
    return out or [""]


# ------------------------------------------------------------------------ parse_rle


def test_parse_rle_list_counts_spec_example() -> None:
    """Spec "Segmentation": {"size": [2, 3], "counts": [2, 1, 3]} sets pixel (row 0, col 1)."""
    rle, size = masks.parse_rle({"size": [2, 3], "counts": [2, 1, 3]})
    assert size == (2, 3)
    assert rle is not None
    np.testing.assert_array_equal(masks.decode(rle), [[0, 1, 0], [0, 0, 0]])


def test_parse_rle_string_counts() -> None:
    rle, size = masks.parse_rle({"size": [2, 3], "counts": "213"})
    assert size == (2, 3)
    np.testing.assert_array_equal(masks.decode(rle), [[0, 1, 0], [0, 0, 0]])


@pytest.mark.parametrize(
    ("value", "size"),
    [
        (None, (0, 0)),
        ({"size": [0, 0], "counts": []}, (0, 0)),
        ({"size": [2, 3], "counts": [6]}, (2, 3)),
        ({"size": [2, 3], "counts": "6"}, (2, 3)),
        ({"size": [2, 3], "counts": [6, 0]}, (2, 3)),
    ],
    ids=["null", "sentinel", "all-zero-list", "all-zero-string", "all-zero-trailing-empty-run"],
)
def test_parse_rle_empty_forms(value: object, size: tuple[int, int]) -> None:
    """Spec "Segmentation": null, the [0, 0] sentinel and all-zero masks are empty predictions;
    an all-zero mask keeps its declared size so that size checks still apply."""
    rle, got_size = masks.parse_rle(value)
    assert rle is None
    assert got_size == size


@pytest.mark.parametrize(
    "value",
    [
        [2, 1, 3],
        "213",
        {"counts": [2, 1, 3]},
        {"size": [2, 3]},
        {"size": (2, 3), "counts": [2, 1, 3]},
        {"size": [2, 3, 1], "counts": [2, 1, 3]},
        {"size": [6], "counts": [2, 1, 3]},
        {"size": [-2, -3], "counts": [6]},
        {"size": [2, -3], "counts": []},
        {"size": [True, 3], "counts": [2, 1]},
        {"size": [2.0, 3], "counts": [2, 1, 3]},
        {"size": ["2", "3"], "counts": [2, 1, 3]},
        {"size": [2, 3], "counts": [2, 1, 2]},
        {"size": [2, 3], "counts": [2, 1, 4]},
        {"size": [2, 3], "counts": "212"},
        {"size": [2, 3], "counts": [4, -1, 3]},
        {"size": [2, 3], "counts": "7@7"},
        {"size": [2, 3], "counts": [2, True, 3]},
        {"size": [2, 3], "counts": [2.0, 1, 3]},
        {"size": [2, 3], "counts": [2, "1", 3]},
        {"size": [2, 3], "counts": "2 1"},
        {"size": [2, 3], "counts": "2P"},
        {"size": [3, 5], "counts": "\u20ac"},
        {"size": [2, 3], "counts": {"0": 6}},
        {"size": [2, 3], "counts": None},
        {"size": [0, 0], "counts": [1]},
        {"size": [100_000, 100_000], "counts": [10_000_000_000]},
        {"size": [32_768, 16_384], "counts": [2**29]},
    ],
    ids=["list", "string", "no-size", "no-counts", "size-tuple", "size-3", "size-1",
         "size-negative", "size-one-negative", "size-bool", "size-float", "size-str",
         "list-sum-short", "list-sum-long", "string-sum-short", "list-negative-run",
         "string-negative-run", "list-bool", "list-float", "list-str", "string-space",
         "string-truncated", "string-non-latin1", "counts-object", "counts-null",
         "sentinel-nonempty", "over-cap-1e10", "over-cap-by-one"],
)
def test_parse_rle_rejects(value: object) -> None:
    """Spec "Segmentation": size [h, w] of non-negative ints; counts a valid COCO string or a
    list of non-negative ints summing to h*w; at most 2**29 - 1 pixels (the spec's 100,000,000
    raised to pycocotools' codec limit, docs/cli.md). Every violation is
    a FieldError (never another exception type)."""
    with pytest.raises(FieldError):
        masks.parse_rle(value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**9) | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3),
    max_leaves=8)
sizes = st.lists(st.integers(-1, 6), min_size=2, max_size=2) | json_values
counts_values = (st.lists(st.integers(-1, 12), max_size=6)
                 | st.text(alphabet=COCO_ALPHABET + " \u00e9\u20ac", max_size=8) | json_values)


@given(st.fixed_dictionaries({"size": sizes, "counts": counts_values}) | json_values)
@settings(deadline=None, max_examples=200)
def test_parse_rle_fuzz_only_field_errors(value: object) -> None:
    """Any JSON value either parses to a mask consistent with its runs or raises FieldError
    (never another exception, which would escape the loader's problem collection)."""
    try:
        rle, size = masks.parse_rle(value)
    except FieldError:
        return
    if rle is None:
        return
    assert isinstance(value, dict)
    h, w = value["size"]
    counts = value["counts"]
    runs = counts if isinstance(counts, list) else refs.decode_runs_string(counts)
    assert size == (h, w)
    assert sum(runs) == h * w and min(runs) >= 0
    np.testing.assert_array_equal(masks.decode(rle), refs.mask_from_runs(runs, h, w))


@pytest.mark.parametrize(
    "value",
    [
        {"size": [100_000, 100_000], "counts": [10_000_000_000]},
        {"size": [100_000, 100_000], "counts": refs.encode_runs_string([10_000_000_000])},
        {"size": [1_000_000, 1_000_000], "counts": []},
    ],
    ids=["list", "string", "empty-counts"],
)
def test_parse_rle_pixel_cap_rejects_without_allocating(value: object) -> None:
    """At most 2**29 - 1 pixels (docs/cli.md), checked on the declared size before any
    pixel buffer exists (peak Python allocation stays far below one byte per pixel)."""
    tracemalloc.start()
    try:
        with pytest.raises(FieldError):
            masks.parse_rle(value)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_parse_rle_at_pixel_cap_is_accepted() -> None:
    """Exactly 2**29 - 1 pixels is allowed (the cap is inclusive)."""
    rle, size = masks.parse_rle({"size": [256_999, 2_089], "counts": [2**29 - 1]})
    assert rle is None
    assert size == (256_999, 2_089)


# ------------------------------------------------------------ areas against numpy


def test_area_intersection_union_against_numpy() -> None:
    """RLE-domain statistics equal pixel counts of pycocotools-decoded arrays."""
    rng = np.random.default_rng(7)
    for i in range(200):
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        a, b = _random_mask(rng, h, w), _random_mask(rng, h, w)
        # alternate the two JSON forms of counts
        ja = {"size": [h, w], "counts": _coco_string(a) if i % 2 else refs.runs_of(a)}
        jb = {"size": [h, w], "counts": refs.runs_of(b) if i % 2 else _coco_string(b)}
        ra, _ = masks.parse_rle(ja)
        rb, _ = masks.parse_rle(jb)
        assert masks.area(ra) == int(a.sum())
        assert masks.area(rb) == int(b.sum())
        assert masks.intersection_area(ra, rb) == int((a & b).sum())
        assert masks.area(masks.union([ra, rb])) == int((a | b).sum())
        merged = masks.union([ra, rb])
        if merged is not None:
            np.testing.assert_array_equal(cocomask.decode(merged), a | b)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12), st.integers(1, 9), st.integers(0, 2**32 - 1), st.integers(0, 40))
def test_union_of_many_masks_against_numpy(h: int, w: int, seed: int, n: int) -> None:
    """The pairwise merge (any count, odd or even, with empty masks among them) is the
    pixel OR of the pycocotools-decoded masks."""
    rng = np.random.default_rng(seed)
    arrays = [_random_mask(rng, h, w) for _ in range(n)]
    rles = [None if not a.any() or k % 5 == 0 else masks.parse_rle(
        {"size": [h, w], "counts": refs.runs_of(a)})[0] for k, a in enumerate(arrays)]
    expected = np.zeros((h, w), dtype=np.uint8)
    for a, rle in zip(arrays, rles, strict=True):
        if rle is not None:
            expected |= a
    merged = masks.union(rles)
    if not expected.any():
        assert merged is None
    else:
        np.testing.assert_array_equal(cocomask.decode(merged), expected)


def test_empty_mask_statistics() -> None:
    rle, _ = masks.parse_rle({"size": [2, 3], "counts": [2, 1, 3]})
    assert masks.area(None) == 0
    assert masks.intersection_area(rle, None) == 0
    assert masks.intersection_area(None, rle) == 0
    assert masks.union([None, None]) is None
    assert masks.area(masks.union([None, rle, None])) == 1


def test_bbox_of_against_numpy() -> None:
    rng = np.random.default_rng(11)
    for _ in range(50):
        mask = np.zeros((20, 25), dtype=np.uint8)
        y0, x0 = (int(v) for v in rng.integers(0, 15, 2))
        y1, x1 = y0 + int(rng.integers(1, 5)), x0 + int(rng.integers(1, 9))
        mask[y0:y1, x0:x1] = 1
        rle, _ = masks.parse_rle(masks.encode(mask))
        assert masks.bbox_of(rle) == (x0, y0, x1 - x0, y1 - y0)
    assert masks.bbox_of(None) is None


# -------------------------------------------------------------------- round trips


@given(arrays(np.uint8, st.tuples(st.integers(1, 24), st.integers(1, 24)),
              elements=st.integers(0, 1)))
@settings(deadline=None, max_examples=200)
def test_round_trip_encode_parse_decode(mask: np.ndarray) -> None:
    """encode -> parse_rle -> decode gives the pixels back (None exactly when all zero)."""
    encoded = masks.encode(mask)
    assert isinstance(encoded["counts"], str)
    assert encoded["counts"] == _coco_string(mask)
    rle, size = masks.parse_rle(encoded)
    assert size == mask.shape
    if not mask.any():
        assert rle is None
    else:
        np.testing.assert_array_equal(masks.decode(rle), mask)


@given(arrays(np.uint8, st.tuples(st.integers(1, 24), st.integers(1, 24)),
              elements=st.integers(0, 1)))
@settings(deadline=None, max_examples=200)
def test_round_trip_list_counts(mask: np.ndarray) -> None:
    """Uncompressed list counts from numpy runs parse to the same pixels."""
    rle, size = masks.parse_rle({"size": list(mask.shape), "counts": refs.runs_of(mask)})
    assert size == mask.shape
    if not mask.any():
        assert rle is None
    else:
        np.testing.assert_array_equal(masks.decode(rle), mask)
        assert masks.area(rle) == int(mask.sum())


def test_compressed_stats_agree_with_one_by_one_decoding() -> None:
    """The batch check (one vectorised pass over many strings) reads every string exactly
    as the one-by-one reader: same totals and foreground areas for valid strings (areas
    also as pycocotools counts them), rejection of the others."""
    rng = np.random.default_rng(11)
    alphabet = [chr(c) for c in range(40, 120)]  # below '0', the alphabet, above 'o'
    strings = ["".join(rng.choice(alphabet, int(rng.integers(1, 14)))) for _ in range(5000)]
    sizes = {}
    for _ in range(300):  # and real encodings of random masks
        h, w = (int(v) for v in rng.integers(1, 80, 2))
        text = masks.encode((rng.random((h, w)) < rng.random()).astype(np.uint8))["counts"]
        strings.append(text)
        sizes[text] = (h, w)
    stats = masks.compressed_stats(strings)
    for text in set(strings):
        try:
            runs = masks.compressed_counts(text)
            expected = ((int(runs.sum()), int(runs[1::2].sum())) if (runs >= 0).all()
                        else None)
        except masks.FieldError:
            expected = None
        assert stats.get(text) == expected, text
    for text, (h, w) in sizes.items():
        assert stats[text][1] == masks.area({"size": [h, w], "counts": text.encode()})
    # Computed in slices (bounded memory): the same statistics whatever the slice size.
    for chars in (1, 7, 1000):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(masks, "_STATS_CHARS", chars)
            assert masks.compressed_stats(strings) == stats


# ------------------------------------------------ compressed strings piece by piece (issue 17)


def _old_compressed_counts(counts: str) -> np.ndarray:
    """The reader of commit 9cdefcc (whole string at once, ~80 bytes per character), copied
    as the reference for verdicts and messages."""
    if not counts.isascii():
        pos = next(i for i, ch in enumerate(counts) if not ch.isascii())
        raise FieldError(".counts", "a COCO compressed RLE string (characters '0' to 'o')",
                         f"<character {counts[pos]!r} at position {pos}>")
    raw = np.frombuffer(counts.encode("ascii"), dtype=np.uint8)
    if raw.size == 0:
        return np.zeros(0, dtype=np.int64)
    c = raw.astype(np.int64) - 48
    bad = (c < 0) | (c > 63)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise FieldError(".counts", "a COCO compressed RLE string (characters '0' to 'o')",
                         f"<character {counts[pos]!r} at position {pos}>")
    more = (c & 0x20) != 0
    if more[-1]:
        raise FieldError(".counts", "a complete COCO compressed RLE string",
                         "<a string whose last value is truncated>")
    ends = np.flatnonzero(~more)
    starts = np.concatenate(([0], ends[:-1] + 1))
    lengths = ends - starts + 1
    if lengths.max() > 6:
        raise FieldError(".counts", f"run lengths within the {masks.MAX_PIXELS:,}-pixel cap",
                         "<an encoded value too large for any valid mask>")
    group = np.repeat(np.arange(ends.size), lengths)
    k = np.arange(c.size) - starts[group]
    vals = np.add.reduceat((c & 0x1F) << (5 * k), starts)
    negative = (c[ends] & 0x10) != 0
    vals[negative] |= -(np.int64(1) << (5 * lengths[negative]))
    runs = vals.copy()
    runs[1::2] = np.cumsum(vals[1::2])
    if runs.size > 2:
        runs[2::2] = np.cumsum(vals[2::2])
    return runs


def _verdict(fn: object, text: str) -> object:
    try:
        return ("ok", fn(text).tolist() if fn is not masks.compressed_totals
                else fn(text))  # type: ignore[operator]
    except FieldError as err:
        return ("error", err.field, err.expected, err.found)


def _old_totals(text: str) -> tuple[int, int]:
    runs = _old_compressed_counts(text)
    if (runs < 0).any():
        raise FieldError(".counts", "non-negative run lengths", "<a negative run length>")
    return int(runs.sum()), int(runs[1::2].sum())


_GARBAGE = st.text(alphabet=st.one_of(st.sampled_from(COCO_ALPHABET), st.characters()),
                   max_size=60)
_VALID = st.builds(lambda h, w, seed, p: _coco_string(
    (np.random.default_rng(seed).random((h, w)) < p).astype(np.uint8)),
    st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32 - 1), st.floats(0, 1))


@given(st.one_of(_GARBAGE, st.text(alphabet=COCO_ALPHABET, max_size=60), _VALID),
       st.integers(6, 40))
@settings(deadline=None, max_examples=400)
def test_pieces_give_the_old_verdicts_and_messages(text: str, piece: int) -> None:
    """Read ``piece`` characters at a time (so values and delta chains cross many piece
    boundaries): the same runs, totals and error messages as the whole-string reader."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(masks, "_SCAN_CHARS", piece)
        assert _verdict(masks.compressed_counts, text) == _verdict(_old_compressed_counts, text)
        totals = _verdict(masks.compressed_totals, text)
        try:
            assert totals == ("ok", _old_totals(text))
        except FieldError as err:
            assert totals == ("error", err.field, err.expected, err.found)
        stats = masks.compressed_stats([text, "213"])
        # The empty string is left to parse_rle (its size decides), as before.
        assert stats.get(text) == (totals[1] if totals[0] == "ok" and text else None)


@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32 - 1), st.floats(0, 1),
       st.integers(6, 30))
@settings(deadline=None, max_examples=200)
def test_pieces_of_pycocotools_strings_decode_as_pycocotools(h: int, w: int, seed: int,
                                                             p: float, piece: int) -> None:
    """Strings written by pycocotools: the runs of its decoded pixels, its area."""
    mask = (np.random.default_rng(seed).random((h, w)) < p).astype(np.uint8)
    text = _coco_string(mask)
    decoded = cocomask.decode({"size": [h, w], "counts": text.encode("ascii")})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(masks, "_SCAN_CHARS", piece)
        runs = masks.compressed_counts(text)
        total, area = masks.compressed_totals(text)
    assert runs.tolist() == refs.runs_of(decoded)
    assert (total, area) == (h * w, int(cocomask.area(
        {"size": [h, w], "counts": text.encode("ascii")})))


def _peak_bytes(fn: object, *args: object) -> int:
    tracemalloc.start()
    try:
        fn(*args)  # type: ignore[operator]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def test_long_string_is_checked_in_memory_bounded_by_a_piece() -> None:
    """Issue 17: the pre-check of a long valid string (here 4.5 million characters)
    allocates a constant (pieces of ``_SCAN_CHARS`` characters), not ~80 bytes per
    character as the whole-string reader did; the decoded runs cost their 8 bytes each."""
    rng = np.random.default_rng(3)
    mask = (rng.random((3000, 3000)) < 0.5).astype(np.uint8)
    text = _coco_string(mask)
    value = {"size": [3000, 3000], "counts": text}
    n = len(text)
    assert n > 4_000_000
    piece_budget = 120 * masks._SCAN_CHARS  # bytes: the temporaries of one piece
    assert _peak_bytes(masks.compressed_stats, [text]) < piece_budget
    assert _peak_bytes(masks.parse_rle, value) < piece_budget
    runs = masks.compressed_counts(text)
    assert _peak_bytes(masks.compressed_counts, text) < 8 * runs.size + piece_budget
    assert _peak_bytes(_old_compressed_counts, text) > 30 * n  # what the budget rules out
    assert masks.compressed_stats([text])[text] == (9_000_000, int(mask.sum()))


# ------------------------------------------------------------------ converter helpers (issue 16)


def _pixel_corners(mask: np.ndarray) -> np.ndarray:
    """Brute force: the four corners of every foreground pixel, as ``(x, y)``."""
    ys, xs = np.nonzero(mask)
    return np.concatenate([np.stack([xs + dx, ys + dy], axis=1)
                           for dx in (0, 1) for dy in (0, 1)]).astype(float)


@settings(max_examples=200, deadline=None)
@given(arrays(np.uint8, st.tuples(st.integers(1, 9), st.integers(1, 9)),
              elements=st.integers(0, 1)))
def test_hull_points_span_the_same_hull_as_every_pixel_corner(mask: np.ndarray) -> None:
    rle = masks.parse_rle(masks.encode(mask))[0]
    if rle is None:
        return
    ours = masks.hull_points(rle)
    brute = _pixel_corners(mask)
    assert set(map(tuple, ours)) <= set(map(tuple, brute))
    assert shapely.equals(shapely.convex_hull(shapely.multipoints(ours)),
                          shapely.convex_hull(shapely.multipoints(brute)))


def test_from_polygons_matches_pycocotools_and_empty_is_none() -> None:
    poly = [[1.0, 1.0, 7.0, 1.0, 7.0, 5.0], [0.0, 6.0, 3.0, 6.0, 3.0, 9.0]]
    ours = masks.from_polygons(poly, 10, 8)
    ref = cocomask.merge(cocomask.frPyObjects(poly, 10, 8))
    assert (masks.decode(ours) == cocomask.decode(ref)).all()
    assert masks.from_polygons([], 10, 8) is None
    assert masks.from_polygons([[20.0, 20.0, 30.0, 20.0, 30.0, 30.0]], 10, 8) is None


def test_to_json_and_run_lengths() -> None:
    mask = np.zeros((3, 4), np.uint8)
    mask[1, 1:3] = 1
    rle = masks.parse_rle(masks.encode(mask))[0]
    doc = masks.to_json(rle)
    assert doc["size"] == [3, 4] and isinstance(doc["counts"], str)
    assert masks.run_lengths(rle).tolist() == refs.runs_of(mask)
    assert masks.run_lengths({"size": [3, 4], "counts": [4, 1, 2, 1, 4]}).tolist() == [
        4, 1, 2, 1, 4]
