"""Converters between OVEarth benchmark folders and the formats models and datasets use.

``python -m ovearth_core.convert`` (see ``__main__``) and the same functions here:

* :func:`from_coco` / :func:`to_coco` (and :func:`from_coco_export`, a to-coco export back)
* :func:`from_dota`: DOTA ``labelTxt`` and Task1 results
* :func:`from_voc`: Pascal VOC / DIOR / HRSC2016 XML and per-class results
* :func:`from_rsvg`: DIOR-RSVG XML and box predictions
* :func:`from_label_maps`: class-index PNGs (land cover)

Each validates its input as strictly as the evaluator's loader (one
:class:`~ovearth_core.errors.OVEarthInputError` listing every problem) and writes the
benchmark folder atomically (:mod:`.common`).
"""

from .coco import from_coco, from_coco_export, to_coco
from .dota import from_dota
from .label_maps import from_label_maps
from .rsvg import from_rsvg
from .voc import from_voc

__all__ = ["from_coco", "from_coco_export", "from_dota", "from_label_maps", "from_rsvg",
           "from_voc", "to_coco"]
