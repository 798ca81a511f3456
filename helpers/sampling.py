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

from helpers.generation import KVCache, decode_step
from helpers.language_model import (
    GPTConfig,
    _check_config,
    _check_params,
    _check_tokens,
    _fill_caches,
    _forward,
    _sample,
)
from helpers.layers import _gelu, _layer_norm
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


def _step(config: GPTConfig, p: dict, token: int, position: int, caches: list[KVCache]) -> tuple[np.ndarray, list]:
    """language_model's cached step (the same operations, so the same logits), keeping each layer's attention row."""
    x = p["tok_emb"][token] + p["pos_emb"][position]  # (d_model,)
    rows = []
    for layer, cache in enumerate(caches):
        q = f"l{layer}."
        h1 = _layer_norm(x, p[q + "ln1.g"], p[q + "ln1.b"])[0]  # (d_model,)
        out, w = decode_step(h1, cache, p[q + "W_q"], p[q + "W_k"], p[q + "W_v"],
                             config.n_heads, config.n_heads, p[q + "W_o"])  # (d_model,), (h, t)
        rows.append(w)
        x = x + out
        h2 = _layer_norm(x, p[q + "ln2.g"], p[q + "ln2.b"])[0]  # (d_model,)
        x = x + _gelu(h2 @ p[q + "W_1"] + p[q + "b_1"])[0] @ p[q + "W_2"] + p[q + "b_2"]  # (d_model,)
    return _layer_norm(x, p["ln_f.g"], p["ln_f.b"])[0] @ p["W_out"], rows  # (V,), L × (h, t)


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
    """``generate(config, params, prompt, n_new, temperature=..., top_k=..., seed=...)`` with 09's cache, keeping
    every step's logits, distribution and attention rows (the same tokens: the same operations and draws).

    Within the context only: len(prompt) + n_new <= context (a cache cannot slide past it; see ``generate``)."""
    config = _check_config(config)
    params = _check_params(config, params)
    prompt = _check_tokens(prompt, "prompt", config, ndims=(1,))
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
    logits, caches = _fill_caches(config, params, prompt)  # (V,): the prompt at once
    full = _forward(config, params, prompt[None], keep=True)[1]  # the prompt's attention weights, for row 0
    rows = [c[5][0, :, -1, :] for c in full[:-1]]  # L × (h, T0): the last prompt character's rows
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
        out.append(_sample(logits, temperature, top_k, rng))
        logits, rows = _step(config, params, out[-1], t, caches)  # (V,), L × (h, t + 1)
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
