"""Test folders collected only when asked for: tests/ui (browser tests, need Chromium) and tests/hub (a real
JupyterHub, as root). Each is collected for a path inside it (`pytest tests/ui`) or its marker (`-m ui`,
`-m hub`, as `make test-ui` and `make test-hub` do); a plain `pytest` from the repository root skips them."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
OPT_IN = ("ui", "hub")  # folder under tests/ == its marker


def _requested(config: pytest.Config, name: str) -> bool:
    markexpr = (config.option.markexpr or "").replace(" ", "")
    if name in markexpr and f"not{name}" not in markexpr:
        return True
    folder = HERE / name
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if path == folder or folder in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    for name in OPT_IN:
        if (HERE / name) in collection_path.parents and collection_path.name.startswith("test_"):
            return True if not _requested(config, name) else None
    return None
