"""An HTML export (`make html`) works offline, opened from disk, and keeps a prediction's answer closed.

One lesson with formulas and predictions is exported with the configuration `make html` uses
(jupyter-config/export_html.py: the template jupyter-config/nbconvert/templates/lab-offline), into a
temporary folder, and opened from disk (a file:// address) in headless Chromium:
- nothing is requested from another machine (nbconvert's default page loads require.js and MathJax from
  a public CDN, so offline its formulas stay raw TeX);
- the formulas are typeset by MathJax (its output elements are there) and no raw TeX is left in the prose;
- every output stored with outputs_hidden (a prediction's answer) is in a closed box, not visible on
  load, and a click shows it; the written answers (<details>) are closed too;
- `make html` runs nbconvert with that configuration;
- accessibility: every lesson exported so, axe-core (WCAG 2.1 A and AA) finds nothing on its page (all of it
  is ours: the template, its colours, the prose, every figure's text alternative).

Run: `pytest tests/ui/test_export_ui.py` (needs Chromium, see conftest.py).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import lab
import pytest

pytestmark = pytest.mark.ui

NOTEBOOK = lab.NOTEBOOKS / "01-attention-without-weights.ipynb"  # many formulas, seven predictions
CONFIG = lab.REPO / "jupyter-config" / "export_html.py"
EXPORT_ARGS = ["--config", str(CONFIG), "--to", "html"]  # what `make html` passes (checked below)

_JS_STATE = """() => {
  const prose = [...document.querySelectorAll('.jp-RenderedMarkdown')].map(cell => {
    const copy = cell.cloneNode(true);
    copy.querySelectorAll('code, pre, mjx-container').forEach(e => e.remove());
    return copy.textContent;
  });
  return {
    formulas: document.querySelectorAll('mjx-container svg').length,
    rawTeX: prose.flatMap(t => t.match(/\\$[^$]+\\$|\\\\(frac|sqrt|mathrm|sum|top|cdot|text)\\b/g) || []),
    answers: [...document.querySelectorAll('details.attn-hidden-output')].map(d => ({
      open: d.open,
      outputs: d.querySelectorAll('.jp-OutputArea-output').length,
      visible: [...d.querySelectorAll('.jp-OutputArea-output')].filter(o => o.checkVisibility()).length,
    })),
    openWritten: [...document.querySelectorAll('.jp-RenderedMarkdown details')].filter(d => d.open).length,
  };
}"""


def _hidden_answers() -> list[int]:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return [i for i, c in enumerate(cells) if c["metadata"].get("jupyter", {}).get("outputs_hidden") and c["outputs"]]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """NOTEBOOK exported as `make html` does it, into a temporary folder; the path of the page."""
    out = tmp_path_factory.mktemp("html")
    run = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", *EXPORT_ARGS, "--output-dir", str(out), str(NOTEBOOK)],
        cwd=lab.REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    page = out / f"{NOTEBOOK.stem}.html"
    assert run.returncode == 0 and page.is_file(), f"nbconvert failed:\n{run.stderr[-3000:]}"
    return page


@pytest.fixture(scope="module")
def opened(browser, exported):
    """The exported page opened from disk, MathJax done (if the page has MathJax 3: the tests say if not)."""
    page = lab.new_page(browser)
    try:
        page.goto(exported.as_uri(), wait_until="load")
        page.evaluate("() => window.MathJax?.startup?.promise ? MathJax.startup.promise.then(() => true) : false")
        yield page
    finally:
        page.context.close()


def test_the_page_shows_its_formulas_typeset(opened):
    state = opened.evaluate(_JS_STATE)
    assert state["formulas"] > 0, f"{NOTEBOOK.name} exported: no formula typeset by MathJax"
    assert not state["rawTeX"], f"{NOTEBOOK.name} exported: raw TeX left in the prose: {state['rawTeX'][:10]}"


def test_answers_are_closed_on_load_and_open_on_a_click(opened):
    hidden = _hidden_answers()
    assert hidden, f"{NOTEBOOK.name} has no answer stored with outputs_hidden"
    state = opened.evaluate(_JS_STATE)
    boxes = state["answers"]
    assert len(boxes) == len(hidden), (
        f"{NOTEBOOK.name} exported: {len(hidden)} answers stored hidden (cells {hidden}), {len(boxes)} closed boxes"
    )
    shown = [b for b in boxes if b["open"] or b["visible"] or not b["outputs"]]
    assert not shown, f"{NOTEBOOK.name} exported: answers open, visible or empty on load: {shown}"
    assert state["openWritten"] == 0, f"{NOTEBOOK.name} exported: {state['openWritten']} written answers open on load"
    summary = opened.locator("details.attn-hidden-output > summary").first
    summary.scroll_into_view_if_needed()
    summary.click()
    first = opened.evaluate(_JS_STATE)["answers"][0]
    assert first["open"] and first["visible"] == first["outputs"], f"a click did not show the answer: {first}"
    summary.click()


LESSONS = [p for p in lab.notebook_paths() if "solutions" not in p.relative_to(lab.NOTEBOOKS).parts]


@pytest.fixture(scope="module")
def exported_lessons(tmp_path_factory) -> dict:
    """Every lesson exported as `make html` does it (one nbconvert run), into a temporary folder; name -> page."""
    out = tmp_path_factory.mktemp("lessons")
    run = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", *EXPORT_ARGS, "--output-dir", str(out), *map(str, LESSONS)],
        cwd=lab.REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, f"nbconvert failed:\n{run.stderr[-3000:]}"
    return {p.name: out / f"{p.stem}.html" for p in LESSONS}


@pytest.mark.parametrize("lesson", [p.name for p in LESSONS])
def test_axe_finds_nothing_on_an_exported_page(browser, exported_lessons, lesson):
    """WCAG 2.1 A and AA, by axe-core: contrast of code, prompts and links; every figure described; structure."""
    page = lab.new_page(browser)
    try:
        page.goto(exported_lessons[lesson].as_uri(), wait_until="load")
        page.evaluate("() => window.MathJax?.startup?.promise ? MathJax.startup.promise.then(() => true) : false")
        found = lab.axe(page)
        # axe accepts any alt; nbconvert writes a placeholder where the output had none
        undescribed = page.evaluate("() => [...document.images].filter(i => !i.alt || /^No description has been "
                                    "provided/.test(i.alt)).map(i => i.closest('.jp-Cell')?.id ?? '?')")
    finally:
        page.context.close()
    assert not found, f"{lesson} exported, axe-core: {lab.axe_counts(found)}\n" + lab.axe_report(found)
    assert not undescribed, (f"{lesson} exported: figures without a text alternative in cells {undescribed} (is "
                             "describe_figures() called in the first cell, and the notebook executed since?)")


# Defined last, so that it sees every request the page made, clicks included.
def test_nothing_is_loaded_from_outside_this_machine(opened):
    outside = lab.outside_requests(opened)
    assert not outside, (
        f"{NOTEBOOK.name} exported and opened from disk requested {len(outside)} URLs from other machines "
        f"(offline they fail): {sorted(set(outside))}"
    )


def test_make_html_exports_with_this_configuration():
    make = shutil.which("make")
    if make is None:
        pytest.skip("no `make` on PATH")
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    run = subprocess.run([make, "-n", "html"], cwd=lab.REPO, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"make -n html failed:\n{run.stderr}"
    lines = [shlex.split(line) for line in run.stdout.replace("\\\n", " ").splitlines() if "nbconvert" in line]
    assert lines, f"make -n html runs no nbconvert:\n{run.stdout}"
    argv = lines[-1]
    args = [a if a != str(CONFIG.relative_to(lab.REPO)) else str(CONFIG) for a in argv]
    pairs = list(zip(EXPORT_ARGS[::2], EXPORT_ARGS[1::2], strict=True))
    missing = [p for p in pairs if not any(args[i : i + 2] == list(p) for i in range(len(args) - 1))]
    assert not missing, f"`make html` runs {argv}\nwithout {missing}"
