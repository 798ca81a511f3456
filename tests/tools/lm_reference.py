"""Write tests/data/lm_reference.npz: what the committed model computes, saved once before a refactor.

    .venv/bin/python tests/tools/lm_reference.py      # only when the model itself changes (make model)

tests/test_lm_reference.py recomputes every entry with the current code and compares: the float64 numbers to a
relative difference of 1e-12, the float32 ones to float32 rounding, the generated texts exactly. Small on
purpose (about 20 KB): logits at two positions of two validation windows, not at every position.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for helpers

from helpers.heads import position_losses, run_with_weights  # noqa: E402
from helpers.language_model import (  # noqa: E402
    attention_weights,
    forward,
    generate,
    load_corpus,
    load_model,
    loss_and_grads,
    stream_losses,
)
from helpers.sampling import trace_generation  # noqa: E402

PATH = Path(__file__).resolve().parents[1] / "data" / "lm_reference.npz"
N = 48  # characters per validation window
KEEP = np.array([5, 47])  # the positions whose logits are kept (each depends on every earlier one)
PROMPT = "The attention weights of "
GREEDY = dict(n_new=40, temperature=0.0)
SAMPLED = dict(n_new=40, temperature=0.8, top_k=20, seed=3)
ABLATE = ((1, 1), (0, 2))


def compute() -> dict[str, np.ndarray]:
    """Every reference array, from the code as it is now."""
    config, params, tok = load_model()  # float32, as the notebooks use it
    p64 = {n: W.astype(np.float64) for n, W in params.items()}  # as the explorers use it
    _, valid = load_corpus()
    ids = np.stack([tok.encode(valid[s:s + N + 1], errors="replace") for s in (1000, 20000)])  # (2, N + 1)
    tokens, targets = ids[:, :-1], ids[:, 1:]  # (2, N) each
    prompt = tok.encode(PROMPT)
    out = {}
    out["logits64"] = forward(config, p64, tokens)[:, KEEP]  # (2, 2, V) float64
    out["logits32"] = forward(config, params, tokens)[:, KEEP]  # (2, 2, V) float32
    out["ablated64"] = forward(config, p64, tokens, ablate=ABLATE)[:, -1]  # (2, V)
    w = attention_weights(config, p64, tokens[0])  # (L, h, N, N)
    out["attention_last_row64"] = w[:, :, -1, -16:]  # (L, h, 16) the last query's row in every head, last 16 keys
    loss, grads = loss_and_grads(config, p64, tokens, targets)
    direction = np.random.default_rng(0)
    out["loss64"] = np.array(loss)
    out["grad_norms64"] = np.array([np.linalg.norm(g) for g in grads.values()])  # (n_params,)
    out["grad_projections64"] = np.array([np.sum(g * direction.standard_normal(g.shape)) for g in grads.values()])
    out["stream64"] = stream_losses(config, p64, tokens[1], window=16, sinks=2)  # (N − 1,)
    out["position_losses64"] = position_losses(config, p64, ids[0], ablate=((1, 1),))  # (N,)
    logits, weights = run_with_weights(config, p64, tokens[1], ablate=((0, 0),))  # (N, V), (L, h, N, N)
    out["run_logits64"], out["run_weights_last_row64"] = logits[-1], weights[:, :, -1, -16:]
    for name, kw in (("greedy", GREEDY), ("sampled", SAMPLED)):
        for cache in (True, False):
            ids_out = generate(config, params, prompt, use_cache=cache, **kw)
            out[f"{name}_text_cache{int(cache)}"] = np.array(tok.decode(ids_out))
        out[f"{name}_text64"] = np.array(tok.decode(generate(config, p64, prompt, **kw)))
    long_prompt = tok.encode(valid[5000:5000 + config.context - 5], errors="replace")  # slides past the context
    out["sliding_text"] = np.array(tok.decode(generate(config, params, long_prompt, 12, temperature=0.8, seed=1)))
    trace = trace_generation(config, p64, prompt, 24, temperature=0.8, top_k=30, seed=5, window=16)
    out["trace_text64"] = np.array(tok.decode(trace.tokens))
    out["trace_logits64"] = trace.logits[[0, 24]]  # (2, V)
    out["trace_probs64"] = trace.probs[24]  # (V,)
    out["trace_attention64"] = trace.attention[[0, 24]]  # (2, L, h, window)
    out["trace_n_keys"] = trace.n_keys
    return out


if __name__ == "__main__":
    ref = compute()
    np.savez_compressed(PATH, **ref)
    print(f"wrote {PATH} ({PATH.stat().st_size:,} bytes): {', '.join(ref)}")
