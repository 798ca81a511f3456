"""One list of explorers: ``helpers.explorers.REGISTRY``. Everything kept per kind elsewhere agrees with it.

A registered explorer must have its browser expectation (``tests/ui/expected.py``'s ``KINDS``, filled from
``tests/ui/expectations/nbNN.py`` of its lesson), be importable from ``helpers.explorers`` by its class name
and its function-style alias, and be called in its lesson's notebook; the per-kind settings of the browser
tools (screenshots' ``SHOW_STATE``, ``lab.RESHAPING_KINDS``) name registered kinds only (the kernel benchmark
checks its ``VARIANTS`` itself: importing it here would set MPLBACKEND for the notebooks' kernels).

Lessons are found, not listed: every module ``nbNN`` of ``helpers.explorers``, ``helpers.checks``,
``helpers.figures`` and ``tests/ui/expectations`` is found on disk (``helpers.lesson_modules``), a new one
too, and every name a notebook imports from them resolves.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest

import helpers.explorers as X
from helpers import checks, figures, lesson_modules
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
        f"{module.__name__}.__all__ needs {entry.cls.__name__} and one function-style alias of it, got "
        f"{module.__all__}")
    for name in (entry.cls.__name__, aliases[0]):
        assert name in X.__all__ and getattr(X, name) is entry.cls


@pytest.mark.parametrize("kind", KINDS)
def test_a_registered_explorer_is_shown_in_its_lessons_notebook(kind):
    notebook = lab.lesson_notebooks()[kind]
    cells = json.loads(notebook.read_text())["cells"]
    source = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    entry = X.REGISTRY[kind]
    names = [n for n in sys.modules[entry.cls.__module__].__all__ if getattr(X, n, None) is entry.cls]
    assert any(f"{n}(" in source for n in names), f"{notebook.name} calls none of {names}"


LESSON_PACKAGES = ["helpers.explorers", "helpers.checks", "helpers.figures"]


@pytest.mark.parametrize("package", LESSON_PACKAGES)
def test_every_lesson_module_on_disk_is_found(package):
    on_disk = sorted(p.stem for p in (ROOT / package.replace(".", "/")).glob("nb[0-9][0-9].py"))
    found = [m.__name__.rpartition(".")[2] for m in lesson_modules(package)]
    assert on_disk and found == on_disk, f"{package}: on disk {on_disk}, found {found}"


def test_the_explorers_package_imports_every_lesson_module_and_the_checks_and_figures_find_theirs():
    assert list(X.LESSONS) == list(lesson_modules("helpers.explorers"))
    assert [m.__name__ for m in checks.lessons()] == [m.__name__ for m in lesson_modules("helpers.checks")]
    assert [m.__name__ for m in figures.lessons()] == [m.__name__ for m in lesson_modules("helpers.figures")]


def test_every_browser_expectation_lives_in_its_explorers_lesson_module():
    on_disk = sorted(p.stem for p in (ROOT / "tests" / "ui" / "expectations").glob("nb*.py"))
    assert on_disk == sorted({f"nb{X.REGISTRY[k].lesson}" for k in KINDS}), on_disk
    for kind in KINDS:
        assert expected.KINDS[kind].__module__ == f"expectations.nb{X.REGISTRY[kind].lesson}", kind


NB99 = """
from helpers.explorer import Explorer
from helpers.explorers.common import register

__all__ = ["Nb99Explorer", "nb99_explorer"]


@register(demo=lambda: None)
class Nb99Explorer(Explorer):
    kind = "nb99-test"


nb99_explorer = Nb99Explorer
"""


def test_a_new_lesson_module_is_found_without_editing_any_list(tmp_path, monkeypatch):
    """A lesson 99 put beside the others: its explorer is registered and exported, its checks and figures found."""
    for package in LESSON_PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "nb99.py").write_text(NB99 if package == "helpers.explorers" else '"""lesson 99"""\n')
        (tmp_path / package / "notes.py").write_text("raise AssertionError('not a lesson module: never imported')\n")
        monkeypatch.setattr(sys.modules[package], "__path__", [*sys.modules[package].__path__, str(tmp_path / package)])
    # helpers.explorers imported afresh (its lesson modules are imported already, but nb99)
    spec = importlib.util.spec_from_file_location("helpers.explorers", X.__file__,
                                                  submodule_search_locations=X.__path__)
    fresh = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "helpers.explorers", fresh)
    try:
        spec.loader.exec_module(fresh)
        assert X.REGISTRY["nb99-test"].lesson == "99" and fresh.nb99_explorer is fresh.Nb99Explorer
        assert fresh.LESSONS[-1].__name__ == "helpers.explorers.nb99" and "nb99_explorer" in fresh.__all__
        assert fresh.LESSONS[:-1] == X.LESSONS
        assert checks.lessons()[-1].__name__ == "helpers.checks.nb99"
        assert figures.lessons()[-1].__name__ == "helpers.figures.nb99"
    finally:
        X.REGISTRY.pop("nb99-test", None)
        for package in LESSON_PACKAGES:
            sys.modules.pop(f"{package}.nb99", None)
    monkeypatch.undo()
    assert "nb99-test" not in X.REGISTRY and all(m.__name__[-4:] != "nb99" for m in checks.lessons())


def _imports(notebook: Path, package: str) -> list[tuple[str, str]]:
    """(module, name) of every ``from <package>[.nbNN] import name`` in the notebook's code cells."""
    cells = json.loads(notebook.read_text())["cells"]
    source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    return [(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module and node.module.split(".")[:2] == package.split(".") for alias in node.names]


NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")) + sorted(
    (ROOT / "notebooks" / "solutions").glob("[0-9][0-9]-*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT / "notebooks").as_posix())
def test_every_name_a_notebook_imports_from_the_lesson_packages_is_found(notebook):
    """Each name resolves, and an explorer a lesson imports lives in a lesson module that the package found."""
    found = {m.__name__ for package in LESSON_PACKAGES for m in lesson_modules(package)}
    for package in LESSON_PACKAGES:
        for module, name in _imports(notebook, package):
            assert module == package or module in found, f"{notebook.name}: {module} is not a lesson module found"
            assert hasattr(importlib.import_module(module), name), f"{notebook.name}: {module} has no {name}"
            obj = getattr(importlib.import_module(module), name)
            if isinstance(obj, type) and issubclass(obj, Explorer):
                assert obj.__module__ in found, f"{notebook.name}: {name} lives in {obj.__module__}, not found"


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


def test_an_explorers_views_are_its_live_heatmaps_read_only():
    ex = X.REGISTRY["qkv"].demo()
    views = ex.views
    assert isinstance(views, tuple) and len(views) == 2 and all(type(v).__name__ == "HeatmapView" for v in views)
    shown, stack = [], [ex.widget]
    while stack:  # the widget tree on the page, in page order (depth first)
        w = stack.pop(0)
        shown.append(w)
        stack[:0] = getattr(w, "children", ())
    assert [w for w in shown if w in views] == list(views)  # each on the page, once, in page order
    with pytest.raises(AttributeError):
        ex.views = ()
