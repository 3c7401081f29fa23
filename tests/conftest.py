"""Settings for every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ovearth_core.paths import ENV_VAR


@pytest.fixture(scope="session", autouse=True)
def _tmp_is_a_data_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests point the app at data under pytest's temporary folder; the app reads typed
    paths only inside its data roots (ovearth_core.paths)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV_VAR, str(tmp_path_factory.getbasetemp()))
        yield
