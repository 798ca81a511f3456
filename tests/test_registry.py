"""One list of explorers: ``helpers.explorers.REGISTRY``. Everything kept per kind elsewhere agrees with it.

A registered explorer must have its browser expectation (``tests/ui/expected.py``'s ``KINDS``), be
importable from ``helpers.explorers`` by its class name and its function-style alias, and be called in
its lesson's notebook; the per-kind settings of the browser tools (screenshots' ``SHOW_STATE``,
``lab.RESHAPING_KINDS``) name registered kinds only (the kernel benchmark checks its ``VARIANTS`` itself:
importing it here would set MPLBACKEND for the notebooks' kernels).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import helpers.explorers as X
from helpers.explorer import Explorer
from helpers.explorers.common import register

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ui"))
import expected  # noqa: E402
import lab  # noqa: E402
import screenshots  # noqa: E402

KINDS = list(X.REGISTRY)


def test_every_registered_explorer_has_its_browser_expectation_and_no_expectation_is_stale():
    missing = [k for k in KINDS if k not in expected.KINDS]
    assert not missing, f"no browser expectation for {missing}: add a function to tests/ui/expected.py's KINDS"
    stale = sorted(set(expected.KINDS) - set(KINDS))
    assert not stale, f"tests/ui/expected.py's KINDS names kinds no explorer registers: {stale}"


@pytest.mark.parametrize(("where", "kinds"), [("tests/ui/screenshots.py SHOW_STATE", screenshots.SHOW_STATE),
                                              ("tests/ui/lab.py RESHAPING_KINDS", lab.RESHAPING_KINDS)])
def test_per_kind_settings_of_the_tools_name_registered_kinds_only(where, kinds):
    assert set(kinds) <= set(KINDS), f"{where} names kinds no explorer registers: {sorted(set(kinds) - set(KINDS))}"


@pytest.mark.parametrize("kind", KINDS)
def test_a_registered_explorer_is_exported_by_its_names_and_lives_in_its_lessons_module(kind):
    entry = X.REGISTRY[kind]
    assert entry.cls.kind == kind and issubclass(entry.cls, Explorer)
    module = sys.modules[entry.cls.__module__]
    assert module in X.LESSONS and module.__name__ == f"helpers.explorers.nb{entry.lesson}"
    aliases = [n for n in module.__all__ if n.islower() and getattr(module, n) is entry.cls]
    assert entry.cls.__name__ in module.__all__ and len(aliases) == 1, (
        f"{module.__name__}.__all__ needs {entry.cls.__name__} and one function-style alias of it, got {module.__all__}")
    for name in (entry.cls.__name__, aliases[0]):
        assert name in X.__all__ and getattr(X, name) is entry.cls


@pytest.mark.parametrize("kind", KINDS)
def test_a_registered_explorer_is_shown_in_its_lessons_notebook(kind):
    notebook = lab.lesson_notebooks()[kind]
    source = "".join("".join(c["source"]) for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code")
    entry = X.REGISTRY[kind]
    names = [n for n in sys.modules[entry.cls.__module__].__all__ if getattr(X, n, None) is entry.cls]
    assert any(f"{n}(" in source for n in names), f"{notebook.name} calls none of {names}"


def test_every_lesson_module_is_imported_by_the_package():
    on_disk = sorted(p.stem for p in (ROOT / "helpers" / "explorers").glob("nb*.py"))
    assert on_disk == [m.__name__.rpartition(".")[2] for m in X.LESSONS], (
        "a lesson module of helpers/explorers/ that the package does not import registers nothing: "
        "add it to helpers/explorers/__init__.py")


def test_register_refuses_a_class_outside_a_lesson_module_a_taken_kind_and_no_demo():
    class Stray(Explorer):
        kind = "stray"

    with pytest.raises(ValueError, match="register explorers in a lesson module"):
        register(demo=Stray)(Stray)
    Twin = type("Twin", (Explorer,), {"kind": "qkv", "__module__": "helpers.explorers.nb99"})
    with pytest.raises(ValueError, match="kind 'qkv' of Twin is taken by QKVExplorer"):
        register(demo=Twin)(Twin)
    Lone = type("Lone", (Explorer,), {"kind": "lone", "__module__": "helpers.explorers.nb99"})
    with pytest.raises(TypeError, match="demo of Lone must be a function"):
        register(demo=None)(Lone)
    assert "stray" not in X.REGISTRY and "lone" not in X.REGISTRY and X.REGISTRY["qkv"].cls is X.QKVExplorer
