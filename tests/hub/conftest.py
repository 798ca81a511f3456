"""Fixtures of the hub tests: one class hub for the module (on a course repository of its own), a browser.

These tests are collected only when asked for (tests/conftest.py): `pytest tests/hub` (or a path inside
it), or `-m hub`, as `make test-hub` does. Without root or without make test-hub's installs they skip with the
reason; with CI=true they fail instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# hubctl (and tests/ui/lab.py through it) is imported inside the fixtures: a plain `pytest` on Windows, which
# loads this file without collecting these tests, needs neither pwd nor grp.


def _cannot(message: str):
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def hub():
    """A running class hub; stopped, its students' accounts and its folders removed at the end."""
    import hubctl

    why = hubctl.missing()
    if why:
        _cannot(why)
    hub = hubctl.Hub()
    try:
        # an account with no rights (nobody) watches every command line and environment it can read while the
        # hub starts as docs/hub.md says, the class password typed at its prompt (test_hub.py checks what it saw)
        watcher = hubctl.as_student_in_background("nobody", str(hubctl.REPO / "tests" / "hub" / "peek.py"), "--watch",
                                                  stdin=hubctl.CLASS_PASSWORD + "\n\n")  # fmt: skip
        try:
            hub.start()
        finally:
            hub.seen_while_starting = hubctl.finish(watcher)
        yield hub
    finally:
        hub.remove()


@pytest.fixture(scope="module")
def browser():
    import hubctl  # noqa: F401 - puts tests/ui on sys.path
    import lab

    path = lab.find_chromium()
    if path is None:
        _cannot(lab.INSTALL_HINT)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = lab.launch_browser(p, path)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser):
    import lab

    page = lab.new_page(browser)
    try:
        yield page
    finally:
        page.context.close()
