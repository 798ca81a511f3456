"""Fixtures of the browser tests: one Chromium per session, and a server (on a copy of notebooks/) per client.

Every test that takes ``lab_server`` runs twice, in JupyterLab (id ``lab``) and in Jupyter Notebook 7
(id ``notebook``). The tests are ordered client by client, so each server starts once and only one
runs at a time (pytest ends a session fixture before it sets it up with another parameter), and within
a client notebook by notebook, so the tests of one notebook share its run (``ran`` in
test_notebooks_ui.py). A test for one client only parametrizes the fixture itself:
``@pytest.mark.parametrize("lab_server", ["lab"], indirect=True)``, with its reason in a comment.

These tests are collected only when asked for (tests/conftest.py): `pytest tests/ui` (or a path inside it), or `-m ui`.
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


def _server_order(item: pytest.Item) -> tuple[int, str] | None:
    """(client index in lab.CLIENTS, notebook of its `ran` page or "") of a test; None without a server."""
    params = item.callspec.params if hasattr(item, "callspec") else {}
    if "lab_server" not in params:
        return None
    return list(lab.CLIENTS).index(params["lab_server"]), str(params.get("ran", ""))


def _other_client_lesson(item: pytest.Item) -> bool:
    """A test of a lesson in Notebook 7 that only JupyterLab runs (lab.in_every_client)."""
    params = item.callspec.params if hasattr(item, "callspec") else {}
    return params.get("lab_server") == "notebook" and "ran" in params and not lab.in_every_client(Path(params["ran"]))


@pytest.hookimpl(trylast=True)  # after pytest's own reordering, whose order it keeps within a group
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that take a server, client by client and within a client notebook by notebook: one
    server start per client and one run per notebook and client. (Pytest's own order alternates the
    clients, as it groups by notebook as much as by client.) Other tests keep their places. Notebook 7 runs the
    lessons of lab.EVERY_CLIENT (all of them with ATTN_UI_ALL=1); the others are deselected."""
    dropped = [item for item in items if _other_client_lesson(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not _other_client_lesson(item)]
    slots = [i for i, item in enumerate(items) if _server_order(item) is not None]
    ordered = sorted((items[i] for i in slots), key=_server_order)  # stable
    for i, item in zip(slots, ordered, strict=True):
        items[i] = item


@pytest.fixture(scope="session", params=list(lab.CLIENTS))
def lab_server(request, browser):
    """JupyterLab or Notebook 7 serving a temporary copy of notebooks/; always shut down, also when a
    test fails."""
    server = lab.LabServer(lab.NOTEBOOKS, client=request.param)
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
