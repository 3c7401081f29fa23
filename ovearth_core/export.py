"""``python -m ovearth_core.export geojson``: the documented entry point of
:mod:`ovearth_core.analysis.export` (analysis layer: a box's error type comes from the
object-level diagnosis).

This module is only a command; nothing imports it (the layer test allows it this one upward
import)."""

from ovearth_core.analysis.export import main

if __name__ == "__main__":
    raise SystemExit(main())
