"""Fixtures of the browser tests: one Chromium and one JupyterLab (on a copy of notebooks/) per session.

These tests are collected only when asked for: `pytest tests/ui` (or a path inside it), or `-m ui`.
A plain `pytest` from the repository root skips collecting them, so it never needs a browser.
Without a browser they skip with the install hint; with CI=true (or ATTN_UI_REQUIRE=1) they fail instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # `import lab`, `import expected` from the tests and scripts alike

import lab  # noqa: E402


def _ui_requested(config: pytest.Config) -> bool:
    markexpr = (config.option.markexpr or "").replace(" ", "")
    if "ui" in markexpr and "notui" not in markexpr:
        return True
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.name.startswith("test_") and not _ui_requested(config):
        return True
    return None


def _no_browser(message: str):
    if os.environ.get("CI") == "true" or os.environ.get("ATTN_UI_REQUIRE") == "1":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    try:
        path = lab.find_chromium()
    except FileNotFoundError as err:  # CHROMIUM_PATH set but wrong
        _no_browser(f"{err}; {lab.INSTALL_HINT}")
    if path is None:
        _no_browser(lab.INSTALL_HINT)
    return path


@pytest.fixture(scope="session")
def browser(chromium_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _no_browser("playwright is not installed: `pip install -e '.[test]'`")
    with sync_playwright() as p:
        browser = lab.launch_browser(p, chromium_path)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def lab_server(browser):
    """JupyterLab serving a temporary copy of notebooks/; always shut down, also when a test fails."""
    server = lab.LabServer(lab.NOTEBOOKS)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def page(browser):
    page = lab.new_page(browser)
    try:
        yield page
    finally:
        page.context.close()
