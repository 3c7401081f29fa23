"""Query language: open-vocabulary phrases, hard negatives, referring and reasoning queries.

Referring expressions name the category and locate it with a relation computed from the
layout (corner, part of the image, edge, or direction from another annotated object), so they
are true of the generated image. Reasoning queries describe the target's function.
"""

from __future__ import annotations

import numpy as np

from .layout import AnnotationLayout, ImageLayout
from .taxonomy import CATEGORIES, SCENERY, Category

_COUNT_WORDS = ("", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve")


def plural(noun: str) -> str:
    """English plural of a (possibly multi-word) noun phrase: pluralises the last word."""
    head, _, last = noun.rpartition(" ")
    if last.endswith(("s", "x", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}".strip()


def centroid(ann: AnnotationLayout) -> tuple[float, float]:
    """Mean of the part centroids (vertex means), in pixels."""
    pts = np.array([p.mean(axis=0) for p in ann.parts])
    return float(pts[:, 0].mean()), float(pts[:, 1].mean())


def _part(u: float, v: float) -> str:
    ns = "north" if v < 1 / 3 else "south" if v > 2 / 3 else ""
    ew = "west" if u < 1 / 3 else "east" if u > 2 / 3 else ""
    if ns and ew:
        return f"{ns}-{ew}ern"
    return f"{ns or ew}ern" if ns or ew else "central"


def _corner(u: float, v: float) -> str:
    return f"{'north' if v < 0.5 else 'south'}-{'west' if u < 0.5 else 'east'}"


def _edge(u: float, v: float) -> str:
    d = {"western": u, "eastern": 1 - u, "northern": v, "southern": 1 - v}
    return min(d, key=lambda k: (d[k], k))


def _direction(dx: float, dy: float) -> str:
    if abs(dx) >= abs(dy):
        return "east of" if dx > 0 else "west of"
    return "south of" if dy > 0 else "north of"


def open_vocab_positives(rng: np.random.Generator, cat: Category, n: int) -> list[str]:
    """``n`` distinct positive phrases (the name or its synonyms, 1-3 words)."""
    pool = [cat.name, *cat.synonyms]
    return [pool[i] for i in rng.choice(len(pool), n, replace=False)]


def open_vocab_negatives(rng: np.random.Generator, cat: Category, present: set[str],
                         n: int) -> list[str]:
    """``n`` hard-negative phrases naming categories absent from the image.

    Candidates exclude every category in the image, scenery-like categories and area types;
    two thirds are drawn from the target's own taxonomy group (the confusable ones).
    """
    absent = [c for c in CATEGORIES
              if c.name not in present and c.name not in SCENERY and not c.is_area]
    same = [c for c in absent if c.group == cat.group]
    chosen: list[Category] = []
    while len(chosen) < n:
        pool = same if same and rng.random() < 0.67 else absent
        c = pool[int(rng.integers(len(pool)))]
        if c not in chosen:
            chosen.append(c)
    return [[c.name, *c.synonyms][int(rng.integers(0, 3))] if rng.random() < 0.4 else c.name
            for c in chosen]


def referring(rng: np.random.Generator, ann: AnnotationLayout, image: ImageLayout,
              n: int) -> list[str]:
    """``n`` distinct referring expressions (about 9 words) true of the layout."""
    cat = ann.plan.category
    w, h = image.plan.width, image.plan.height
    x, y = centroid(ann)
    u, v = x / w, y / h
    part, corner, edge = _part(u, v), _corner(u, v), _edge(u, v)
    name = cat.name
    k = len(ann.parts)
    others = [o for o in image.annotations if o is not ann]
    if cat.is_area:
        options = [f"the {name} stretching across the {part} part of the image",
                   f"the {name} that lies closest to the {edge} edge of the scene",
                   f"the area of {name} in the {part} part of this image"]
        if ann.centreline is not None:
            a, b = ann.centreline[0], ann.centreline[-1]
            e1, e2 = _edge(a[0] / w, a[1] / h), _edge(b[0] / w, b[1] / h)
            if e1 != e2:
                options[2] = f"the {name} running from the {e1} to the {e2} edge"
    elif k == 1:
        options = [f"the {name} nearest the {corner} corner of the image",
                   f"the {name} located in the {part} part of the scene",
                   f"the {name} closest to the {edge} edge of the image"]
        if part == "central":
            options[1] = f"the {name} near the centre of the scene"
    else:
        count = _COUNT_WORDS[k] if k < len(_COUNT_WORDS) else "many"
        options = [f"the {count} {plural(name)} grouped in the {part} part of the image",
                   f"all of the {plural(name)} clustered near the {corner} corner",
                   f"every {name} spread along the {edge} side of the image"]
    if others:
        o = others[int(rng.integers(len(others)))]
        ox, oy = centroid(o)
        rel = _direction(x - ox, y - oy)
        subject = f"the {name}" if k == 1 else f"all the {plural(name)}"
        options.append(f"{subject} lying {rel} the {o.plan.category.name} in this image")
    return [options[i] for i in rng.choice(len(options), n, replace=False)]


def reasoning(rng: np.random.Generator, cat: Category, many: bool, n: int) -> list[str]:
    """``n`` distinct function-based queries (about 12 words) that avoid the category name."""
    kind, func = cat.kind, cat.function
    options = [f"every {kind} that {func}", f"any {kind} in this scene that {func}",
               f"each {kind} visible here that {func}"] if many else [
        f"the {kind} that {func}", f"find the {kind} in this image that {func}",
        f"which {kind} here {func}"]
    return [options[i] for i in rng.choice(len(options), n, replace=False)]
