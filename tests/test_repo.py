"""Checks of the repository itself: packaging in step, README links, notebook hygiene."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _requirement(spec: str) -> tuple[str, str]:
    """'jupyterlab_widgets>=3.0' -> ('jupyterlab-widgets', '>=3.0')."""
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*", spec)
    assert m, f"cannot parse requirement {spec!r}"
    return m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")


def _pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        specs += extra
    return dict(_requirement(s) for s in specs)


def _conda_requirements() -> dict[str, str]:
    reqs: dict[str, str] = {}
    in_deps = False
    for line in (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines():
        if line.startswith("dependencies:"):
            in_deps = True
            continue
        m = re.match(r"^  - ([^\s#:]+)\s*$", line) or re.match(r"^      - ([A-Za-z][^\s#]*)\s*$",
                                                               line) if in_deps else None
        if m:
            name, bound = _requirement(m.group(1))
            if name not in {"python", "pip"}:
                reqs[name] = bound
    return reqs


def test_environment_yml_and_pyproject_name_the_same_packages_and_bounds():
    assert _conda_requirements() == _pyproject_requirements()


def test_environment_yml_installs_the_package_itself_editable():
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s+- --editable \.\s*$", text, re.M), "environment.yml must pip-install the project with -e ."


def test_no_exact_pins():
    for name, bound in {**_pyproject_requirements(), **_conda_requirements()}.items():
        assert "==" not in bound, f"{name} is pinned ({bound}); use a lower bound"
        assert bound.startswith(">="), f"{name} has no lower bound ({bound!r})"


def test_notebook_file_names_follow_NN_kebab_title():
    assert NOTEBOOKS, "no notebooks found"
    for nb in NOTEBOOKS:
        assert re.fullmatch(r"\d\d-[a-z0-9]+(-[a-z0-9]+)*\.ipynb", nb.name), nb.name


def _readme_links() -> list[str]:
    return re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)


def test_readme_links_every_notebook_and_every_link_exists():
    links = [link for link in _readme_links() if not re.match(r"[a-z]+://", link)]
    for link in links:
        assert (ROOT / link).exists(), f"README links {link}, which does not exist"
    linked = {(ROOT / link).resolve() for link in links}
    for nb in NOTEBOOKS:
        if "solutions" not in nb.parts:
            assert nb.resolve() in linked, f"README's table does not link {nb.relative_to(ROOT)}"


def _image_references() -> list[tuple[str, str]]:
    refs = [("README.md", link) for link in _readme_links() if link.startswith("images/")]
    for nb in NOTEBOOKS:
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                for link in re.findall(r"(?:\]\(|src=\")([^)\"]*images/[^)\"]+)", "".join(cell["source"])):
                    refs.append((str(nb.relative_to(ROOT)), str((nb.parent / link).resolve().relative_to(ROOT))))
    return refs


def test_every_image_the_readme_and_notebooks_show_exists():
    for where, path in _image_references():
        assert (ROOT / path).is_file(), f"{where} shows {path}, which does not exist (run `make images`)"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_is_committed_executed_in_order_and_clean(nb: Path):
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), f"run it top to bottom in a fresh kernel: counts {counts}"
    for c in code:
        for out in c.get("outputs", []):
            assert out["output_type"] != "error", f"stored error output: {out.get('ename')}"
    assert "nbval-ignore-output" in code[0].get("metadata", {}).get("tags", []), (
        "the first code cell prints versions: tag it nbval-ignore-output (make notebooks turns a first line "
        "'# NBVAL_IGNORE_OUTPUT' into that tag)")
    first = "".join(code[0]["source"])
    assert "ModuleNotFoundError" in first and "pip install -e ." in first, (
        "the first code cell says what to do when the kernel cannot import helpers")
    for c in code:
        assert "# NBVAL_IGNORE_OUTPUT" not in "".join(c["source"]), (
            "a comment marker a reader would see: run make notebooks")
    assert nb.stat().st_size < 2_000_000, f"{nb.name} is {nb.stat().st_size / 1e6:.1f} MB"
