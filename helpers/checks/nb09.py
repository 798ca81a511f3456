"""Exercise checks for notebook 09 (generating text): cache bytes, which key/value head a query head reads,
one decoding step by hand.

The exercises' data, small enough to work by hand:

    EX_CONFIG           a made-up decoder (layers, query heads, key/value heads, d_head) and a context T,
                        for exercise 1: the bytes of its key/value cache in 16-bit numbers
    EX_H, EX_G          exercise 2: 8 query heads, 2 key/value heads
    EX_X                exercise 3: 4 tokens (T=4, d_in=3) of small integers; tokens 1-3 are already cached
    EX_W_Q              (3, 4): h = 2 query heads of d_head = 2
    EX_W_K, EX_W_V      (3, 2): g = 1 key/value head (multi-query attention)
    EX_K_CACHE, EX_V_CACHE  (1, 3, 2): the cache after tokens 1-3, what the student starts from

Each ``check_...`` computes the right answer with ``helpers`` and the typical wrong ones (K and V not both
counted, query heads instead of key/value heads, the new key not appended, 1/√(h·d_head), softmax over the
heads, ...), prints one verdict per answer ("✅ ..." or "❌ ...: what is wrong") and returns a Verdict
(truthy when right). None of them raises on any answer.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.attention import causal_mask, softmax
from helpers.checks import (
    NOT_ANSWERED,
    Verdict,
    check_array_any_shape,
    check_number,
    exercise_check,
    verdict,
)
from helpers.generation import KVCache, decode_step, grouped_query_attention, kv_cache_bytes

__all__ = [
    "EX_CONFIG",
    "EX_H",
    "EX_G",
    "EX_X",
    "EX_W_Q",
    "EX_W_K",
    "EX_W_V",
    "EX_K_CACHE",
    "EX_V_CACHE",
    "check_cache_bytes",
    "check_kv_head_of",
    "check_decode_step",
]

EX_CONFIG = {"n_layers": 24, "n_heads": 16, "n_kv_heads": 4, "d_head": 64, "T": 8192}  # made up, 16-bit numbers

EX_H, EX_G = 8, 2

EX_X = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])  # (T=4, d_in=3)
EX_W_Q = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0]])  # (3, h·d_head = 2·2)
EX_W_K = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])  # (3, g·d_head = 1·2)
EX_W_V = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])  # (3, 1·2)
_cache = KVCache(1, 2)
for _x in EX_X[:3]:  # tokens 1-3, decoded one by one
    decode_step(_x, _cache, EX_W_Q, EX_W_K, EX_W_V, 2, 1)
EX_K_CACHE = np.array(_cache.K)  # (g=1, 3, d_head=2) a writable copy
EX_V_CACHE = np.array(_cache.V)  # (1, 3, 2)
del _cache, _x


# --------------------------------------------------------------------------- exercise 1


@exercise_check
def check_cache_bytes(answer: object) -> Verdict:
    """Exercise 1: the bytes of EX_CONFIG's key/value cache at T tokens, batch 1, 2 bytes per number."""
    c = EX_CONFIG
    right = float(kv_cache_bytes(c["n_layers"], c["n_kv_heads"], c["d_head"], c["T"]))
    return check_number(answer, right, name="Exercise 1, bytes", hint="Hint: per layer, per key/value head, per "
                         "token, the cache holds d_head numbers of K and d_head of V, 2 bytes each.", mistakes={
        "half of it: the cache holds both K and V, and each 16-bit number takes 2 bytes; did you leave out "
        "one of these two factors of 2?": right / 2,
        "a quarter of it: count K and V (2) and 2 bytes per 16-bit number.": right / 4,
        f"you used the {c['n_heads']} query heads; the cache stores the {c['n_kv_heads']} key/value heads only "
        "(that is the point of grouped-query attention).": right * c["n_heads"] / c["n_kv_heads"],
        "these are bits, not bytes: divide by 8.": right * 8,
        "that is 4 bytes per number (float32); 16-bit numbers take 2.": right * 2,
        "that is one layer; every layer keeps its own keys and values.": right / c["n_layers"],
        "that is in MiB (2**20 bytes); the question asks for bytes.": right / 2**20,
        "that is in GiB (2**30 bytes); the question asks for bytes.": right / 2**30,
        "that is in MB (10**6 bytes); the question asks for bytes.": right / 1e6,
        "that is in GB (10**9 bytes); the question asks for bytes.": right / 1e9,
    })


# --------------------------------------------------------------------------- exercise 2


@exercise_check
def check_kv_head_of(answer: object) -> Verdict:
    """Exercise 2: for EX_H query heads and EX_G key/value heads, the key/value head (from 0) each query head reads."""
    name = "Exercise 2, key/value head of each query head"
    h, g = EX_H, EX_G
    i = np.arange(h)  # (h,) query heads, from 0
    right = i // (h // g)  # (h,) consecutive query heads share a key/value head
    hint = (f"Hint: {h} query heads, {g} key/value heads: each key/value head serves h // g = {h // g} "
            "consecutive query heads.")
    if answer is None or answer is Ellipsis:
        return verdict(False, name, f"{NOT_ANSWERED}. {hint}")
    mistakes = {
        "counted from 1; NumPy indexes the heads from 0 (query head 0 reads key/value head 0).": right + 1,
        "i % g deals the query heads out in turn (0, 1, 0, 1, …); grouped-query attention gives each key/value "
        "head a block of consecutive query heads: i // (h // g).": i % g,
        "i // g divides by the number of key/value heads; divide by the group size h // g.": i // g,
        "one number per key/value head; the question asks for one per query head (8 numbers).": np.arange(g),
        "these are the query heads of each group; the question asks, per query head, for its key/value head.":
            np.arange(h).reshape(g, h // g),
    }
    return check_array_any_shape(answer, right.astype(float), name=name,
                                 mistakes={k: np.asarray(v, dtype=float) for k, v in mistakes.items()}, hint=hint)


# --------------------------------------------------------------------------- exercise 3


def _step(scale: float, *, append: bool = True, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """One decoding step of token 4 on the exercise's cache, written out, with a chosen slip."""
    x = EX_X[3]  # (d_in,)
    q = (x @ EX_W_Q).reshape(2, 2)  # (h·d_head,) -> (h, d_head)
    K, V = EX_K_CACHE[0], EX_V_CACHE[0]  # (3, d_head) each
    if append:
        K, V = np.vstack([K, x @ EX_W_K]), np.vstack([V, x @ EX_W_V])  # (4, d_head)
    w = softmax(q @ K.T * scale, axis=axis)  # (h, d_head) @ (d_head, t) -> (h, t)
    return w, (w @ V).reshape(-1)  # (h, t) @ (t, d_head) -> (h, d_head) -> (h·d_head,)


@exercise_check
def check_decode_step(weights: object, output: object) -> Verdict:
    """Exercise 3: the attention weights (h, 4) and output (h·d_head,) of token 4, from the cache of tokens 1-3."""
    out_all, w_all = grouped_query_attention(EX_X, EX_W_Q, EX_W_K, EX_W_V, 2, 1, mask=causal_mask(4))
    right_w, right_o = w_all[:, 3, :], out_all[3]  # (h, 4), (4,): token 4's row
    s = 1 / math.sqrt(2)
    slips = {
        "the new token's own key and value are missing: append them to the cache first, then attend over all "
        "4 positions (a token may attend to itself).": _step(s, append=False),
        "not scaled: divide the scores by √d_head = √2.": _step(1.0),
        "scaled by 1/√(h·d_head) = 1/2; each head compares vectors of d_head = 2 numbers: divide by √2.":
            _step(0.5),
        "the softmax ran over the heads (axis 0); it runs over the keys, the last axis.": _step(s, axis=0),
    }
    ok_w = check_array_any_shape(weights, right_w, name="Exercise 3, attention weights", mistakes={
        k: v[0] for k, v in slips.items()}, hint="Hint: q = x @ EX_W_Q, split into 2 heads; append x @ EX_W_K and "
        "x @ EX_W_V to the cache; scaled scores = q Kᵀ / √d_head; softmax over the keys.", exp=True)
    ok_o = check_array_any_shape(output, right_o, name="Exercise 3, output", mistakes={
        **{k: v[1] for k, v in slips.items()},
        "this is head 1's output only; concatenate both heads' outputs (h·d_head = 4 numbers).": right_o[:2],
        "the two heads' outputs are stacked as (h, d_head); the output is their concatenation, shape (4,).":
            right_o.reshape(2, 2),
    }, hint="Hint: each head's attention weights times the cached V (4, 2), then concatenate the heads.")
    return bool(ok_w) and bool(ok_o)
