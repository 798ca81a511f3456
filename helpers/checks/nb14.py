"""Exercise checks for notebook 14 (what today's models change in attention): a row with a sink, the score bound of
QK-norm, the cache of a local/global pattern, one step of the delta rule.

Shapes as in ``helpers.modern``: T_k keys in a row, d_k the width of a query or key, d_v of a value; the delta
rule's state S is (d_v, d_k). The exercises:

1. ``check_sink_row``: the attention weights of the row ``EX_SCORES`` with the sink logit ``EX_SINK``, by hand.
2. ``check_score_bound``: after QK-norm with d_k = ``EX_DK`` and gains at most ``EX_GQ`` (queries) and ``EX_GK``
   (keys), the largest |scaled score| that can occur.
3. ``check_pattern_bytes``: the key/value cache of the model ``EX_PATTERN_MODEL`` (local and global layers) at
   T tokens, 16-bit numbers.
4. ``check_delta_step``: one step of the delta rule from the state ``EX_STATE`` with key ``EX_KEY``, value
   ``EX_VALUE`` and write strength ``EX_BETA``: the new state.

Each ``check_...`` computes the right answer and the typical wrong ones with ``helpers``, prints one verdict per
part ("✅ ..." or "❌ ...: what is wrong") and returns a Verdict (truthy when right). None of them raises on a wrong
or missing answer.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.attention import softmax
from helpers.checks import Verdict, check_array_any_shape, check_number, exercise_check
from helpers.generation import kv_cache_bytes
from helpers.modern import (
    gated_delta_rule,
    layer_kinds,
    pattern_cache_bytes,
    qk_norm_score_bound,
    softmax_with_sink,
)

__all__ = [
    "EX_SCORES",
    "EX_SINK",
    "EX_DK",
    "EX_GQ",
    "EX_GK",
    "EX_PATTERN_MODEL",
    "EX_STATE",
    "EX_KEY",
    "EX_VALUE",
    "EX_BETA",
    "check_sink_row",
    "check_score_bound",
    "check_pattern_bytes",
    "check_delta_step",
]

EX_SCORES = np.array([2.0, 0.0, 1.0])  # exercise 1: one row of scaled scores (T_k = 3)
EX_SINK = 1.0  # its sink logit
EX_DK, EX_GQ, EX_GK = 64, 1.5, 2.0  # exercise 2: d_k and the largest |gain| of the query and key norms
EX_PATTERN_MODEL = {"n_layers": 24, "local_per_global": 3, "window": 2048, "n_kv_heads": 4, "d_head": 128,
                    "T": 32768}  # exercise 3, made up; 16-bit numbers
EX_STATE = np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.0]])  # exercise 4: S (d_v=3, d_k=2)
EX_KEY = np.array([0.6, 0.8])  # (d_k,) length 1
EX_VALUE = np.array([1.0, 1.0, 0.0])  # (d_v,)
EX_BETA = 0.5


# --------------------------------------------------------------------------- exercise 1


@exercise_check
def check_sink_row(answer: object) -> Verdict:
    """Exercise 1: exp(s_j) / (exp(sink) + Σ exp(s)) for the row EX_SCORES and the sink logit EX_SINK: T_k = 3
    weights."""
    s, sink = EX_SCORES, EX_SINK
    right = softmax_with_sink(s, sink)  # (3,)
    with_sink = softmax(np.append(s, sink))  # (4,) the sink's own weight kept
    mistakes = {
        "this is plain softmax: the sink is missing from the sum below the fraction, so the row sums to 1.": softmax(s),
        "these are 4 weights: the sink's own weight is the last one; drop it (the sink has no value to mix), "
        "keep the 3 keys' weights.": with_sink,
        "you added the sink logit itself, not exp(sink logit), to the sum: the sink is one more key with score "
        f"{sink:g}, so it adds e^{sink:g}.": np.exp(s) / (sink + np.exp(s).sum()),
        "you added the sink logit to every score: the sink is one more key beside them, not a shift of theirs "
        "(a shift changes nothing in a softmax).": softmax(s + sink),
    }
    return check_array_any_shape(answer, right, name="Exercise 1, a row with a sink", mistakes=mistakes,
                                 hint="Hint: the sink is one more key with score EX_SINK; take the softmax over all "
                                      "four, then keep the three real keys' weights.", exp=True)


# --------------------------------------------------------------------------- exercise 2


@exercise_check
def check_score_bound(answer: object) -> Verdict:
    """Exercise 2: √d_k · max|g_q| · max|g_k| = 8 · 1.5 · 2 = 24, the largest |q̂ · k̂| / √d_k after QK-norm."""
    d, gq, gk = EX_DK, EX_GQ, EX_GK
    right = qk_norm_score_bound(d, np.full(d, gq), np.full(d, gk))
    return check_number(answer, right, name="Exercise 2, the score bound", hint="Hint: after rms_norm a vector has "
                        "length at most √d_k · max|g|; a dot product is at most the product of the lengths; then "
                        "divide by √d_k.", mistakes={
        f"{d * gq * gk:g} is the bound of the dot product q̂ · k̂; the scaled score divides it by √d_k = "
        f"{math.sqrt(d):g}.": d * gq * gk,
        f"{math.sqrt(d):g} leaves out the gains: rms_norm multiplies by g after normalising, so the lengths grow "
        "by max|g_q| and max|g_k|.": math.sqrt(d),
        f"{gq * gk:g} takes the normalised vectors as length 1; their root mean square is 1, so their length is "
        f"√d_k = {math.sqrt(d):g}.": gq * gk,
        f"{gq * gk / math.sqrt(d):g} divides by √d_k twice: the length √d_k of each vector gives d_k, and the "
        "scale 1/√d_k leaves √d_k.": gq * gk / math.sqrt(d),
    })


# --------------------------------------------------------------------------- exercise 3


@exercise_check
def check_pattern_bytes(answer: object) -> Verdict:
    """Exercise 3: EX_PATTERN_MODEL's cache at T tokens: local layers keep the window, global layers keep T."""
    m = EX_PATTERN_MODEL
    L, r, w, g, d, T = (m[k] for k in ("n_layers", "local_per_global", "window", "n_kv_heads", "d_head", "T"))
    kinds = layer_kinds(L, r)
    right = float(pattern_cache_bytes(kinds, g, d, T, w))
    n_global = kinds.count("global")
    return check_number(answer, right, name="Exercise 3, cache bytes", hint="Hint: count the global layers "
                        f"(one in every {r + 1}); each keeps T positions, each local layer keeps the window; per "
                        "position and layer, a key and a value of n_kv_heads · d_head numbers, 2 bytes each.",
                        mistakes={
        "that is the cache with every layer global: the local layers keep only the last `window` positions.":
            float(kv_cache_bytes(L, g, d, T)),
        f"that counts {L // r} global layers: with {r} local per global, one layer in {r + 1} is global "
        f"({n_global} of {L}).": float(pattern_cache_bytes(layer_kinds(L, r - 1), g, d, T, w)),
        "that is half of it: a layer caches a key AND a value per position, and a 16-bit number takes 2 bytes; "
        "one of these two factors of 2 is missing.": right / 2,
        "that is the global layers alone: the local layers keep their window too.":
            float(kv_cache_bytes(n_global, g, d, T)),
        "these are bits: a 16-bit number takes 2 bytes, not 16.": right * 8,
    })


# --------------------------------------------------------------------------- exercise 4


@exercise_check
def check_delta_step(answer: object) -> Verdict:
    """Exercise 4: S − β (S k) kᵀ + β v kᵀ, shape (d_v, d_k) = (3, 2), from EX_STATE, EX_KEY, EX_VALUE, EX_BETA."""
    S, k, v, b = EX_STATE, EX_KEY, EX_VALUE, EX_BETA
    right = S - b * np.outer(S @ k, k) + b * np.outer(v, k)  # (3, 2)
    # the same step through the helper: one token written, then read at the standard basis (β = 0: no change)
    E = np.eye(2)
    K = np.vstack([E, k, E])  # (5, 2): write S's columns at keys e_1, e_2, then write k, then read e_1, e_2
    V = np.vstack([S.T, v, np.zeros((2, 3))])  # (5, 3)
    via_helper = gated_delta_rule(K, K, V, np.array([1.0, 1.0, b, 0.0, 0.0]))[-2:].T  # (3, 2)
    assert np.allclose(via_helper, right), "the check's own formula disagrees with helpers.modern"
    mistakes = {
        "this is linear attention's step, S + β v kᵀ: the delta rule first removes β·(what S holds for k), "
        "S k, written along k.": S + b * np.outer(v, k),
        "β is missing from the erase: S (I − β k kᵀ) takes away β (S k) kᵀ, not all of (S k) kᵀ.":
            S - np.outer(S @ k, k) + b * np.outer(v, k),
        "β is missing from the write: add β v kᵀ.": S - b * np.outer(S @ k, k) + np.outer(v, k),
        "you wrote k vᵀ (d_k, d_v): S maps a key to a value, so it is (d_v, d_k) and the write is v kᵀ = "
        "np.outer(v, k).": (S - b * np.outer(S @ k, k)).T + b * np.outer(k, v),
        "you erased with S kᵀ k (a number times S) instead of the outer product (S k) kᵀ: erase only along k.":
            S - b * S * (k @ k) + b * np.outer(v, k),
    }
    return check_array_any_shape(answer, right, name="Exercise 4, one delta-rule step", mistakes=mistakes,
                                 hint="Hint: S_new = S − β (S k) kᵀ + β v kᵀ, with np.outer for the two outer "
                                      "products; S is (d_v, d_k) = (3, 2).")
