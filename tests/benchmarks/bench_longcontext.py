"""What notebook 10's helpers cost: linear attention's recurrent form against softmax attention, and the
latent cache against multi-head and grouped-query caches.

Run: ``python tests/benchmarks/bench_longcontext.py`` (not collected by pytest; no assertion on time).

1. Linear attention, recurrent form (``linear_attention_recurrent``), d = 64, float64, causal, against
   causal softmax attention (``scaled_dot_product_attention`` with ``causal_mask``), at T = 1024 ... 8192:
   - peak memory (tracemalloc) at T = 8192; goal: the recurrent form at most 5 % of softmax's;
   - time: the fastest of N_REPEATS interleaved runs per size, both wall-clock and this process's CPU
     time (a busy machine changes the second much less); goal: the recurrent form's slope on log-log
     axes from T = 1024 to 8192 at most 1.2 (time proportional to T).
2. Cache bytes per token (16-bit numbers) of one configuration, DeepSeek-V2 (arXiv 2405.04434: 60 layers,
   128 heads of d_head = 128, latent d_c = 512, decoupled rotary key 64): MHA, GQA with 8 key/value heads,
   MQA, and latent attention (``latent_cache_bytes``); latent_attention(absorb=True) attends to exactly
   that cache (the absorbed and plain forms are checked to agree on a small random layer).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from anywhere in a checkout

from machine import describe  # noqa: E402

from helpers.attention import causal_mask, scaled_dot_product_attention  # noqa: E402
from helpers.generation import kv_cache_bytes  # noqa: E402
from helpers.longcontext import latent_attention, latent_cache_bytes, linear_attention_recurrent  # noqa: E402
from helpers.measure import fastest_seconds, loglog_slope, peak_bytes  # noqa: E402

TS, D = (1024, 2048, 4096, 8192), 64
N_REPEATS = 3
MEM_GOAL, SLOPE_GOAL = 0.05, 1.2
DEEPSEEK_V2 = {"n_layers": 60, "n_heads": 128, "d_head": 128, "d_c": 512, "d_rope": 64}


def linear_vs_softmax() -> dict:
    rng = np.random.default_rng(0)
    QKV = {T: [rng.standard_normal((T, D)) for _ in range(3)] for T in TS}  # (T, d) each
    masks = {T: causal_mask(T) for T in TS}  # built outside what is measured
    runs = {"softmax": lambda T: scaled_dot_product_attention(*QKV[T], mask=masks[T]),
            "recurrent": lambda T: linear_attention_recurrent(*QKV[T])}
    wall = {(n, T): np.inf for n in runs for T in TS}
    cpu = dict(wall)
    for _ in range(N_REPEATS):  # interleaved: a busy moment of the machine hits every size and both versions
        for T in TS:
            for name, run in runs.items():
                wall[name, T] = min(wall[name, T], fastest_seconds(run, T, repeats=1))
                cpu[name, T] = min(cpu[name, T], fastest_seconds(run, T, repeats=1, cpu=True))
    peak = {name: peak_bytes(run, TS[-1]) for name, run in runs.items()}
    return {"wall": wall, "cpu": cpu, "peak": peak, "runs": runs}


def latent_check() -> float:
    """Largest |absorbed − plain| over outputs and weights of a random layer (h = 8, d_c = 16, T = 64)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(64, 128)) / 4  # (T, d_in)
    W_q, W_dkv = rng.normal(size=(128, 128)) / 12, rng.normal(size=(128, 16)) / 12
    W_uk, W_uv, W_o = rng.normal(size=(16, 128)) / 4, rng.normal(size=(16, 128)) / 4, rng.normal(size=(128, 128)) / 12
    plain, absorbed = (latent_attention(X, W_q, W_dkv, W_uk, W_uv, 8, W_o=W_o, mask=causal_mask(64), absorb=a)
                       for a in (False, True))
    return max(float(np.abs(p - a).max()) for p, a in zip(plain, absorbed, strict=True))


def main() -> None:
    print(f"before: {describe()}; NumPy {np.__version__}")  # which machine, how busy
    r = linear_vs_softmax()
    print()
    print(f"1. causal attention, d = {D}, float64: softmax (scaled_dot_product_attention + causal_mask) against "
          f"linear_attention_recurrent; fastest of {N_REPEATS} interleaved runs")
    head = f"{'T':>6} {'softmax wall ms':>16} {'recurrent wall ms':>18} {'softmax cpu ms':>15} {'recurrent cpu ms':>17}"
    print(head)
    print("-" * len(head))
    for T in TS:
        print(f"{T:>6} {1000 * r['wall']['softmax', T]:16.1f} {1000 * r['wall']['recurrent', T]:18.1f} "
              f"{1000 * r['cpu']['softmax', T]:15.1f} {1000 * r['cpu']['recurrent', T]:17.1f}")
    for clock in ("wall", "cpu"):
        s = loglog_slope(TS, [r[clock]["recurrent", T] for T in TS])
        s_soft = loglog_slope(TS, [r[clock]["softmax", T] for T in TS])
        flag = "ok" if s <= SLOPE_GOAL else "OVER"
        print(f"recurrent time slope T = {TS[0]} … {TS[-1]} ({clock}): {s:.2f}   goal <= {SLOPE_GOAL}  {flag}"
              f"   (softmax: {s_soft:.2f})")
    share = r["peak"]["recurrent"] / r["peak"]["softmax"]
    flag = "ok" if share <= MEM_GOAL else "OVER"
    print(f"peak memory at T = {TS[-1]} (tracemalloc): softmax {r['peak']['softmax'] / 2**20:.1f} MiB, recurrent "
          f"{r['peak']['recurrent'] / 2**20:.2f} MiB = {100 * share:.1f} %   goal <= {100 * MEM_GOAL:.0f} %  {flag}")

    c = DEEPSEEK_V2
    print()
    print(f"2. cache bytes per token, 16-bit numbers, DeepSeek-V2's size ({c['n_layers']} layers, {c['n_heads']} heads "
          f"of d_head = {c['d_head']}, d_c = {c['d_c']}, rotary key {c['d_rope']})")
    rows = {"MHA (128 key/value heads)": kv_cache_bytes(c["n_layers"], c["n_heads"], c["d_head"], 1),
            "GQA (8 key/value heads)": kv_cache_bytes(c["n_layers"], 8, c["d_head"], 1),
            "MQA (1 key/value head)": kv_cache_bytes(c["n_layers"], 1, c["d_head"], 1),
            "latent_attention(absorb=True)": latent_cache_bytes(c["n_layers"], c["d_c"], 1, d_rope=c["d_rope"])}
    latent = rows["latent_attention(absorb=True)"]
    head = f"{'cache':32s} {'bytes/token':>12s} {'× latent':>9s}"
    print(head)
    print("-" * len(head))
    for name, b in rows.items():
        print(f"{name:32s} {b:12,d} {b / latent:9.2f}")
    print(f"absorbed vs plain latent attention on a random layer (h = 8, d_c = 16, T = 64): max |difference| "
          f"{latent_check():.1e}")


if __name__ == "__main__":
    main()
