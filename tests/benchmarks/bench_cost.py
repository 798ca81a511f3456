"""What the checks cost: helpers' multi_head_attention against the same math in bare NumPy, and the
peak memory of tiled_attention against scaled_dot_product_attention.

Run: ``python tests/benchmarks/bench_cost.py`` (not collected by pytest; no assertion on time).

1. Time. multi_head_attention at T = 1024, d_model = 512, h = 8, float32, with W_o, against
   ``bare_multi_head_attention`` below: the projections, the per-head scores and scaling, an
   in-place max-subtract / exp / sum softmax, the weighted sum and W_o, with no checks at all.
   The two run interleaved, N_REPEATS times each after one warm-up; the table prints the medians
   and their ratio (goal: at most 1.15). Wall time depends on whatever else runs on the machine;
   the ratio, measured in one run, much less. If torch imports, nn.MultiheadAttention is timed
   beside them for information only (torch is not a dependency).
2. Memory. tracemalloc's peak during scaled_dot_product_attention and tiled_attention at
   T = 4096, d = 64, block 128, float64 (goal: tiled at most 10 % of full). NumPy reports its
   array buffers to tracemalloc, so the peak is the largest total of live arrays.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from anywhere in a checkout

from machine import describe  # noqa: E402

from helpers.attention import (  # noqa: E402
    multi_head_attention,
    scaled_dot_product_attention,
    tiled_attention,
)

T, D_MODEL, N_HEADS = 1024, 512, 8
N_REPEATS = 15
RATIO_GOAL = 1.15
MEM_T, MEM_D, MEM_BLOCK = 4096, 64, 128
MEM_GOAL = 0.10


def bare_multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    """The same computation as multi_head_attention, without a single check."""
    T, d_model = X.shape[0], W_q.shape[1]
    d_head = d_model // n_heads
    Q = (X @ W_q).reshape(T, n_heads, d_head).transpose(1, 0, 2)  # (T, d_model) -> (h, T, d_head)
    K = (X @ W_k).reshape(T, n_heads, d_head).transpose(1, 0, 2)  # (h, T, d_head)
    V = (X @ W_v).reshape(T, n_heads, d_head).transpose(1, 0, 2)  # (h, T, d_head)
    S = Q @ K.transpose(0, 2, 1)  # (h, T, d_head) @ (h, d_head, T) -> (h, T, T)
    S *= S.dtype.type(1.0 / math.sqrt(d_head))
    S -= S.max(axis=-1, keepdims=True)  # (h, T, T)
    np.exp(S, out=S)
    S /= S.sum(axis=-1, keepdims=True)  # (h, T, T) the attention weights
    out = S @ V  # (h, T, T) @ (h, T, d_head) -> (h, T, d_head)
    concat = out.transpose(1, 0, 2).reshape(T, d_model)  # (h, T, d_head) -> (T, d_model)
    return concat @ W_o, S  # (T, d_model) @ (d_model, d_model) -> (T, d_model)


def _torch_timer(X, W_q, W_k, W_v, W_o, n_heads):
    """A callable running nn.MultiheadAttention with the same matrices, or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    mha = torch.nn.MultiheadAttention(X.shape[1], n_heads, bias=False, batch_first=True)
    with torch.no_grad():  # torch stores W as (d_out, d_in): y = x Wᵀ
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([W_q, W_k, W_v], axis=1).T.copy()))
        mha.out_proj.weight.copy_(torch.from_numpy(W_o.T.copy()))
    x = torch.from_numpy(X)[None]  # (1, T, d_model)

    def run():
        with torch.no_grad():
            return mha(x, x, x, need_weights=True, average_attn_weights=False)

    return run


def time_mha() -> dict:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(T, D_MODEL)).astype(np.float32)  # (T, d_model)
    Ws = [(rng.normal(size=(D_MODEL, D_MODEL)) / math.sqrt(D_MODEL)).astype(np.float32) for _ in range(4)]
    W_q, W_k, W_v, W_o = Ws

    def helpers_run():
        return multi_head_attention(X, W_q, W_k, W_v, n_heads=N_HEADS, W_o=W_o)

    def bare_run():
        return bare_multi_head_attention(X, W_q, W_k, W_v, W_o, N_HEADS)

    (out_h, w_h), (out_b, w_b) = helpers_run(), bare_run()  # warm-up, and the same numbers?
    diff = max(float(np.abs(out_h - out_b).max()), float(np.abs(w_h - w_b).max()))
    if diff > 1e-5:
        raise RuntimeError(f"the bare version computes something else: max difference {diff:.3g}")

    runs = {"helpers": helpers_run, "bare": bare_run}
    torch_run = _torch_timer(X, W_q, W_k, W_v, W_o, N_HEADS)
    if torch_run is not None:
        torch_run()
        runs["torch"] = torch_run
    times = {name: [] for name in runs}
    for _ in range(N_REPEATS):  # interleaved: a slow moment of the machine hits every version
        for name, run in runs.items():
            t0 = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t0)
    return {"median_ms": {n: 1000 * statistics.median(t) for n, t in times.items()},
            "min_ms": {n: 1000 * min(t) for n, t in times.items()}, "diff": diff}


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure_memory() -> dict:
    rng = np.random.default_rng(1)
    Q, K, V = (rng.normal(size=(MEM_T, MEM_D)) for _ in range(3))  # (T, d) float64
    full = _peak_bytes(lambda: scaled_dot_product_attention(Q, K, V))
    tiled = _peak_bytes(lambda: tiled_attention(Q, K, V, MEM_BLOCK))
    return {"full": full, "tiled": tiled}


def main() -> None:
    print(f"before: {describe()}; NumPy {np.__version__}")  # which machine, how busy
    t = time_mha()
    med, mins = t["median_ms"], t["min_ms"]
    ratio = med["helpers"] / med["bare"]
    print()
    print(f"1. multi_head_attention, T={T}, d_model={D_MODEL}, h={N_HEADS}, float32, with W_o "
          f"({N_REPEATS} interleaved repeats; helpers and bare agree to {t['diff']:.1e})")
    head = f"{'version':34s} {'median ms':>9s} {'min ms':>7s}"
    print(head)
    print("-" * len(head))
    print(f"{'helpers.multi_head_attention':34s} {med['helpers']:9.1f} {mins['helpers']:7.1f}")
    print(f"{'bare NumPy':34s} {med['bare']:9.1f} {mins['bare']:7.1f}")
    if "torch" in med:
        print(f"{'torch nn.MultiheadAttention (info)':34s} {med['torch']:9.1f} {mins['torch']:7.1f}")
    else:
        print(f"{'torch nn.MultiheadAttention (info)':34s} {'n/a':>9s} {'':7s}  (torch not installed)")
    flag = "ok" if ratio <= RATIO_GOAL else "OVER"
    print(f"ratio helpers / bare (medians): {ratio:.2f}   goal <= {RATIO_GOAL:.2f}  {flag}")
    print(f"ratio helpers / bare (minima, less sensitive to a busy machine): {mins['helpers'] / mins['bare']:.2f}")

    m = measure_memory()
    share = m["tiled"] / m["full"]
    print()
    print(f"2. peak memory (tracemalloc), T={MEM_T}, d={MEM_D}, block {MEM_BLOCK}, float64")
    head = f"{'function':34s} {'peak MiB':>9s}"
    print(head)
    print("-" * len(head))
    print(f"{'scaled_dot_product_attention':34s} {m['full'] / 2**20:9.1f}")
    print(f"{'tiled_attention':34s} {m['tiled'] / 2**20:9.1f}")
    flag = "ok" if share <= MEM_GOAL else "OVER"
    print(f"ratio tiled / full: {100 * share:.1f} %   goal <= {100 * MEM_GOAL:.0f} %  {flag}")


if __name__ == "__main__":
    main()
