"""A tiny OVEarth dataset written into a temporary folder, for the app and viz tests.

Layout written by :func:`write_dataset` (paths relative to ``root``)::

    ground_truth.json
    images/rgb.png            64 x 48 RGB
    images/sixteen.tif        64 x 48 single-band 16-bit
    images/four_band.tif      64 x 48 4-band (RGBA) 8-bit
    predictions/model_a.json  mostly right, with one failure of each kind
    predictions/model_b.json  mostly wrong

Annotation ``a4`` points at ``images/missing.png``, which is never written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ovearth_core.masks import encode

W, H = 64, 48


@dataclass(frozen=True)
class Dataset:
    root: Path
    gt: Path
    images: Path
    model_a: Path
    model_b: Path


def rect_mask(x1: int, y1: int, x2: int, y2: int) -> np.ndarray:
    """A (H, W) 0/1 mask with the rectangle [x1, x2) x [y1, y2) set."""
    m = np.zeros((H, W), dtype=np.uint8)
    m[y1:y2, x1:x2] = 1
    return m


def _obb(x1: float, y1: float, x2: float, y2: float) -> list[list[float]]:
    return [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]


def _annotation(ann_id: str, image: str, category: str, box: tuple[int, int, int, int]) -> dict:
    x1, y1, x2, y2 = box
    return {
        "id": ann_id, "image_path": image, "width": W, "height": H, "category_name": category,
        "segmentation": encode(rect_mask(*box)),
        "bbox": [[x1, y1, x2 - x1, y2 - y1]],
        "oriented_bbox": [_obb(x1, y1, x2, y2)],
    }


def _pred(qid: str, box: tuple[int, int, int, int] | None, extra_boxes: int = 0,
          score: float = 0.9) -> dict:
    if box is None:
        return {"query_id": qid, "segmentation": None, "bbox": [], "oriented_bbox": []}
    boxes = [box] * (1 + extra_boxes)
    return {
        "query_id": qid,
        "segmentation": encode(rect_mask(*box)),
        "bbox": [{"bbox": list(b), "score": score} for b in boxes],
        "oriented_bbox": [{"polygon": _obb(*b), "score": score} for b in boxes],
    }


GROUND_TRUTH = {
    "annotations": [
        _annotation("a1", "images/rgb.png", "storage tank", (10, 10, 20, 20)),
        _annotation("a2", "images/sixteen.tif", "ship", (30, 20, 44, 30)),
        _annotation("a3", "images/four_band.tif", "bridge", (5, 30, 25, 40)),
        _annotation("a4", "images/missing.png", "storage tank", (40, 5, 50, 15)),
    ],
    "tasks": {
        "open_vocabulary": [
            {"query_id": "ov_000001", "ann_id": "a1", "type": "positive", "phrase": "storage tank"},
            {"query_id": "ov_000002", "ann_id": "a1", "type": "negative", "phrase": "ship"},
            {"query_id": "ov_000003", "ann_id": "a2", "type": "positive", "phrase": "ship"},
            {"query_id": "ov_000004", "ann_id": "a2", "type": "negative", "phrase": "bridge"},
            {"query_id": "ov_000005", "ann_id": "a3", "type": "positive", "phrase": "bridge"},
            {"query_id": "ov_000006", "ann_id": "a4", "type": "positive", "phrase": "oil tank"},
        ],
        "referring": [
            {"query_id": "ref_000001", "ann_id": "a1", "query": "the tank in the top left"},
            {"query_id": "ref_000002", "ann_id": "a2", "query": "the ship near the bridge"},
        ],
        "reasoning": [
            {"query_id": "rea_000001", "ann_id": "a3", "query": "structure for crossing water"},
            {"query_id": "rea_000002", "ann_id": "a4", "query": "container for storing oil"},
        ],
    },
}

# model_a: ov_000001 ok; ov_000002 hallucination; ov_000003 poor localisation;
# ov_000004 true negative; ov_000005 duplicates; ov_000006 miss.
MODEL_A = {"tasks": {
    "open_vocabulary": [
        _pred("ov_000001", (10, 10, 20, 20)),
        _pred("ov_000002", (50, 30, 60, 40)),
        _pred("ov_000003", (36, 24, 50, 34)),
        _pred("ov_000004", None),
        _pred("ov_000005", (5, 30, 25, 40), extra_boxes=1),
        _pred("ov_000006", None),
    ],
    "referring": [_pred("ref_000001", (10, 10, 20, 20)), _pred("ref_000002", (0, 0, 8, 8))],
    "reasoning": [_pred("rea_000001", (5, 30, 25, 40)), _pred("rea_000002", (40, 5, 50, 15))],
}}

# model_b: everything on the wrong object.
MODEL_B = {"tasks": {
    "open_vocabulary": [_pred(q["query_id"], (0, 0, 6, 6))
                        for q in GROUND_TRUTH["tasks"]["open_vocabulary"]],
    "referring": [_pred("ref_000001", (0, 0, 6, 6))],
    "reasoning": [],
}}


def write_images(images: Path) -> None:
    images.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 255, (H, W, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(images / "rgb.png")
    sixteen = (np.linspace(1000, 3000, W * H).reshape(H, W)).astype(np.uint16)
    Image.fromarray(sixteen).save(images / "sixteen.tif")
    four = rng.integers(0, 255, (H, W, 4), dtype=np.uint8)
    Image.fromarray(four).save(images / "four_band.tif")


def write_dataset(root: Path) -> Dataset:
    """Write the tiny dataset under ``root`` and return its paths."""
    root.mkdir(parents=True, exist_ok=True)
    write_images(root / "images")
    (root / "predictions").mkdir(exist_ok=True)
    gt = root / "ground_truth.json"
    gt.write_text(json.dumps(GROUND_TRUTH))
    a, b = root / "predictions" / "model_a.json", root / "predictions" / "model_b.json"
    a.write_text(json.dumps(MODEL_A))
    b.write_text(json.dumps(MODEL_B))
    return Dataset(root, gt, root, a, b)


APP = str(Path(__file__).resolve().parents[1] / "app.py")


def app_on(ds: Dataset | None = None, timeout: float = 120, **state: object):
    """An AppTest of the overview, pointed at ``ds`` (ground truth, images, model A)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=timeout)
    if ds is not None:
        at.session_state["gt_path"] = str(ds.gt)
        at.session_state["images_dir"] = str(ds.images)
        at.session_state["pred_path"] = str(ds.model_a)
    for key, value in state.items():
        at.session_state[key] = value
    return at


def goto(at, page: str):
    """``at.switch_page(page)``, ``page`` a file of pages/common/nav.py's table
    (``"app.py"`` is the Overview): before a first run AppTest requests the page by its
    file's name, which is its URL path (nav.py), so it reaches the page as a browser's link
    does; a file that is no page is refused. :func:`assert_on` checks the page drawn."""
    from pages.common import nav

    page = nav.OVERVIEW if page == "app.py" else page
    if page not in nav.BY_FILE:
        raise ValueError(f"{page!r} is not a page of pages/common/nav.py")
    return at.switch_page(page)


def assert_on(at, page: str) -> None:
    """The last run drew ``page`` (its own title), not another (e.g. the Overview)."""
    from pages.common import nav

    page = nav.OVERVIEW if page == "app.py" else page
    assert [t.value for t in at.title][:1] == [nav.BY_FILE[page].heading], \
        (page, [t.value for t in at.title])


def open_page(page: str, params: dict[str, str], timeout: float = 120):
    """An AppTest of ``page`` opened from a link with ``params`` (its query string): a
    fresh session whose first run is on that page, as a browser's direct link."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=timeout)
    goto(at, page)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert_on(at, page)
    return at


def assert_ok(at) -> None:
    """No exception and no error element on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def write_large_image_dataset(root: Path) -> Dataset:
    """One 12 x 8 car (query ``ref_1``) on a 2600 x 1800 image, downscaled for display;
    laid out like the demo folder (``ground_truth.json``, ``predictions/model.json``)."""
    (root / "images").mkdir(parents=True)
    w, h = 2600, 1800
    stripes = np.zeros((h, w, 3), dtype=np.uint8)
    stripes[:, ::2] = 255  # one-pixel stripes: only full resolution shows them
    Image.fromarray(stripes).save(root / "images" / "big.png")
    box = [2000.0, 1500.0, 12.0, 8.0]
    corners = [[2000.0, 1500.0], [2012.0, 1500.0], [2012.0, 1508.0], [2000.0, 1508.0]]
    gt = {"annotations": [{"id": "1", "image_path": "images/big.png", "width": w, "height": h,
                           "category_name": "car", "segmentation": None, "bbox": [box],
                           "oriented_bbox": [corners]}],
          "tasks": {"referring": [{"query_id": "ref_1", "ann_id": "1", "query": "the car"}]}}
    pred = {"tasks": {"referring": [{"query_id": "ref_1", "bbox": [[2001, 1501, 2013, 1509]],
                                     "oriented_bbox": [corners]}]}}
    (root / "predictions").mkdir()
    gt_path, pred_path = root / "ground_truth.json", root / "predictions" / "model.json"
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps(pred))
    return Dataset(root, gt_path, root, pred_path, pred_path)


def _component_data(proto) -> dict:
    """The data a ``st.components.v2`` element was given, as its script gets it: JSON, or
    JSON with Arrow tables (``mixed``: each table a ``pyarrow.Table``)."""
    import pyarrow as pa

    if proto.WhichOneof("data") != "mixed":
        return json.loads(proto.json)
    data = json.loads(proto.mixed.json)
    for name, value in data.items():
        if isinstance(value, dict) and "__streamlit_arrow_ref__" in value:
            blob = proto.mixed.arrow_blobs[value["__streamlit_arrow_ref__"]].data
            data[name] = pa.ipc.open_stream(blob).read_all()
    return data


def _pictures(table) -> dict[str, bytes]:
    """The card's ``pictures`` table (``None``: none sent) as ``{address: JPEG}``."""
    if table is None:
        return {}
    return dict(zip(table.column("digest").to_pylist(), table.column("jpeg").to_pylist(),
                    strict=True))


def _card_elements(at) -> list:
    return [e for e in at.get("bidi_component")
            if e.proto.component_name == "ovearth_viewer_card"]


def viewer_cards(at) -> list[dict]:
    """The data of each explorer viewer card (``pages/common/viewer_card.py``) on the page
    (none or one): ``html`` (what the card shows), ``url`` (the query string it writes
    to the address bar), ``ahead`` (the cards its buttons open, at the click) and
    ``pictures`` (``{address: JPEG}``: the pictures sent with it, those the browser was
    not sent before)."""
    cards = []
    for e in _card_elements(at):
        data = _component_data(e.proto)
        cards.append({**data, "pictures": _pictures(data.get("pictures"))})
    return cards


def viewer_card(at) -> dict:
    """The data of the explorer's viewer card (exactly one on the page)."""
    cards = viewer_cards(at)
    assert len(cards) == 1, f"expected one viewer card, found {len(cards)}"
    return cards[0]


def card_html(at) -> str:
    """The HTML the explorer's viewer card shows (picture, notes, metrics, facts)."""
    return viewer_card(at)["html"]


def card_params(at) -> dict[str, str]:
    """The URL parameters the explorer's viewer card writes to the address bar."""
    from urllib.parse import parse_qsl

    return dict(parse_qsl(viewer_card(at)["url"].lstrip("?"), keep_blank_values=True))


def card_buttons(html: str, errors: bool = False) -> dict[str, bool]:
    """The navigator's buttons in a card's HTML: ``{"prev": enabled, "next": enabled}``
    (those it has), read from the ``<button … data-go=…>`` tags; with ``errors``, the
    error navigator's too (``"prev_err"`` / ``"next_err"``, a query with box errors)."""
    import re

    names = "prev|next|prev_err|next_err" if errors else "prev|next"
    return {m.group(2): "disabled" not in m.group(1) for m in re.finditer(
        rf"<button([^>]*data-go='({names})'[^>]*)>", html)}


CARD_LABELS = {"prev": "◀ Previous", "next": "Next ▶", "prev_err": "◁ Previous error",
               "next_err": "Next error ▷"}


def press(at, go: str, enabled: bool = True):
    """Click the viewer card's "◀ Previous" (``go="prev"``) or "Next ▶" (``"next"``) and
    run: what the card's script sends at that click, its trigger ``nav`` with ``go``
    (AppTest has no interaction for a custom component, so the trigger's widget state goes
    in beside the page's other widgets, as the browser sends it). The button must be in
    the card, with that label, and enabled (``enabled=False``: disabled, the trigger sent
    all the same, as a click on the card before it changed would)."""
    import re

    (element,) = _card_elements(at)
    html = _component_data(element.proto)["html"]
    button = re.search(rf"<button[^>]*data-go='{go}'[^>]*>([^<]*)</button>", html)
    assert button is not None, f"no {go!r} button in the card"
    assert button.group(1) == CARD_LABELS[go]
    assert card_buttons(html, errors=True)[go] == enabled, \
        f"the card's {CARD_LABELS[go]} is {'disabled' if enabled else 'enabled'}"
    return trigger(at, "nav", go)


def trigger(at, event: str, value):
    """Run with the viewer card's trigger ``event`` set to ``value``, as its script's
    ``setTriggerValue(event, value)`` sends it (beside the page's other widgets)."""
    (element,) = _card_elements(at)
    states = element.root.get_widget_states()
    fired = states.widgets.add()
    # The component's trigger aggregator (streamlit.components.v2: "<internal prefix>_<id>
    # __events"), a JSON list of {event, value}.
    fired.id = f"$$STREAMLIT_INTERNAL_KEY_{element.proto.id}__events"
    fired.json_trigger_value = json.dumps([{"event": event, "value": value}])
    return at._run(states)


def record_pictures(monkeypatch) -> dict[str, bytes]:
    """The pictures the viewer card sends to the browser in its data (the ``pictures``
    table), by address, over every run from now on (AppTest keeps only the last run's
    elements, and a picture is sent once per session)."""
    from pages.common import viewer_card

    sent: dict[str, bytes] = {}
    real = viewer_card._mount

    def recording(**kwargs):
        sent.update(_pictures((kwargs.get("data") or {}).get("pictures")))
        return real(**kwargs)
    monkeypatch.setattr(viewer_card, "_mount", recording)
    return sent


def card_picture(at, sent: dict[str, bytes], kind: str = "ov-view") -> bytes:
    """The bytes of the card's picture of class ``kind`` (``ov-view``: the view,
    ``ov-thumb``: the thumbnail) at the address its HTML names, as sent to the browser
    (``sent``: :func:`record_pictures`)."""
    import re

    address = re.search(rf"class='{kind}' data-pic='([^']+)'", card_html(at)).group(1)
    assert re.fullmatch(r"[0-9a-f]{24}", address), address
    assert address in sent, f"{address} was not sent to the browser"
    return sent[address]


SHIP_W, SHIP_H = 1200, 900


def rect(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def diamond(cx: float, cy: float, r: float) -> list[list[float]]:
    return [[cx, cy - r], [cx + r, cy], [cx, cy + r], [cx - r, cy]]


def write_ship_scene(root: Path, gt_hbb: list, gt_obb: list, pred_hbb: list, pred_obb: list
                     ) -> Dataset:
    """One ship query (``ref_1``) on a grey SHIP_W x SHIP_H image with these boxes (the box
    picker's OBB tests, AppTest and Chromium)."""
    (root / "images").mkdir(parents=True)
    grey = np.full((SHIP_H, SHIP_W, 3), 90, dtype=np.uint8)
    Image.fromarray(grey).save(root / "images" / "s.png")
    gt = {"annotations": [{"id": "1", "image_path": "images/s.png", "width": SHIP_W,
                           "height": SHIP_H,
                           "category_name": "ship", "segmentation": None, "bbox": gt_hbb,
                           "oriented_bbox": gt_obb}],
          "tasks": {"referring": [{"query_id": "ref_1", "ann_id": "1", "query": "ships"}]}}
    pred = {"tasks": {"referring": [{"query_id": "ref_1", "bbox": pred_hbb,
                                     "oriented_bbox": pred_obb}]}}
    (root / "predictions").mkdir()
    (root / "ground_truth.json").write_text(json.dumps(gt))
    (root / "predictions" / "model.json").write_text(json.dumps(pred))
    return Dataset(root, root / "ground_truth.json", root, root / "predictions" / "model.json",
                   root / "predictions" / "model.json")
