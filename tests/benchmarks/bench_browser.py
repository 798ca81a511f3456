"""End-to-end latency of every explorer in a real JupyterLab: key press on a slider -> new table painted.

Run: ``python tests/benchmarks/bench_browser.py [--moves 30] [--gap-ms 150] [NOTEBOOK ...]``
(a script, not collected by pytest; it prints figures and asserts nothing about time). Needs Chromium,
see tests/ui/conftest.py. Goals: median <= 40 ms per explorer, and <= 1.3 times the floor.

The floor is a bare round trip: one slider whose change sets an ``ipywidgets.HTML`` to its value, with nothing
computed, in a notebook whose run took over a second, as a lesson's does (SLOW_RUN_SOURCE: after a shorter
run the same floor is about a quarter faster). It stays open in its own tab, and each explorer's moves
alternate with the floor's in ``--blocks`` blocks, so that the ratio compares the two over the same minutes:
machines here are noisy, and a floor measured once at the start moved from 16.5 to 22.8 ms between three runs
of the same code.

JupyterLab runs with its own default settings, as a student has them (the browser tests instead draw every
cell, so that off-screen outputs can be checked: with that setting a lesson of 40 cells adds about a third to
any round trip in it, the floor's too).

For each notebook (default: every notebook under notebooks/, solutions included; those without an explorer
add no row; a registered explorer (``helpers.explorers.REGISTRY``) that none shows is named at the end) it
starts JupyterLab on a
temporary copy, runs all cells in headless Chromium, then for each ``.attn-explorer`` presses an arrow
key on the slider ``tests/ui/lab.py:pick_slider`` chooses (12's step slider; 13's head dropdown),
``--moves`` times, waiting ``--gap-ms`` between presses as a person would. In the page, a capturing
``keydown`` listener stamps ``performance.now()``; a MutationObserver sees the heatmap tables change; the
timestamp of the next ``requestAnimationFrame`` after the last change (the frame that paints it) is taken. Changes are a
heatmap cell's text, class or colour (in place) or the readout. Latency = that frame time - the key
press (the readout's data-state must have changed too). The CPU model and the load average are
printed with the figures (the machine is shared: repeat a run made under load).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from anywhere in a checkout

import lab  # noqa: E402
from machine import describe  # noqa: E402

from helpers.explorers import REGISTRY  # noqa: E402

GOAL_MS = 40.0
GOAL_RATIO = 1.3

_JS_INSTRUMENT = """root => {
  if (root.__attnLatency) return;  // once per explorer: a block after the first re-uses it
  const rec = {t0: null, last: null};
  root.__attnLatency = rec;
  const start = () => { rec.t0 = performance.now(); rec.last = null; };
  root.addEventListener('keydown', start, true);
  root.addEventListener('pointerdown', start, true);  // a click on a mask cell
  // what the explorer shows: a heatmap's texts, classes and colours, or the readout (not the slider itself)
  const shown = r => {
    const node = r.target.nodeType === Node.ELEMENT_NODE ? r.target : r.target.parentElement;
    return !!node?.closest('.attn-heatmap, .attn-readout');
  };
  new MutationObserver(records => {
    if (rec.t0 === null || !records.some(shown)) return;
    requestAnimationFrame(ts => { rec.last = Math.max(rec.last ?? 0, ts); });
  }).observe(root, {childList: true, subtree: true, characterData: true, attributes: true});
}"""

_JS_DONE = """([root, old]) => {
  const rec = root.__attnLatency;
  const state = root.querySelector('.attn-readout [data-state]')?.getAttribute('data-state');
  return state !== old && rec.last !== null;
}"""

# The floor: a slider that sets an ipywidgets.HTML to its value, nothing computed.
FLOOR_SOURCE = """import ipywidgets as W
s = W.IntSlider(0, min=0, max=1000, description="floor")
s.add_class("attn-slider")
s.add_class("attn-slider--floor")
h = W.HTML('<table class="attn-hm"><tr><td>0</td></tr></table><div data-state="0"></div>')
h.add_class("attn-heatmap")
h.add_class("attn-readout")
s.observe(lambda ch: setattr(h, "value", f'<table class="attn-hm"><tr><td>{ch.new}</td></tr></table>'
                                         f'<div data-state="{ch.new}"></div>'), "value")
box = W.VBox([s, h])
box.add_class("attn-explorer")
box.add_class("attn-explorer--floor")
box"""


# Before the floor: a run of over a second, as every lesson's run is. After a run that long, JupyterLab's toolbar
# shows its time and redraws at each kernel message, busy and idle, which makes the toolbar check every button
# (about 4 ms a round trip here); after a shorter run it does not. The floor pays what a lesson's page pays.
SLOW_RUN_SOURCE = """import time
time.sleep(1.5)  # JupyterLab's toolbar now shows the run's time, as after running a lesson"""


def write_floor_notebook(folder: Path) -> Path:
    """A notebook with the floor explorer (after a run of over a second), in the served copy of the notebooks."""
    import nbformat

    cells = [nbformat.v4.new_code_cell(SLOW_RUN_SOURCE), nbformat.v4.new_code_cell(FLOOR_SOURCE)]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "bench-floor.ipynb"
    nbformat.write(nb, path)
    return path


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


# The slider a goal is about, where it is not the one lab.pick_slider tries first (12's first slider,
# temperature, regenerates the text; its goal is about the step slider, which re-uses what was generated).
SLIDER = {"language-model": "step"}
# kind -> the dropdown timed instead of a slider or a click (13's goal is about a head change: precomputed per text)
SELECT = {"heads": "head"}


def bench_explorer(page, explorer, moves: int, gap_ms: int) -> list[float]:
    """Latencies (ms) of ``moves`` arrow-key presses on the explorer's chosen slider (or clicks on its
    first mask cell, for an explorer of on/off cells only)."""
    explorer.evaluate(_JS_INSTRUMENT)
    select = SELECT.get(lab.explorer_kind(explorer))
    if select:
        return _bench_select(page, explorer, explorer.locator(f".attn-control--{select} select").first, moves, gap_ms)
    toggles_only = not explorer.locator(".attn-slider:visible").count()
    if toggles_only:
        target = explorer.locator(".attn-toggle").nth(1)  # row 1, key 2: never empties a row
        target.scroll_into_view_if_needed()
    else:
        name = SLIDER.get(lab.explorer_kind(explorer))
        slider = explorer.locator(f".attn-slider--{name}").first if name else lab.pick_slider(explorer)
        target = slider.locator(".noUi-handle").first
        target.scroll_into_view_if_needed()
        target.focus()
    key = "ArrowRight"
    out = []
    for _ in range(moves):
        if not toggles_only:
            now, lo, hi = (
                float(target.get_attribute(a)) for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax")
            )
            if now >= hi:
                key = "ArrowLeft"
            elif now <= lo:
                key = "ArrowRight"
        old = explorer.locator(".attn-readout [data-state]").first.get_attribute("data-state")
        explorer.evaluate("root => { root.__attnLatency.t0 = null; root.__attnLatency.last = null; }")
        target.click() if toggles_only else target.press(key)
        page.wait_for_function(_JS_DONE, arg=[explorer.element_handle(), old], timeout=30_000)
        out.append(explorer.evaluate("root => root.__attnLatency.last - root.__attnLatency.t0"))
        page.wait_for_timeout(gap_ms)  # pacing between presses, as a person would
    return out


def _bench_select(page, explorer, target, moves: int, gap_ms: int) -> list[float]:
    """Latencies (ms) of ``moves`` arrow-key presses on a dropdown (a <select>: the arrow changes its value at once),
    down to its last option, then up to its first, and so on."""
    target.scroll_into_view_if_needed()
    target.focus()
    key, out = "ArrowDown", []
    for _ in range(moves):
        index, count = target.evaluate("s => [s.selectedIndex, s.options.length]")
        key = "ArrowUp" if index >= count - 1 else "ArrowDown" if index <= 0 else key
        old = explorer.locator(".attn-readout [data-state]").first.get_attribute("data-state")
        explorer.evaluate("root => { root.__attnLatency.t0 = null; root.__attnLatency.last = null; }")
        target.press(key)
        page.wait_for_function(_JS_DONE, arg=[explorer.element_handle(), old], timeout=30_000)
        out.append(explorer.evaluate("root => root.__attnLatency.last - root.__attnLatency.t0"))
        page.wait_for_timeout(gap_ms)  # pacing between presses, as a person would
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="notebooks (default: all under notebooks/)")
    ap.add_argument("--moves", type=int, default=30, help="key presses per explorer (default 30)")
    ap.add_argument("--gap-ms", type=int, default=150, help="pause between presses (default 150 ms)")
    ap.add_argument("--blocks", type=int, default=3,
                    help="blocks of moves per explorer, each after as many on the floor (default 3)")
    args = ap.parse_args(argv)
    if args.moves < 1 or not 1 <= args.blocks <= args.moves:
        ap.error("--moves must be at least 1 and --blocks between 1 and --moves")
    notebooks = [p.resolve() for p in args.notebooks] or lab.notebook_paths()
    if lab.find_chromium() is None:
        print(lab.INSTALL_HINT, file=sys.stderr)
        return 2
    print(
        f"# bench_browser: {args.moves} moves per explorer in {args.blocks} blocks, each after as many on the floor, "
        f"{args.gap_ms} ms apart; goals: median <= {GOAL_MS:.0f} ms and <= {GOAL_RATIO} x the floor"
    )
    print(f"# {platform.python_version()} on {platform.machine()}, {lab.find_chromium()}")
    print(f"# before: {describe()}")
    rows = []  # (notebook, explorer #, kind, latencies, the floor's latencies between them)
    t_start = time.perf_counter()
    with lab.lab_and_browser(windowing=None) as (server, browser):  # JupyterLab's own settings
        floor_page = lab.new_page(browser)
        floor = write_floor_notebook(server.root / "notebooks")  # served from the copy: its URL is its name
        lab.open_notebook(floor_page, server, server.notebooks_src / floor.name)
        lab.run_all(floor_page)
        floor_explorer = lab.explorers(floor_page).first
        for nb in notebooks:
            page = lab.new_page(browser)
            try:
                lab.run_notebook(page, server, nb)
                found = lab.problems(page)
                if found:  # still time the explorers that did render; say so
                    print(
                        f"# warning: {nb.name} has problems (see pytest tests/ui): {found[0][:300]}",
                        file=sys.stderr,
                    )
                explorers = lab.explorers(page)
                for i in range(explorers.count()):
                    ex, lat, base = explorers.nth(i), [], []
                    for b in range(args.blocks):  # the moves split as evenly as they go
                        n = args.moves * (b + 1) // args.blocks - args.moves * b // args.blocks
                        floor_page.bring_to_front()
                        base += bench_explorer(floor_page, floor_explorer, n, args.gap_ms)
                        page.bring_to_front()
                        lat += bench_explorer(page, ex, n, args.gap_ms)
                    rows.append((nb.stem, i, lab.explorer_kind(ex), lat, base))
                    print(f"# measured {nb.stem} #{i}: median {statistics.median(lat):.1f} ms, the floor between its "
                          f"blocks {statistics.median(base):.1f} ms", flush=True)
            finally:
                page.context.close()
        floor_page.context.close()
    print(f"# after:  {describe()}")
    print(
        f"{'notebook':<36} {'#':>2} {'kind':<14} {'n':>3} {'median ms':>10} {'p90 ms':>7} {'max ms':>7} "
        f"{'floor ms':>9} {'x floor':>8}  goal"
    )
    worst, worst_ratio = 0.0, 0.0
    for stem, i, kind, lat, base in rows:
        med, p90, floor_med = statistics.median(lat), _percentile(lat, 90), statistics.median(base)
        ratio = med / floor_med
        worst, worst_ratio = max(worst, med), max(worst_ratio, ratio)
        ok = "ok" if med <= GOAL_MS and ratio <= GOAL_RATIO else "SLOW"
        print(f"{stem:<36} {i:>2} {kind:<14} {len(lat):>3} {med:>10.1f} {p90:>7.1f} {max(lat):>7.1f} {floor_med:>9.1f} "
              f"{ratio:>8.2f}  {ok}")
    all_floor = [t for row in rows for t in row[4]]
    print(
        f"# {len(rows)} explorers, worst median {worst:.1f} ms, worst ratio to the floor {worst_ratio:.2f}; the floor "
        f"over the run: median {statistics.median(all_floor) if all_floor else float('nan'):.1f} ms; "
        f"total {time.perf_counter() - t_start:.0f} s"
    )
    missed = [kind for kind in REGISTRY if kind not in {row[2] for row in rows}]
    if missed:  # a registered explorer none of these notebooks shows: say which, and where it lives
        print(f"# not measured: {', '.join(f'{k} ({REGISTRY[k].lesson})' for k in missed)}: no such explorer in "
              "these notebooks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
