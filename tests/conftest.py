"""What the tests share: fixtures, and which test folders are collected.

Test folders collected only when asked for: tests/ui (browser tests, need Chromium) and tests/hub (a real
JupyterHub, as root). Each is collected for a path inside it (`pytest tests/ui`) or its marker (`-m ui`,
`-m hub`, as `make test-ui` and `make test-hub` do); a plain `pytest` from the repository root skips them.

Fixtures used by several test modules live here (``strict_fp``). Plain helper functions are imported from
modules beside this file, not from a conftest (tests/ui and tests/hub have their own conftest.py, and pytest
keeps only one module of that name importable): ``support`` (``rx``), ``check_table`` (the exercise checks'
table-driven tests), ``html_cells`` (what an explorer's live tables print).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
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


@pytest.fixture
def strict_fp():
    """Every warning is an error, under numpy's default error handling (underflow is silent)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"):
            yield
