"""What runs without the optional extra `torch` (PyTorch and transformers; `make torch` installs them).

Notebook 16 and its worked solutions need it, and so does tests/test_bridge.py (which skips itself with
``pytest.importorskip``). Without the extra, `make test` still collects the two notebooks and skips every
cell with the reason below, printed once more at the end of the run, and `make test-ui` skips its browser runs
of notebook 16; with it, they run like any notebook (`make test-torch` runs the notebook, its solutions and the
bridge's tests). Nothing is imported to decide: a package that
cannot be found is missing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
NEEDS_TORCH = ("notebooks/16-*.ipynb", "notebooks/solutions/16-*.ipynb")  # relative to the repository


def missing_extra() -> list[str]:
    """The packages of the `torch` extra that this Python cannot find (empty when it is installed)."""
    return [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]


def skip_reason() -> str:
    """Why notebook 16 and the bridge's tests are skipped, and what to run instead."""
    return (f"{' and '.join(missing_extra())} not installed: notebook 16, its solutions and the tests that run "
            "them or helpers.bridge need the optional extra (run `make torch`, then `make test-torch`)")


def _needs_torch(path: Path) -> bool:
    try:
        relative = path.resolve().relative_to(ROOT)
    except ValueError:  # a path outside the repository
        return False
    return any(relative.match(pattern) for pattern in NEEDS_TORCH)


def _runs_in_a_browser(item: pytest.Item) -> bool:
    """A browser test (tests/ui) parametrized with notebook 16: it runs the notebook in a kernel of this Python."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return (ROOT / "tests" / "ui") in item.path.parents and any(
        isinstance(value, Path) and _needs_torch(value) for value in params.values())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the extra, every cell of notebook 16 and of its solutions is skipped, with the reason, and so is
    every browser test that runs notebook 16 (`make test-ui`)."""
    if not missing_extra():
        return
    skip = pytest.mark.skip(reason=skip_reason())
    for item in items:
        if _needs_torch(item.path) or _runs_in_a_browser(item):
            item.add_marker(skip)


_COUNT = {"skipped": 0}  # this process's count (with xdist: the controller's, which gets every worker's reports)


def _count(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and isinstance(report.longrepr, tuple) and "`make torch`" in str(report.longrepr[2]):
        _COUNT["skipped"] += 1


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """A notebook cell skipped for want of the extra (its reason names `make torch`)."""
    _count(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A test module that skipped itself for want of the extra (tests/test_bridge.py's importorskip)."""
    _count(report)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line that says why, under the summary, whenever something was skipped for want of the extra."""
    if _COUNT["skipped"]:
        terminalreporter.write_line(f"{_COUNT['skipped']} skipped because {skip_reason()}")
