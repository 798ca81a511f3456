"""Notebook 12's math around the small GPT of ``helpers.language_model``: the next-character distribution under
temperature and top-k, a traced generation (what the explorer shows), how far each draw was from changing,
dropout, and losses in bits.

Shape notation (as in ``helpers.language_model``):

    V        vocabulary size
    L        layers, h heads
    n        new characters generated
    t        characters the newest one attends to (at most ``window``)

``generate`` of ``helpers.language_model`` samples with ``softmax(logits / temperature)`` over the ``top_k``
largest logits, one uniform number of ``np.random.default_rng(seed)`` per character (none at temperature 0:
greedy). ``next_char_probs`` is that distribution; ``trace_generation`` runs the same loop with 09's cache and
keeps, at every step, the distribution and each head's attention row of the newest character, so that a step
slider can re-use them; ``draw_margins`` says how close each choice was to going another way.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from helpers.language_model import (
    GPTConfig,
    check_config,
    check_params,
    check_tokens,
    sample_next,
)
from helpers.layers import LN_EPS, gelu_unchecked
from helpers.validate import as_numeric, check_int, check_real, check_rng

__all__ = ["next_char_probs", "GenerationTrace", "trace_generation", "draw_margins", "dropout", "nats_to_bits"]


def _check_sampling(temperature: object, top_k: object, V: int) -> tuple[float, int | None]:
    temperature = check_real(temperature, "temperature", low=0.0, low_open=False, rule="a finite number >= 0")
    if top_k is not None:
        top_k = check_int(top_k, "top_k", minimum=1, maximum=V)
    return temperature, top_k


def next_char_probs(logits: object, temperature: float = 1.0, top_k: int | None = None) -> np.ndarray:
    """The distribution ``generate`` draws from, (V,) float64: softmax(logits / temperature) over the ``top_k``
    largest logits (ties with the k-th kept), 0 elsewhere; temperature 0 puts all of it on the argmax."""
    z = as_numeric(logits, "logits", min_ndim=1).astype(np.float64)  # (V,)
    if z.ndim != 1:
        raise ValueError(f"logits must be one position's (V,), got shape {z.shape}")
    temperature, top_k = _check_sampling(temperature, top_k, len(z))
    if temperature == 0:
        p = np.zeros_like(z)  # (V,)
        p[int(np.argmax(z))] = 1.0
        return p
    z = z / temperature  # (V,)
    if top_k is not None and top_k < len(z):
        kth = np.partition(z, -top_k)[-top_k]  # the k-th largest
        z = np.where(z >= kth, z, -np.inf)  # (V,)
    e = np.exp(z - z.max())  # (V,) 0 outside the top k
    return e / e.sum()


class GenerationTrace(NamedTuple):
    """What one generation did: the tokens (T0 + n,), the logits (n + 1, V) and the distribution (n + 1, V) after
    each of the characters T0 − 1 … T0 + n − 1 (row k: after the prompt and k new characters; row n predicts the
    character after the last), and each layer's and head's attention row of that newest character over its last
    ``window`` keys (n + 1, L, h, window), left-padded with NaN where there are fewer keys (``n_keys`` (n + 1,))."""

    tokens: np.ndarray
    logits: np.ndarray
    probs: np.ndarray
    attention: np.ndarray
    n_keys: np.ndarray
    n_prompt: int


def _ln(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LayerNorm of one token (d_model,): helpers.layers' formula, without its batch bookkeeping."""
    xc = x - x.mean()  # (d_model,)
    return xc * (1.0 / math.sqrt(float(xc @ xc) / len(xc) + LN_EPS)) * g + b


class _Cache:
    """Every layer's keys and values (L, h, n, d_head), preallocated: 09's KVCache, one buffer for all layers
    (a step writes one position and reads the first t; no checks per step: trace_generation checked once)."""

    def __init__(self, config: GPTConfig, p: dict, n: int, dtype: np.dtype) -> None:
        L, H, dh = config.n_layers, config.n_heads, config.d_head
        self.K = np.empty((L, H, n, dh), dtype)  # (L, h, n, d_head)
        self.V = np.empty((L, H, n, dh), dtype)
        self.W_qkv = [np.concatenate([p[f"l{i}.W_q"], p[f"l{i}.W_k"], p[f"l{i}.W_v"]], axis=1)
                      for i in range(L)]  # L × (d_model, 3·d_model), as language_model's forward pass
        self.scale = 1.0 / math.sqrt(dh)


def _step(config: GPTConfig, p: dict, token: int, t: int, cache: _Cache) -> tuple[np.ndarray, list]:
    """logits (V,) of one new token at position t (0-based), its keys and values written into the cache, and each
    layer's attention row (h, t + 1): the operations of language_model's cached step."""
    D, H, dh = config.d_model, config.n_heads, config.d_head
    x = p["tok_emb"][token] + p["pos_emb"][t]  # (d_model,)
    rows = []
    for layer in range(config.n_layers):
        q = f"l{layer}."
        qkv = _ln(x, p[q + "ln1.g"], p[q + "ln1.b"]) @ cache.W_qkv[layer]  # (3·d_model,)
        Q = qkv[:D].reshape(H, dh) * cache.scale  # (h, d_head) already scaled, as in forward
        cache.K[layer, :, t] = qkv[D:2 * D].reshape(H, dh)  # (h, d_head)
        cache.V[layer, :, t] = qkv[2 * D:].reshape(H, dh)
        K, V = cache.K[layer, :, :t + 1], cache.V[layer, :, :t + 1]  # (h, t + 1, d_head) each
        s = np.einsum("hd,htd->ht", Q, K)  # (h, t + 1) scaled scores
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)  # (h, t + 1) attention weights
        rows.append(w)
        x = x + np.einsum("ht,htd->hd", w, V).reshape(D) @ p[q + "W_o"]  # (h, d_head) -> (d_model,)
        h2 = _ln(x, p[q + "ln2.g"], p[q + "ln2.b"])  # (d_model,)
        x = x + gelu_unchecked(h2 @ p[q + "W_1"] + p[q + "b_1"])[0] @ p[q + "W_2"] + p[q + "b_2"]  # (d_model,)
    return _ln(x, p["ln_f.g"], p["ln_f.b"]) @ p["W_out"], rows  # (V,), L × (h, t + 1)


def trace_generation(
    config: GPTConfig,
    params: dict[str, np.ndarray],
    prompt: object,
    n_new: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int = 0,
    window: int = 32,
) -> GenerationTrace:
    """``generate(config, params, prompt, n_new, temperature=..., top_k=..., seed=...)`` with a key/value cache
    (09's, one preallocated buffer for every layer), keeping every step's logits, distribution and attention rows.
    The same draws; the same tokens as ``generate`` unless a draw lands within rounding of an edge
    (``draw_margins`` says how far each was).

    Within the context only: len(prompt) + n_new <= context (a cache cannot slide past it; see ``generate``)."""
    config = check_config(config)
    params = check_params(config, params)
    prompt = check_tokens(prompt, "prompt", config, ndims=(1,))
    n_new = check_int(n_new, "n_new", minimum=0)
    temperature, top_k = _check_sampling(temperature, top_k, config.vocab_size)
    seed = check_int(seed, "seed", minimum=0)
    window = check_int(window, "window", minimum=1)
    T0 = len(prompt)
    if T0 + n_new > config.context:
        raise ValueError(f"prompt has {T0} tokens and n_new = {n_new}: {T0 + n_new} is more than context = "
                         f"{config.context}, past which a cache cannot slide (generate recomputes there)")
    L, H, V = config.n_layers, config.n_heads, config.vocab_size
    rng = np.random.default_rng(seed)
    logits_all = np.empty((n_new + 1, V), dtype=np.float64)  # (n + 1, V)
    attention = np.full((n_new + 1, L, H, window), np.nan)  # (n + 1, L, h, window)
    n_keys = np.empty(n_new + 1, dtype=np.int64)  # (n + 1,)
    cache = _Cache(config, params, T0 + n_new, params["tok_emb"].dtype)
    for t, token in enumerate(prompt.tolist()):  # the prompt one token at a time: small products, no threads
        logits, rows = _step(config, params, token, t, cache)  # (V,), L × (h, t + 1)
    out = list(prompt.tolist())
    for k in range(n_new + 1):
        t = len(out)
        keep = min(t, window)
        logits_all[k] = logits
        for layer, w in enumerate(rows):
            attention[k, layer, :, window - keep:] = w[:, t - keep:]  # (h, keep) the last keep keys
        n_keys[k] = keep
        if k == n_new:
            break
        out.append(sample_next(logits, temperature, top_k, rng))
        logits, rows = _step(config, params, out[-1], t, cache)  # (V,), L × (h, t + 1)
    probs = np.stack([next_char_probs(z, temperature, top_k) for z in logits_all])  # (n + 1, V)
    return GenerationTrace(np.asarray(out, np.int64), logits_all, probs, attention, n_keys, T0)


def draw_margins(logits: object, chosen: object, temperature: float = 1.0, top_k: int | None = None,
                 seed: int = 0) -> np.ndarray:
    """How far each choice was from going another way, (n,), for logits (n, V) and the chosen ids (n,).

    Greedy (temperature 0): the gap between the largest and second-largest logit. Sampling: the distance, in
    probability, between the draw (the seeded uniform number times the total) and the nearest edge of the chosen
    character's interval of the cumulative sum. A rounding change smaller than the margin cannot change the text."""
    z = as_numeric(logits, "logits", min_ndim=2).astype(np.float64)  # (n, V)
    chosen = np.asarray(chosen)
    if z.ndim != 2 or chosen.shape != z.shape[:1] or chosen.dtype.kind not in "iu":
        raise ValueError(f"logits must be (n, V) and chosen n integer ids; got shapes {z.shape} and {chosen.shape} "
                         f"({chosen.dtype})")
    temperature, top_k = _check_sampling(temperature, top_k, z.shape[1])
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    margins = np.empty(len(z))  # (n,)
    for i, (row, c) in enumerate(zip(z, chosen.tolist(), strict=True)):
        if temperature == 0:
            top2 = np.sort(row)[-2:]  # (2,)
            margins[i] = top2[1] - top2[0] if int(np.argmax(row)) == c else -np.inf
            continue
        p = next_char_probs(row, temperature, top_k)  # (V,)
        cdf = np.cumsum(p)  # (V,)
        u = rng.random() * cdf[-1]
        lo = cdf[c - 1] if c > 0 else 0.0
        margins[i] = min(u - lo, cdf[c] - u) if lo <= u < cdf[c] else -np.inf  # -inf: not this draw's character
    return margins


def dropout(x: object, p: float, rng: np.random.Generator) -> np.ndarray:
    """Inverted dropout: each entry set to 0 with probability p, the others divided by 1 − p (mean unchanged)."""
    x = as_numeric(x, "x")
    p = check_real(p, "p", low=0.0, high=1.0, low_open=False, rule="a probability 0 <= p < 1 (p = 1 drops everything)")
    rng = check_rng(rng)
    keep = rng.random(x.shape) >= p  # same shape as x
    return np.where(keep, x / (1.0 - p), 0.0)


def nats_to_bits(loss: object) -> float:
    """A loss in nats (natural log) as bits (log base 2): divide by ln 2."""
    return check_real(loss, "loss", rule="a finite number") / math.log(2)
