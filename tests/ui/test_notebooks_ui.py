"""Every notebook runs clean in a real JupyterLab, and every explorer answers a slider move correctly.

For each notebook under notebooks/ (solutions included, found by glob), in headless Chromium:
Edit > Clear Outputs of All Cells, Run > Run All Cells, wait for the kernel, then
- no error output, every widget rendered as a widget (not as text), every heatmap image loaded;
- for each `.attn-explorer`: press an arrow key on a slider handle; the heatmap image changes and the
  readout's visible 4-decimal numbers change and equal what helpers.attention computes for the state the
  readout reports (its data-state JSON);
- File > Save Notebook writes only the served temporary copy, never the committed notebook.

Run: `pytest tests/ui` (needs Chromium, see conftest.py).
"""

from __future__ import annotations

import hashlib
import time

import expected as exp
import lab
import numpy as np
import pytest

pytestmark = pytest.mark.ui

NOTEBOOKS = lab.notebook_paths()


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no *.ipynb found under {lab.NOTEBOOKS}"


@pytest.fixture(
    scope="session",
    params=NOTEBOOKS,
    ids=[p.relative_to(lab.NOTEBOOKS).as_posix() for p in NOTEBOOKS],
)
def ran(request, browser, lab_server):
    """A page on which the notebook has been opened and run once; shared by the tests of that notebook."""
    page = lab.new_page(browser)
    try:
        lab.run_notebook(page, lab_server, request.param)
        yield request.param, page
    finally:
        page.context.close()


def test_notebook_runs_clean(ran):
    notebook, page = ran
    found = lab.problems(page)
    assert not found, f"{notebook.name} in JupyterLab:\n" + "\n".join(found)


def _check_readout(explorer, where: str) -> tuple[dict, list[list[str]]]:
    """data-state and visible tables == helpers.attention for the reported inputs; returns (state, tables)."""
    state = lab.read_state(explorer)
    want = exp.expected(state)
    np.testing.assert_allclose(
        exp.number_array(state["weights"]), want.weights, rtol=0, atol=1e-9,
        err_msg=f"{where}: data-state weights differ from helpers.attention (atol 1e-9)",
    )  # fmt: skip
    if want.output is not None:
        np.testing.assert_allclose(
            exp.number_array(state["output"]), want.output, rtol=0, atol=1e-9,
            err_msg=f"{where}: data-state output differs from helpers.attention (atol 1e-9)",
        )  # fmt: skip
    shown = lab.readout_tables(explorer)
    wanted = [exp.as_4_decimals(m) for m in want.tables]
    assert shown == wanted, (
        f"{where}: the readout tables show\n  {shown}\nbut helpers.attention gives\n  {wanted}\n"
        f"for inputs {state['inputs']}"
    )
    return state, shown


def _wait(page, failure: str, js: str, arg, timeout_ms: int = 30_000) -> None:
    """Wait until ``js(arg)`` is true in the page; fail with ``failure`` if it never is."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(js, arg=arg, timeout=timeout_ms)
    except PlaywrightTimeout:
        pytest.fail(f"{failure} within {timeout_ms / 1000:.0f} s", pytrace=False)


def test_explorers_respond_to_a_slider(ran):
    notebook, page = ran
    explorers = lab.explorers(page)
    count = explorers.count()
    # every lesson has live sliders; worked-solution notebooks may have none (then there is nothing to move)
    if "solutions" not in notebook.relative_to(lab.NOTEBOOKS).parts:
        assert count > 0, f"{notebook.name} shows no .attn-explorer: a lesson without live sliders"
    for i in range(count):
        explorer = explorers.nth(i)
        kind = lab.explorer_kind(explorer)
        where = f"{notebook.name}, explorer {i} ({kind})"
        state0, shown0 = _check_readout(explorer, where + " before the move")
        srcs0 = lab.heatmap_srcs(explorer)
        raw0 = explorer.locator(".attn-readout [data-state]").first.get_attribute("data-state")
        assert srcs0, f"{where}: no .attn-heatmap image"

        slider = lab.pick_slider(explorer)
        handle = slider.locator(".noUi-handle").first
        handle.scroll_into_view_if_needed()
        value0 = slider.locator(".widget-readout").inner_text()
        key = lab.move_slider(handle)
        label = f"{where}: {key} on {slider.get_attribute('class')}"

        # (a) the heatmap image was replaced and the new one has loaded
        _wait(
            page,
            f"{label}: the heatmap image did not change (or the new one did not load)",
            """([root, old]) => {
              const imgs = [...root.querySelectorAll('.attn-heatmap')]
                .map(el => el.tagName === 'IMG' ? el : el.querySelector('img'));
              return imgs.some((img, k) => img && img.src !== old[k])
                && imgs.every(img => img && img.complete && img.naturalWidth > 0);
            }""",
            [explorer.element_handle(), srcs0],
        )
        value1 = slider.locator(".widget-readout").inner_text()
        assert value1 != value0, f"{label}: the slider's readout still shows {value0}"
        # (b) the readout was redrawn for the new state and its numbers are helpers.attention's
        _wait(
            page,
            f"{label}: the readout's data-state did not change",
            "([root, old]) => root.querySelector('.attn-readout [data-state]')?.getAttribute('data-state') !== old",
            [explorer.element_handle(), raw0],
        )
        state1, shown1 = _check_readout(explorer, label)
        assert state1["inputs"] != state0["inputs"], f"{label}: data-state inputs did not change"
        assert shown1 != shown0, f"{label}: the readout's numbers did not change ({shown0})"
        assert lab.heatmap_srcs(explorer) != srcs0, f"{label}: heatmap src unchanged"


def test_saving_touches_only_the_served_copy(ran, lab_server):
    """File > Save Notebook writes the temporary copy; the repository's file stays byte for byte the same."""
    notebook, page = ran
    copy = lab_server.root / "notebooks" / notebook.relative_to(lab.NOTEBOOKS)
    assert lab.REPO not in copy.resolve().parents, f"the server serves {copy}, inside the repository"
    before_repo, before_copy = _digest(notebook), copy.stat().st_mtime_ns
    started_ns = time.time_ns()
    lab._menu(page, "File", "docmanager:save")
    _wait(
        page,
        f"{notebook.name}: File > Save Notebook did not finish",
        "() => !document.querySelector('.lm-TabBar-tab.lm-mod-current.jp-mod-dirty')",
        None,
    )
    deadline = time.monotonic() + 15
    while copy.stat().st_mtime_ns <= before_copy and time.monotonic() < deadline:
        time.sleep(0.1)  # waiting for the file write, not a timed assertion
    assert copy.stat().st_mtime_ns > before_copy, f"the served copy {copy} was not saved"
    assert _digest(notebook) == before_repo, f"{notebook} was modified by saving in the browser"
    checkpoint = notebook.parent / ".ipynb_checkpoints" / f"{notebook.stem}-checkpoint.ipynb"
    assert not checkpoint.exists() or checkpoint.stat().st_mtime_ns < started_ns, (
        f"saving wrote a checkpoint into the repository: {checkpoint}"
    )
