"""A third-party module imported on first use (issue 28): ``import`` costs nothing until then.

pycocotools and shapely take 20-60 ms to import; a command's ``--help`` or ``import
ovearth_core.analysis.ap`` should not pay for them. The one importing module keeps its name
for the library (``cocomask.area(...)``, ``shapely.polygons(...)``), bound to a stand-in that
imports the module on its first attribute access and then rebinds the name to the real
module, so later calls cost nothing extra. The first use goes through
``importlib.import_module``, which holds the module's import lock: threads that need it at
the same moment (the app's server, its decoder pool) wait for the one importing it.

Why not ``lazy_loader.load`` (the scientific-Python convention, tried in issue 47 with
lazy-loader 0.6 against ``tests/core/test_lazy_imports.py``): on the project's Python 3.11
its stand-in is ``importlib.util.LazyLoader``'s module, whose class is switched to a plain
module *before* the module's body has run, so a second thread using it meanwhile finds no
attributes (CPython issue 114763, fixed in 3.12's and 3.13's importlib, not in 3.11's;
lazy-loader's issue 88): eight threads using masks and oriented boxes at once, six
``AttributeError``s. And for a submodule (``pycocotools.mask``) it imports the parent
package at once and never binds the submodule on it, so ``import pycocotools.mask;
pycocotools.mask.encode`` fails afterwards anywhere in the process (tidecv imports it so).
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
