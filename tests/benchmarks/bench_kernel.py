"""Time one slider event of every explorer: from the control's change to the messages for the browser.

Run: ``python tests/benchmarks/bench_kernel.py`` (not collected by pytest; no assertion on time).
The explorers are those of ``helpers.explorers.REGISTRY`` (each one's demo), and a few variants (``VARIANTS``).
Each event sets a slider's ``value`` trait exactly as the browser does, which runs the explorer's
observer; the render (``show``, the changed cells of every heatmap, the readout) happens synchronously
inside that assignment, so the time of the assignment is the whole kernel-side cost of one event. The
table prints wall time (affected by whatever else runs on the machine), the process CPU time, and the
bytes sent per update (median): the heatmaps' messages (JSON of the changed cells and captions, or of a
whole View after a change of layout) and the readout's HTML (its note and data-state), each counted as
the bytes of the serialized Jupyter message. There is no kernel here, so every widget message is
serialized and signed as the kernel does (``jupyter_client.Session.serialize``, inside the timed
assignment) and only the socket send is missing. Goal: median <= 2 ms.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from anywhere in a checkout

from machine import describe  # noqa: E402

from helpers import examples as E  # noqa: E402
from helpers import explorers  # noqa: E402
from helpers import sentence as S  # noqa: E402

_SESSION = None
_WIRE: list[tuple[str, int]] = []  # (comm id, bytes) of every message since the last reset


def _serialize_like_the_kernel() -> None:
    """Widgets' messages, which go nowhere without a kernel, serialized and signed as ipykernel sends them."""
    global _SESSION
    import comm
    from jupyter_client.session import Session

    _SESSION = Session(key=b"0" * 32)  # HMAC-signed, as a kernel's session is

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        content = {"data": {} if data is None else data, "comm_id": self.comm_id, **keys}
        msg = _SESSION.msg(msg_type, content=content, metadata={} if metadata is None else metadata)
        frames = _SESSION.serialize(msg, ident=b"comm")  # [ident, DELIM, signature, header, parent, metadata, content]
        _WIRE.append((self.comm_id, sum(len(f) for f in frames) + sum(len(memoryview(b)) for b in buffers or ())))

    comm.DummyComm.publish_msg = publish_msg

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
    wall, cpu, views, readout, wire, messages = [], [], [], [], [], []
    for k in range(n):
        s = sliders[k % len(sliders)]
        v = _next_value(s, k)
        old = ex.readout.value
        _WIRE.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        s.value = v  # the widget's value trait, as a browser event sets it
        t1, c1 = time.perf_counter(), time.process_time()
        wall.append((t1 - t0) * 1000)
        cpu.append((c1 - c0) * 1000)
        ours = {w.comm.comm_id for w in [*ex.views, ex.readout]}  # not the slider's own echo, not the controls
        views.append(sum(w.sent for w in ex.views))  # JSON of the changed cells (or whole Views)
        readout.append(len(ex.readout.value.encode()) if ex.readout.value != old else 0)  # its HTML
        wire.append(sum(n for cid, n in _WIRE if cid in ours))
        messages.append(sum(1 for cid, _ in _WIRE if cid in ours))
        if ex.readout.value == old:
            raise RuntimeError(f"{name}: event {k} ({s.description or s._dom_classes}) did not render")
    renders = ex.renders - before_renders
    return {"name": name, "n": n, "renders": renders, "median": statistics.median(wall), "p90": _pct(wall, 90),
            "cpu_median": statistics.median(cpu), "views": statistics.median(views),
            "readout": statistics.median(readout), "wire": statistics.median(wire),
            "messages": statistics.median(messages)}


def moving_controls(ex) -> dict[str, list]:
    """Control name -> what a person moves of it: every enabled slider (each one of a matrix of sliders);
    for an explorer with no slider, every third of its on/off cells (never a whole row of a mask)."""
    def parts(c):
        return list(c.sliders.ravel()) if hasattr(c, "sliders") else [c]

    sliders = {n: [w for w in parts(c) if hasattr(w, "min") and hasattr(w, "max") and not w.disabled]
               for n, c in ex.controls.items()}
    sliders = {n: ws for n, ws in sliders.items() if ws}
    return sliders or {n: list(c.buttons.ravel()[1::3]) for n, c in ex.controls.items() if hasattr(c, "buttons")}


def _latent(ex):
    ex.set(method="latent")  # the d_c slider, enabled
    return ex


# kind -> the controls the per-update sweep moves, when not all of them: 12's temperature and top-k regenerate the
# text (timed on their own below, goal REGENERATE_GOAL_MS); its step slider re-uses it (goal GOAL_MS)
MOVING = {"language-model": ("step",)}
REGENERATE_GOAL_MS = 100.0

# kind -> more (name, factory) cases than its registered demo: bigger inputs, another setting
VARIANTS = {
    "qkv": [("5 tokens, 000 F2 W/10", lambda: explorers.qkv_explorer(
                E.T000_F2_X, E.T000_F2_WQ / 10, E.T000_F2_WK / 10, E.T000_F2_WV / 10, list("abcde"),
                min=-1, max=1, step=0.1)),
            ("the sentence", lambda: explorers.qkv_explorer(S.embeddings(), *S.pronoun_head(),
                                                                    list(S.TOKENS)))],
    "multihead": [("4 heads", lambda: explorers.multihead_explorer(E.T001_X, 4, n_heads=4))],
    "long-context": [("latent", lambda: _latent(explorers.long_context_explorer(S.embeddings(), *S.two_heads(),
                                                                                 S.TOKENS)))],
    "language-model": [("64 characters", lambda: explorers.language_model_explorer("The attention weights of "))],
}


def run() -> list[dict]:
    """One row per registered explorer (its demo, helpers.explorers.REGISTRY), then one per variant."""
    unknown = set(VARIANTS) - set(explorers.REGISTRY)
    if unknown:
        raise KeyError(f"VARIANTS names kinds no explorer registers: {sorted(unknown)}")
    rows = []
    for kind, entry in explorers.REGISTRY.items():
        for what, make in [("demo", entry.demo), *VARIANTS.get(kind, [])]:
            ex = make()
            moved = moving_controls(ex)
            if kind in MOVING:
                moved = {n: ws for n, ws in moved.items() if n in MOVING[kind]}
            rows.append(bench(f"{entry.lesson} {kind}, {what} ({', '.join(moved)})", ex,
                              [w for ws in moved.values() for w in ws]))
    return rows


def regenerate(n: int = 10) -> dict:
    """12's explorer: a new temperature regenerates 64 characters with the cache (the whole update, as a slider
    event)."""
    ex = explorers.language_model_explorer("The attention weights of ", n_new=64)
    slider = ex.controls["temperature"]
    wall, cpu = [], []
    for k in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        slider.value = round(0.5 + 0.1 * (k % 10), 1)  # 0.5 ... 1.4: each differs from the one before (start 0.8 too)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return {"median": statistics.median(wall), "p90": _pct(wall, 90), "cpu_median": statistics.median(cpu), "n": n,
            "chars": ex.n_new}


def head_change(n: int = 40) -> dict:
    """13's explorer on a 64-character text: a change of head (the dropdown) picks a block worked out once per text."""
    text = ("the cat sat on the mat. the cat sat on the mat. " * 2)[: explorers.nb13.MAX_CHARS]
    ex = explorers.heads_explorer(text, layer=1, head=1)
    head = ex.controls["head"]
    for layer in range(ex.config.n_layers):  # the text's first showing (its forward pass and every head's cells)
        ex.set(layer=layer)
    wall, cpu, wire = [], [], []
    for _ in range(n):
        _WIRE.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        head.value = (head.value + 1) % ex.config.n_heads  # as the browser sets it
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        wire.append(sum(b for _, b in _WIRE))
    return {"median": statistics.median(wall), "p90": _pct(wall, 90), "cpu_median": statistics.median(cpu), "n": n,
            "chars": len(text), "wire": statistics.median(wire)}


def main() -> None:
    print(f"# bench_kernel: {N_EVENTS} slider events per explorer; goal: median <= {GOAL_MS:g} ms")
    print(f"# before: {describe()}")
    _serialize_like_the_kernel()
    rows = run()
    print(f"# after:  {describe()}")
    head = (f"{'explorer':42s} {'n':>3s} {'renders/event':>13s} {'median ms':>9s} {'p90 ms':>7s} {'cpu ms':>7s} "
            f"{'msgs':>4s} {'cells B':>8s} {'readout B':>9s} {'sent B':>8s} {'goal':>5s}")
    print(head)
    print("-" * len(head))
    for r in rows:
        flag = "ok" if r["median"] <= GOAL_MS else "SLOW"
        print(f"{r['name']:42s} {r['n']:3d} {r['renders'] / r['n']:13.2f} {r['median']:9.2f} {r['p90']:7.2f} "
              f"{r['cpu_median']:7.2f} {r['messages']:4.0f} {r['views']:8.0f} {r['readout']:9.0f} {r['wire']:8.0f} "
              f"{GOAL_MS:5.0f} {flag}")
    print("# per update (medians): msgs = messages to the browser; cells B = JSON of the heatmaps' changed cells "
          "(a whole")
    print("# View after a change of layout); readout B = its HTML (note and data-state); sent B = the serialized "
          "messages")
    regen = regenerate()
    flag = "ok" if regen["median"] <= REGENERATE_GOAL_MS else "SLOW"
    print(f"# 12 language-model: a new temperature regenerates {regen['chars']} characters with the cache: median "
          f"{regen['median']:.1f} ms, p90 {regen['p90']:.1f} ms, process CPU {regen['cpu_median']:.1f} ms over "
          f"{regen['n']} "
          f"events (goal {REGENERATE_GOAL_MS:g} ms) "
          f"{flag}; the step rows above re-use them")
    heads = head_change()
    flag = "ok" if heads["median"] <= GOAL_MS else "SLOW"
    print(f"# 13 heads: a head change on a {heads['chars']}-character text: median {heads['median']:.2f} ms, p90 "
          f"{heads['p90']:.2f} ms, process CPU {heads['cpu_median']:.2f} ms over {heads['n']} events, "
          f"{heads['wire']:.0f} bytes sent (goal {GOAL_MS:g} ms) {flag}")
    print(f"# worst median {max(r['median'] for r in rows):.2f} ms; bytes sent per update (median) from "
          f"{min(r['wire'] for r in rows):.0f} to {max(r['wire'] for r in rows):.0f}")


if __name__ == "__main__":
    main()
