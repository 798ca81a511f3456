"""Speed of helpers.language_model, printed (never asserted): one training step against PyTorch eager, and
characters per second generated with and without the cache.

    PYTHONPATH=. python tests/benchmarks/bench_language_model.py

The training step is issue 26's size: B = 16, T = 128, d_model = 128, 4 heads, 2 layers, d_ff = 512, V = 96,
float32, forward and backward (``loss_and_grads``), against the same model, the same parameters and the same
batch in PyTorch eager (``loss.backward()``) with the same number of threads (OPENBLAS_NUM_THREADS, else
one per CPU). PyTorch is optional: without it, the benchmark says how to install it.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # machine.py beside this file
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for helpers

from machine import describe  # noqa: E402

from helpers.language_model import (  # noqa: E402
    MODEL_PATH,
    GPTConfig,
    generate,
    init_params,
    load_model,
    loss_and_grads,
)

CONFIG = GPTConfig(vocab_size=96, context=128, d_model=128, n_heads=4, n_layers=2, d_ff=512)
B = 16


def _threads() -> int:
    """The BLAS threads NumPy uses here: OPENBLAS_NUM_THREADS if set, else one per CPU (OpenBLAS's default)."""
    value = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    return int(value) if value else (os.cpu_count() or 1)


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def torch_step(config: GPTConfig, params: dict, tokens: np.ndarray, targets: np.ndarray):
    """A function running one forward and backward of the same model in PyTorch eager, and its loss."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(_threads())
    P = {n: torch.tensor(W, requires_grad=True) for n, W in params.items()}
    tok = torch.tensor(tokens)
    tgt = torch.tensor(targets)
    Bt, T = tokens.shape
    H, dh = config.n_heads, config.d_model // config.n_heads
    mask = torch.ones(T, T, dtype=torch.bool).tril()

    def loss_fn():
        x = P["tok_emb"][tok] + P["pos_emb"][:T]  # (B, T, d_model)
        for layer in range(config.n_layers):
            q = f"l{layer}."
            h = F.layer_norm(x, (config.d_model,), P[q + "ln1.g"], P[q + "ln1.b"], eps=1e-5)
            Q = (h @ P[q + "W_q"]).view(Bt, T, H, dh).transpose(1, 2)  # (B, h, T, d_head)
            K = (h @ P[q + "W_k"]).view(Bt, T, H, dh).transpose(1, 2)
            V = (h @ P[q + "W_v"]).view(Bt, T, H, dh).transpose(1, 2)
            S = (Q @ K.transpose(-1, -2)) / math.sqrt(dh)  # (B, h, T, T)
            A = torch.softmax(S.masked_fill(~mask, float("-inf")), dim=-1)
            O = (A @ V).transpose(1, 2).reshape(Bt, T, config.d_model)  # (B, T, d_model)
            x = x + O @ P[q + "W_o"]
            h = F.layer_norm(x, (config.d_model,), P[q + "ln2.g"], P[q + "ln2.b"], eps=1e-5)
            x = x + F.gelu(h @ P[q + "W_1"] + P[q + "b_1"], approximate="tanh") @ P[q + "W_2"] + P[q + "b_2"]
        h = F.layer_norm(x, (config.d_model,), P["ln_f.g"], P["ln_f.b"], eps=1e-5)
        return F.cross_entropy((h @ P["W_out"]).view(-1, config.vocab_size), tgt.view(-1))

    def step():
        for W in P.values():
            W.grad = None
        loss = loss_fn()
        loss.backward()
        return loss

    return step, float(loss_fn().detach())


def main() -> None:
    print(describe())
    print(f"NumPy {np.__version__}; threads for NumPy's BLAS and for PyTorch: {_threads()} "
          "(set OPENBLAS_NUM_THREADS to change both)")
    rng = np.random.default_rng(0)
    params = init_params(CONFIG, seed=0)
    tokens = rng.integers(0, CONFIG.vocab_size, (B, CONFIG.context))  # (B, T)
    targets = rng.integers(0, CONFIG.vocab_size, (B, CONFIG.context))  # (B, T)
    numpy_step = lambda: loss_and_grads(CONFIG, params, tokens, targets)  # noqa: E731
    print(f"\none training step (loss_and_grads), {CONFIG}, B = {B}, float32:")
    try:
        import torch
    except ImportError:
        t_np = _median_time(numpy_step, 20)
        print(f"  NumPy by hand    {t_np * 1e3:7.1f} ms (median of 20)")
        print("  PyTorch eager    not installed: for this comparison, in a separate environment, "
              "`pip install torch` (a CPU build is enough; e.g. pip install torch==2.13.0), then run this file "
              "with that environment's python")
    else:
        step, loss_torch = torch_step(CONFIG, params, tokens, targets)
        loss_np, _ = numpy_step()
        rounds, per_block = 4, 8
        times_np, times_torch = [], []
        for _ in range(rounds):  # blocks in turn, so that both see the same load; a warm-up call before each
            numpy_step()
            times_np.append(_median_time(numpy_step, per_block))
            step()
            times_torch.append(_median_time(step, per_block))
        t_np, t_torch = float(np.median(times_np)), float(np.median(times_torch))
        ratios = np.array(times_np) / np.array(times_torch)  # (rounds,) each round's ratio
        print(f"  NumPy by hand    {t_np * 1e3:7.1f} ms")
        print(f"  PyTorch {torch.__version__} eager ({torch.get_num_threads()} threads) {t_torch * 1e3:7.1f} ms")
        print(f"  ratio NumPy / PyTorch {t_np / t_torch:.2f} (medians of {rounds} blocks of {per_block} steps each, "
              f"taken in turn; the blocks' ratios: {', '.join(f'{r:.2f}' for r in ratios)})")
        print(f"  same loss: NumPy {loss_np:.6f}, PyTorch {loss_torch:.6f}")

    if MODEL_PATH.exists():
        config, params, tokenizer = load_model()
        prompt = tokenizer.encode("Attention is ")
        what = "the committed model"
    else:
        config, params, prompt, what = CONFIG, params, np.arange(12), "an untrained model (no helpers/data/model.npz)"
    n_new = config.context - len(prompt)  # all within the context, where the cache applies
    print(f"\ngenerating {n_new} characters with {what} (temperature 0.8, prompt of {len(prompt)}):")
    for use_cache in (True, False):
        generate(config, params, prompt, 4, use_cache=use_cache)  # warm up
        t = _median_time(lambda c=use_cache: generate(config, params, prompt, n_new, temperature=0.8, use_cache=c), 3)
        print(f"  use_cache={use_cache!s:5}  {n_new / t:8.0f} characters per second ({t * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
