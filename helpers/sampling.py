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
greedy). ``next_char_probs`` is that distribution (``helpers.language_model.next_token_probs_unchecked``, with
checked arguments); ``trace_generation`` runs the same loop through the model's own cached step (09's
``KVCache``, ``language_model.block``) and keeps, at every step, the distribution and each head's attention row
of the newest character, so that a step slider can re-use them; ``draw_margins`` says how close each choice was
to going another way.
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
    forward_unchecked,
    new_caches,
    next_token_probs_unchecked,
    sample_next,
)
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
    z = as_numeric(logits, "logits", min_ndim=1)  # (V,)
    if z.ndim != 1:
        raise ValueError(f"logits must be one position's (V,), got shape {z.shape}")
    temperature, top_k = _check_sampling(temperature, top_k, len(z))
    return next_token_probs_unchecked(z, temperature, top_k)  # (V,)


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
    """``generate(config, params, prompt, n_new, temperature=..., top_k=..., seed=...)`` with 09's key/value cache
    (``KVCache``, one per layer), keeping every step's logits, distribution and attention rows.
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
    probs = np.empty((n_new + 1, V), dtype=np.float64)  # (n + 1, V)
    attention = np.full((n_new + 1, L, H, window), np.nan)  # (n + 1, L, h, window)
    n_keys = np.empty(n_new + 1, dtype=np.int64)  # (n + 1,)
    caches = new_caches(config)  # one KVCache per layer
    out, new = prompt.tolist(), prompt.tolist()  # the prompt at once, then one character per step
    for k in range(n_new + 1):
        t = len(out)
        logits, fwd = forward_unchecked(config, params, np.asarray([new], np.intp), keep=True, caches=caches,
                                        start=t - len(new))  # (1, len(new), V)
        logits_all[k] = logits[0, -1]
        probs[k] = next_token_probs_unchecked(logits[0, -1], temperature, top_k)  # (V,)
        keep = min(t, window)
        for layer, values in enumerate(fwd.blocks):
            attention[k, layer, :, window - keep:] = values.P[0, :, -1, t - keep:]  # (h, keep) the newest's row
        n_keys[k] = keep
        if k < n_new:
            out.append(sample_next(logits[0, -1], temperature, top_k, rng))
            new = out[-1:]
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
        p = next_token_probs_unchecked(row, temperature, top_k)  # (V,)
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
