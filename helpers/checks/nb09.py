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

The Build exercise: ``check_attend_with_cache(fn)`` calls the student's ``attend_with_cache(K_cache, V_cache, q, k,
v)`` (one new token: append k and v as the caches' last rows, attend q over the appended caches; returns (output
(d_v,), K_cache (t+1, d_k), V_cache (t+1, d_v))) on the inputs of ``SPEC_ATTEND_WITH_CACHE``, t = 0 included,
with the engine of ``helpers.checks.functions``, and names the typical mistakes (prepended, not appended, the new
token left out, k and v swapped, not scaled, k used as the query, ...).
"""

from __future__ import annotations

import math

import numpy as np

from helpers.attention import causal_mask, scaled_dot_product_attention, softmax
from helpers.checks import (
    NOT_ANSWERED,
    Verdict,
    check_array_any_shape,
    check_number,
    exercise_check,
    verdict,
)
from helpers.checks.functions import KEEPDIMS, Case, Spec, check_function
from helpers.generation import KVCache, decode_step, grouped_query_attention, kv_cache_bytes
from helpers.sentence import TOKENS, embeddings, pronoun_head

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
    "SPEC_ATTEND_WITH_CACHE",
    "check_attend_with_cache",
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


# --------------------------------------------------------------------------- the Build exercise


def _attend_with_cache(K_cache: np.ndarray, V_cache: np.ndarray, q: np.ndarray, k: np.ndarray,
                       v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The right answer: the caches with k and v as their last rows, and q's attention over them (the helpers)."""
    K = np.concatenate([K_cache, k[None, :]])  # (t, d_k) + (1, d_k) -> (t+1, d_k)
    V = np.concatenate([V_cache, v[None, :]])  # (t+1, d_v)
    output = scaled_dot_product_attention(q[None, :], K, V)[0][0]  # (1, d_k) against (t+1, d_k) -> (d_v,)
    return output, K, V


# The typical mistakes, each a wrong attend_with_cache as a student would write it (plain NumPy).


def _row_softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max())  # (n,); an empty s raises (no cache and no new token): the mistake is then skipped
    return e / e.sum()


def _attend(q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float | None = None) -> np.ndarray:
    scale = 1 / np.sqrt(K.shape[1]) if scale is None else scale
    return _row_softmax(K @ q * scale) @ V  # (t+1, d_k) @ (d_k,) -> (t+1,); (t+1,) @ (t+1, d_v) -> (d_v,)


def _grown(K_cache, V_cache, k, v):
    return np.vstack([K_cache, k]), np.vstack([V_cache, v])  # (t+1, d_k), (t+1, d_v)


def _prepended(K_cache, V_cache, q, k, v):
    K, V = np.vstack([k, K_cache]), np.vstack([v, V_cache])  # the new token FIRST
    return _attend(q, K, V), K, V


def _not_appended(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, k, v)
    return _attend(q, K, V), K_cache, V_cache  # the grown caches are used, the old ones returned


def _old_cache_only(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, k, v)
    return _attend(q, K_cache, V_cache), K, V  # the new token does not see itself


def _nothing_appended(K_cache, V_cache, q, k, v):
    return _attend(q, K_cache, V_cache), K_cache, V_cache


def _k_v_swapped(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, v, k)  # runs when d_k = d_v
    return _attend(q, K, V), K, V


def _caches_returned_swapped(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, k, v)
    return _attend(q, K, V), V, K


def _not_scaled(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, k, v)
    return _attend(q, K, V, scale=1.0), K, V


def _scaled_by_d(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, k, v)
    return _attend(q, K, V, scale=1 / K.shape[1]), K, V


def _k_as_query(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, k, v)
    return _attend(k, K, V), K, V


def _weights_all_one(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, k, v)
    return V.sum(axis=0), K, V  # softmax over an axis of length 1 (the query's): every weight is 1


def _weights_not_output(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, k, v)
    return _row_softmax(K @ q / np.sqrt(K.shape[1])), K, V  # (t+1,) the weights, not multiplied by V


def _max_not_subtracted(K_cache, V_cache, q, k, v):
    K, V = _grown(K_cache, V_cache, k, v)
    e = np.exp(K @ q / np.sqrt(K.shape[1]))  # e^s overflows to inf for s > 709.78
    return e / e.sum() @ V, K, V  # inf / inf = nan


def _build_cases() -> list[Case]:
    X = embeddings()  # (T=8, d=6) the running sentence
    W_q, W_k, W_v = pronoun_head()  # (6, 2) each: "it" asks for an animal, "cat" answers
    t = TOKENS.index("it")  # 5 tokens cached before "it"
    running = (X[:t] @ W_k, X[:t] @ W_v, X[t] @ W_q, X[t] @ W_k, X[t] @ W_v)  # (5, 2), (5, 2), (2,) x 3
    rng = np.random.default_rng(9)

    def token(t: int, d_k: int, d_v: int) -> tuple[np.ndarray, ...]:
        return (rng.standard_normal((t, d_k)), rng.standard_normal((t, d_v)), rng.standard_normal(d_k),
                rng.standard_normal(d_k), rng.standard_normal(d_v))

    return [
        Case("the running sentence at \"it\" (pronoun head): caches of t = 5 tokens, d_k = d_v = 2", running),
        Case("t = 0: empty caches of shape (0, 3) and (0, 4), the first token", token(0, 3, 4)),
        Case("t = 1: caches of shape (1, 4) and (1, 4)", token(1, 4, 4)),
        Case("t = 3: caches of shape (3, 5) and (3, 2) (d_k ≠ d_v)", token(3, 5, 2)),
        Case("t = 2: caches of shape (2, 3) and (2, 3)", token(2, 3, 3)),
        Case("t = 9: caches of shape (9, 4) and (9, 6)", token(9, 4, 6)),
        Case("t = 3, d_k = d_v = 2, with scores above 1,000",
             (rng.uniform(30, 40, (3, 2)), rng.standard_normal((3, 2)), rng.uniform(30, 40, 2), rng.uniform(30, 40, 2),
              rng.standard_normal(2))),
    ]


SPEC_ATTEND_WITH_CACHE = Spec(
    name="attend_with_cache",
    broadcast=KEEPDIMS,  # a row max or sum written without keepdims=True: say so
    reference=_attend_with_cache,
    cases=_build_cases(),
    outputs=("output", "K_cache", "V_cache"),
    mistakes={
        "the new key and value are at the FRONT of the caches: append them as the last rows "
        "(np.vstack([K_cache, k])), so that row j stays token j. (The output is right: attention does not "
        "care about the order of the keys, but the next step and the positions do.)": _prepended,
        "you returned the old caches: return the grown ones, (output, K_cache + k as last row, V_cache + v), or "
        "the next step starts without this token.": _not_appended,
        "the new token is not among the keys it attends to: append k and v FIRST, then attend over all t + 1 "
        "rows (a token may attend to itself).": _old_cache_only,
        "nothing was appended: append k and v as the caches' last rows, attend over all t + 1 rows, and return "
        "the grown caches.": _nothing_appended,
        "k and v are swapped: k goes into K_cache (keys are compared with the query), v into V_cache (values "
        "are mixed into the output).": _k_v_swapped,
        "the caches are returned in the wrong order: return (output, K_cache, V_cache), keys before values.":
            _caches_returned_swapped,
        "the scores are not scaled: divide q Kᵀ by √d_k before the softmax.": _not_scaled,
        "the scores are divided by d_k: divide by √d_k, the square root.": _scaled_by_d,
        "the new token's KEY k was used as the query: the scores are q Kᵀ, the query q against every cached "
        "key.": _k_as_query,
        "every weight is 1 (the output is the sum of the values): the softmax ran over an axis of length 1. "
        "The scores q Kᵀ are one row of t + 1 numbers; take the softmax along it.": _weights_all_one,
        "this output is the attention weights (t + 1 numbers): multiply them by V_cache to get the output "
        "(d_v numbers).": _weights_not_output,
        "exp overflowed: e^s is inf for a score s above about 709, and inf/inf is NaN. Subtract the largest score "
        "before np.exp (03): the weights stay the same and every exponent is <= 0.": _max_not_subtracted,
    },
    hint="Hint: K_cache = np.vstack([K_cache, k]) and the same for V (now t + 1 rows); scores = K_cache @ q / √d_k "
         "(t + 1,); weights = softmax of the scores; output = weights @ V_cache; return all three.",
    done=": the running sentence, empty caches (t = 0), t = 1 to 9, d_k ≠ d_v, large scores",
)


@exercise_check
def check_attend_with_cache(fn: object) -> Verdict:
    """The Build exercise: the student's attend_with_cache(K_cache, V_cache, q, k, v) -> (output, K_cache, V_cache),
    on several inputs (t = 0 included); names the mistake."""
    return check_function(fn, SPEC_ATTEND_WITH_CACHE)
