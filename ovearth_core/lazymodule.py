"""A third-party module imported on first use (issue 28): ``import`` costs nothing until then.

pycocotools and shapely take 20-60 ms to import; a command's ``--help`` or ``import
ovearth_core.analysis.ap`` should not pay for them. The one importing module keeps its name
for the library (``cocomask.area(...)``, ``shapely.polygons(...)``), bound to a stand-in that
imports the module on its first attribute access and then rebinds the name to the real
module, so later calls cost nothing extra.
"""

from __future__ import annotations

import importlib
from typing import Any

_OWN = frozenset({"_name", "_namespace", "_alias"})


class LazyModule:
    """Stand-in for module ``name``, bound to ``alias`` in the ``namespace`` (a module's
    ``globals()``) that uses it."""

    def __init__(self, name: str, namespace: dict[str, Any], alias: str):
        self._name = name
        self._namespace = namespace
        self._alias = alias

    def __getattr__(self, attr: str) -> Any:
        if attr in _OWN:  # before __init__ (copy, pickle): not the module's attribute
            raise AttributeError(attr)
        module = importlib.import_module(self._name)
        self._namespace[self._alias] = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"
