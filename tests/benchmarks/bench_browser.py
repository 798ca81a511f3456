"""End-to-end latency of every explorer in a real JupyterLab: key press on a slider -> new heatmap on screen.

Run: ``python tests/benchmarks/bench_browser.py [--moves 30] [--gap-ms 150] [NOTEBOOK ...]``
(a script, not collected by pytest; it prints figures and asserts nothing about time). Needs Chromium,
see tests/ui/conftest.py. Goal: median <= 100 ms per explorer.

For each notebook (default: every notebook under notebooks/ with an explorer) it starts JupyterLab on a
temporary copy, runs all cells in headless Chromium, then for each ``.attn-explorer`` presses an arrow
key on the slider ``tests/ui/lab.py:pick_slider`` chooses, ``--moves`` times, waiting ``--gap-ms``
between presses as a person would. In the page, a capturing ``keydown`` listener stamps
``performance.now()``; a MutationObserver sees each heatmap ``<img>`` get a new ``src``; once that image
has loaded, the timestamp of the next ``requestAnimationFrame`` (the frame that paints it) is taken.
Latency = that frame time - the key press, for the last heatmap the move changed (all of them are
waited for, and the readout's data-state must have changed too).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))

import lab  # noqa: E402

GOAL_MS = 100.0

_JS_INSTRUMENT = """root => {
  const rec = {t0: null, pending: 0, last: null, samples: []};
  root.__attnLatency = rec;
  root.addEventListener('keydown', () => { rec.t0 = performance.now(); rec.last = null; }, true);
  const seen = new WeakSet();
  const watch = img => {
    if (seen.has(img)) return;
    seen.add(img);
    new MutationObserver(() => {
      if (rec.t0 === null) return;
      rec.pending++;
      const shown = () => requestAnimationFrame(ts => { rec.last = Math.max(rec.last ?? 0, ts); rec.pending--; });
      img.addEventListener('load', shown, {once: true});
      img.addEventListener('error', () => { rec.pending--; }, {once: true});
    }).observe(img, {attributes: true, attributeFilter: ['src']});
  };
  const scan = () => root.querySelectorAll('.attn-heatmap').forEach(el => watch(el.tagName === 'IMG' ? el : el.querySelector('img')));
  scan();
  new MutationObserver(scan).observe(root, {childList: true, subtree: true});  // heatmaps swapped in later
}"""

_JS_DONE = """([root, old]) => {
  const rec = root.__attnLatency;
  const state = root.querySelector('.attn-readout [data-state]')?.getAttribute('data-state');
  return state !== old && rec.last !== null && rec.pending === 0;
}"""


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def bench_explorer(page, explorer, moves: int, gap_ms: int) -> list[float]:
    """Latencies (ms) of ``moves`` arrow-key presses on the explorer's chosen slider."""
    explorer.evaluate(_JS_INSTRUMENT)
    handle = lab.pick_slider(explorer).locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    key = "ArrowRight"
    out = []
    for _ in range(moves):
        now, lo, hi = (
            float(handle.get_attribute(a)) for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax")
        )
        if now >= hi:
            key = "ArrowLeft"
        elif now <= lo:
            key = "ArrowRight"
        old = explorer.locator(".attn-readout [data-state]").first.get_attribute("data-state")
        handle.press(key)
        page.wait_for_function(_JS_DONE, arg=[explorer.element_handle(), old], timeout=30_000)
        out.append(explorer.evaluate("root => root.__attnLatency.last - root.__attnLatency.t0"))
        page.wait_for_timeout(gap_ms)  # pacing between presses, as a person would
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="notebooks (default: all under notebooks/)")
    ap.add_argument("--moves", type=int, default=30, help="key presses per explorer (default 30)")
    ap.add_argument("--gap-ms", type=int, default=150, help="pause between presses (default 150 ms)")
    args = ap.parse_args(argv)
    if args.moves < 1:
        ap.error("--moves must be at least 1")
    notebooks = [p.resolve() for p in args.notebooks] or lab.notebook_paths()
    if lab.find_chromium() is None:
        print(lab.INSTALL_HINT, file=sys.stderr)
        return 2
    print(
        f"# bench_browser: {args.moves} moves per explorer, {args.gap_ms} ms apart; goal median <= {GOAL_MS:.0f} ms"
    )
    print(f"# {platform.python_version()} on {platform.machine()}, {lab.find_chromium()}")
    rows = []
    t_start = time.perf_counter()
    with lab.lab_and_browser() as (server, browser):
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
                    ex = explorers.nth(i)
                    lat = bench_explorer(page, ex, args.moves, args.gap_ms)
                    rows.append((nb.stem, i, lab.explorer_kind(ex), lat))
            finally:
                page.context.close()
    print(
        f"{'notebook':<36} {'#':>2} {'kind':<13} {'n':>3} {'median ms':>10} {'p90 ms':>8} {'max ms':>8}  goal"
    )
    worst = 0.0
    for stem, i, kind, lat in rows:
        med, p90 = statistics.median(lat), _percentile(lat, 90)
        worst = max(worst, med)
        ok = "ok" if med <= GOAL_MS else "SLOW"
        print(f"{stem:<36} {i:>2} {kind:<13} {len(lat):>3} {med:>10.1f} {p90:>8.1f} {max(lat):>8.1f}  {ok}")
    print(
        f"# {len(rows)} explorers, worst median {worst:.1f} ms, total {time.perf_counter() - t_start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
