"""What notebook 09's helpers cost: decode_step against the same loop in bare NumPy, and the cache against
recomputing.

Run: ``python tests/benchmarks/bench_generation.py`` (not collected by pytest; no assertion on time).

1. Generating N_TOKENS = 1024 tokens, one decode_step each, at d_model = 512, 8 query heads, 2 key/value
   heads (d_head = 64), float32, with W_o; against ``bare_generate`` below: the same projections, a
   preallocated cache, the grouped scores, an in-place softmax and W_o, with no checks at all. The two
   loops run interleaved, N_REPEATS times each after one warm-up; the table prints the medians and their
   ratio (goal: at most 1.5), in wall time and in the process's CPU time (less sensitive to other work on
   the machine). The two loops' outputs agree to float32 rounding (printed).
2. One generated token at T = 2048 (2047 tokens cached): decode_step against recomputing causal
   grouped_query_attention over all 2048 tokens (what a model without a cache does); the ratio printed.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from anywhere in a checkout

from machine import describe  # noqa: E402

from helpers.attention import causal_mask  # noqa: E402
from helpers.generation import KVCache, decode_step, grouped_query_attention  # noqa: E402

N_TOKENS, D_MODEL, N_HEADS, N_KV_HEADS = 1024, 512, 8, 2
D_HEAD = D_MODEL // N_HEADS
N_REPEATS = 5
RATIO_GOAL = 1.5
T_LONG = 2048


def _layer(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    s = 1 / math.sqrt(D_MODEL)
    X = rng.normal(size=(N_TOKENS, D_MODEL)).astype(np.float32)  # (T, d_model)
    W_q = (rng.normal(size=(D_MODEL, N_HEADS * D_HEAD)) * s).astype(np.float32)  # (d_model, h·d_head)
    W_k = (rng.normal(size=(D_MODEL, N_KV_HEADS * D_HEAD)) * s).astype(np.float32)  # (d_model, g·d_head)
    W_v = (rng.normal(size=(D_MODEL, N_KV_HEADS * D_HEAD)) * s).astype(np.float32)
    W_o = (rng.normal(size=(N_HEADS * D_HEAD, D_MODEL)) * s).astype(np.float32)  # (h·d_head, d_model)
    return X, W_q, W_k, W_v, W_o


def helpers_generate(X, W_q, W_k, W_v, W_o) -> np.ndarray:
    """One decode_step per row of X; returns the outputs (T, d_model)."""
    cache = KVCache(N_KV_HEADS, D_HEAD)
    return np.stack([decode_step(x, cache, W_q, W_k, W_v, N_HEADS, N_KV_HEADS, W_o=W_o)[0] for x in X])


def bare_generate(X, W_q, W_k, W_v, W_o) -> np.ndarray:
    """The same loop without a single check: a preallocated cache, grouped scores, in-place softmax."""
    T, g, r, d = X.shape[0], N_KV_HEADS, N_HEADS // N_KV_HEADS, D_HEAD
    K = np.empty((g, T, d), dtype=X.dtype)  # (g, T, d_head) the whole cache, filled row by row
    V = np.empty((g, T, d), dtype=X.dtype)
    scale = X.dtype.type(1 / math.sqrt(d))
    outs = np.empty((T, W_o.shape[1]), dtype=X.dtype)
    for t in range(T):
        x = X[t]  # (d_model,)
        q = (x @ W_q).reshape(g, r, d)  # (g, r, d_head)
        K[:, t] = (x @ W_k).reshape(g, d)  # (g, d_head) into row t
        V[:, t] = (x @ W_v).reshape(g, d)
        s = q @ K[:, : t + 1].swapaxes(-1, -2)  # (g, r, d_head) @ (g, d_head, t+1) -> (g, r, t+1)
        s *= scale
        s -= s.max(axis=-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)  # (g, r, t+1) the attention weights
        outs[t] = (s @ V[:, : t + 1]).reshape(-1) @ W_o  # (g, r, d_head) -> (h·d_head,) @ W_o -> (d_model,)
    return outs


def time_generation() -> dict:
    X, W_q, W_k, W_v, W_o = _layer(np.random.default_rng(0))
    a, b = helpers_generate(X, W_q, W_k, W_v, W_o), bare_generate(X, W_q, W_k, W_v, W_o)  # warm-up, same numbers?
    diff = float(np.abs(a - b).max())
    if diff > 1e-4:
        raise RuntimeError(f"the bare loop computes something else: max difference {diff:.3g}")
    times = {"helpers": [], "bare": []}
    cpu = {"helpers": [], "bare": []}
    for _ in range(N_REPEATS):  # interleaved: a slow moment of the machine hits both
        for name, fn in (("helpers", helpers_generate), ("bare", bare_generate)):
            t0, c0 = time.perf_counter(), time.process_time()
            fn(X, W_q, W_k, W_v, W_o)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    return {"median_s": {n: statistics.median(t) for n, t in times.items()},
            "min_s": {n: min(t) for n, t in times.items()},
            "cpu_s": {n: statistics.median(t) for n, t in cpu.items()}, "diff": diff}


def time_long_token() -> dict:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(T_LONG, D_MODEL)).astype(np.float32)  # (T, d_model)
    _, W_q, W_k, W_v, W_o = _layer(rng)
    K = (X[:-1] @ W_k).reshape(T_LONG - 1, N_KV_HEADS, D_HEAD).swapaxes(0, 1)  # (g, T-1, d_head)
    V = (X[:-1] @ W_v).reshape(T_LONG - 1, N_KV_HEADS, D_HEAD).swapaxes(0, 1)
    cached, full = [], []
    for _ in range(N_REPEATS):
        cache = KVCache(N_KV_HEADS, D_HEAD)
        cache.append(K, V)  # tokens 1..T-1 (not timed)
        t0 = time.perf_counter()
        out_c, _ = decode_step(X[-1], cache, W_q, W_k, W_v, N_HEADS, N_KV_HEADS, W_o=W_o)
        cached.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        out_f, _ = grouped_query_attention(X, W_q, W_k, W_v, N_HEADS, N_KV_HEADS, W_o=W_o, mask=causal_mask(T_LONG))
        full.append(time.perf_counter() - t0)
    diff = float(np.abs(out_c - out_f[-1]).max())
    return {"cached": min(cached), "full": min(full), "diff": diff}


def main() -> None:
    print(f"before: {describe()}; NumPy {np.__version__}")  # which machine, how busy
    t = time_generation()
    med, mins = t["median_s"], t["min_s"]
    ratio = med["helpers"] / med["bare"]
    print()
    print(f"1. generating {N_TOKENS} tokens, d_model={D_MODEL}, {N_HEADS} query heads, {N_KV_HEADS} key/value heads, "
          f"float32, with W_o ({N_REPEATS} interleaved repeats; helpers and bare agree to {t['diff']:.1e})")
    head = f"{'version':34s} {'median s':>9s} {'min s':>7s} {'ms/token':>9s} {'CPU s':>7s}"
    print(head)
    print("-" * len(head))
    for name, label in (("helpers", "decode_step + KVCache"), ("bare", "bare NumPy loop")):
        print(f"{label:34s} {med[name]:9.3f} {mins[name]:7.3f} {1000 * med[name] / N_TOKENS:9.3f} "
              f"{t['cpu_s'][name]:7.3f}")
    flag = "ok" if ratio <= RATIO_GOAL else "OVER"
    print(f"ratio helpers / bare (medians): {ratio:.2f}   goal <= {RATIO_GOAL:.2f}  {flag}")
    print(f"ratio helpers / bare (minima, less sensitive to a busy machine): {mins['helpers'] / mins['bare']:.2f}")
    cpu_ratio = t["cpu_s"]["helpers"] / t["cpu_s"]["bare"]
    print(f"ratio helpers / bare (process CPU time, medians): {cpu_ratio:.2f}   goal <= {RATIO_GOAL:.2f}  "
          f"{'ok' if cpu_ratio <= RATIO_GOAL else 'OVER'}")

    L = time_long_token()
    print()
    print(f"2. one token at T = {T_LONG} (fastest of {N_REPEATS}; the two agree to {L['diff']:.1e})")
    print(f"{'decode_step with the cache':34s} {1000 * L['cached']:9.3f} ms")
    print(f"{'recompute (causal GQA, all T)':34s} {1000 * L['full']:9.1f} ms")
    print(f"ratio recompute / cached: {L['full'] / L['cached']:.0f}")


if __name__ == "__main__":
    main()
