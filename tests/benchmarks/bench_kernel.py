"""Time one slider event of every explorer: from the control's change to the new HTML in the widgets.

Run: ``python tests/benchmarks/bench_kernel.py`` (not collected by pytest; no assertion on time).
Each event sets a slider's ``value`` trait exactly as the browser does, which runs the explorer's
observer; the render (``show`` + the HTML tables + the readout) happens synchronously inside that
assignment, so the time of the assignment is the whole kernel-side cost of one event. The table
prints wall time (affected by whatever else runs on the machine), the process CPU time, and the
size of the HTML sent per update.
"""

from __future__ import annotations

import os
import platform
import statistics
import time

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402

from helpers import examples as E  # noqa: E402
from helpers import explorers  # noqa: E402
from helpers import sentence as S  # noqa: E402

GOAL_MS = 2.0
N_EVENTS = 60


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def _next_value(slider, k: int):
    """A value inside the slider's range that differs from its current one (a drag-like sweep); a toggle flips."""
    if isinstance(slider.value, bool):
        return not slider.value
    lo, hi = float(slider.min), float(slider.max)
    step = float(getattr(slider, "step", 1) or 1)
    n_steps = max(int(round((hi - lo) / step)), 1)
    i = round(n_steps * (0.5 + 0.45 * np.sin(k / 3)))
    as_int = isinstance(slider.value, int)
    v = lo + i * step
    if abs(v - slider.value) < step / 2:  # the same value fires no event: nudge it by one step
        v = v + step if v + step <= hi else v - step
    return int(round(v)) if as_int else round(v, 6)


def bench(name: str, ex, sliders: list, n: int = N_EVENTS) -> dict:
    before_renders = ex.renders
    wall, cpu, size = [], [], []
    for k in range(n):
        s = sliders[k % len(sliders)]
        v = _next_value(s, k)
        old = ex.readout.value
        t0, c0 = time.perf_counter(), time.process_time()
        s.value = v  # the widget's value trait, as a browser event sets it
        t1, c1 = time.perf_counter(), time.process_time()
        wall.append((t1 - t0) * 1000)
        cpu.append((c1 - c0) * 1000)
        size.append(sum(len(w.value) for w in ex._views) + len(ex.readout.value))
        if ex.readout.value == old:
            raise RuntimeError(f"{name}: event {k} ({s.description or s._dom_classes}) did not render")
    renders = ex.renders - before_renders
    return {"name": name, "n": n, "renders": renders, "median": statistics.median(wall), "p90": _pct(wall, 90),
            "cpu_median": statistics.median(cpu), "kb": statistics.median(size) / 1000}


def main() -> None:
    rows = []
    ex = explorers.no_weights_explorer(E.T001_X)
    rows.append(bench("01 no-weights, 3 tokens (X sliders)", ex, list(ex.controls["X"].sliders.ravel())))

    ex = explorers.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    rows.append(bench("02 qkv, 3 tokens (W_q, W_k, W_v)", ex,
                      [s for n in ("W_q", "W_k", "W_v") for s in ex.controls[n].sliders.ravel()]))

    ex = explorers.qkv_explorer(E.T000_F2_X, E.T000_F2_WQ / 10, E.T000_F2_WK / 10, E.T000_F2_WV / 10,
                                list("abcde"), min=-1, max=1, step=0.1)
    rows.append(bench("02 qkv, 5 tokens (000 F2, W/10)", ex,
                      [s for n in ("W_q", "W_k", "W_v") for s in ex.controls[n].sliders.ravel()]))

    ex = explorers.scaling_explorer()
    rows.append(bench("02 scaling (d_k slider)", ex, [ex.controls["d_k"]]))

    ex = explorers.overflow_explorer()
    rows.append(bench("03 overflow (magnitude)", ex, [ex.controls["magnitude"]]))

    for h in (2, 4):
        ex = explorers.multihead_explorer(E.T001_X, 4, n_heads=h)
        rows.append(bench(f"04 multi-head grid, {h} heads (W_q, W_k)", ex,
                          [s for n in ("W_q", "W_k") for s in ex.controls[n].sliders.ravel()]))

    ex = explorers.qkv_explorer(S.embeddings(), *S.pronoun_head(), list(S.TOKENS))
    rows.append(bench("02 qkv, the 8-token sentence", ex,
                      [s for n in ("W_q", "W_k") for s in ex.controls[n].sliders.ravel()]))

    ex = explorers.widget_check()
    rows.append(bench("00 widget check (score)", ex, [ex.controls["score"]]))

    ex = explorers.positions_explorer(S.embeddings(), *S.pronoun_head(), S.TOKENS, focus="it")
    rows.append(bench("05 positions (shift)", ex, [ex.controls["shift"]]))

    ex = explorers.mask_explorer(S.embeddings(), *S.adjective_head(), S.TOKENS)
    rows.append(bench("06 masks (toggle cells)", ex, list(ex.controls["mask"].buttons.ravel()[1::3])))

    ex = explorers.training_explorer()
    rows.append(bench("07 training (step)", ex, [ex.controls["step"]]))

    ex = explorers.tiles_explorer()
    rows.append(bench("08 tiles (block)", ex, [ex.controls["block"]]))

    ex = explorers.generation_explorer(S.embeddings(), *S.two_heads(), 2, S.TOKENS, step=4)
    rows.append(bench("09 generation (step)", ex, [ex.controls["step"]]))

    ex = explorers.long_context_explorer(S.embeddings(), *S.two_heads(), S.TOKENS)
    rows.append(bench("10 long context, window (window)", ex, [ex.controls["window"]]))
    ex.set(method="latent")
    rows.append(bench("10 long context, latent (d_c)", ex, [ex.controls["d_c"]]))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average (1 min) before: {load:.2f}")
    head = (f"{'explorer':42s} {'n':>3s} {'renders/event':>13s} {'median ms':>9s} {'p90 ms':>7s} {'cpu ms':>7s} "
            f"{'HTML':>7s} {'goal':>5s}")
    print(head)
    print("-" * len(head))
    for r in rows:
        flag = "ok" if r["median"] <= GOAL_MS else "SLOW"
        print(f"{r['name']:42s} {r['n']:3d} {r['renders'] / r['n']:13.2f} {r['median']:9.1f} {r['p90']:7.1f} "
              f"{r['cpu_median']:7.1f} "
              f"{r['kb']:5.1f}KB {GOAL_MS:5.0f} {flag}")


if __name__ == "__main__":
    main()
