"""Exercise checks for notebook 10 (attention for long texts): a band mask, the reach of stacked windows,
an absorbed query matrix, cache bytes per token, one step of linear attention's recurrence.

Shapes as in ``helpers.longcontext``: T tokens, d_in input features, h heads of d_head, d_c the latent
width, d_k and d_v the widths of a key and a value in linear attention. The exercises:

1. ``check_band_mask``: the sliding-window mask for ``EX_T`` = 6 tokens and window ``EX_W`` = 3, by hand.
2. ``check_reach``: after ``EX_LAYERS`` layers with window ``EX_W_REACH``, how many tokens back the last
   token can draw on (the earliest token it reaches is i − n: give n).
3. ``check_absorbed_query``: head 2's absorbed query matrix W_q^(2) W_uk^(2)ᵀ (d_in, d_c) from
   ``EX_W_Q`` (d_in, h·d_head) and ``EX_W_UK`` (d_c, h·d_head) with ``EX_HEADS`` heads.
4. ``check_cache_bytes``: bytes per token of a multi-head key/value cache and of a latent cache for the
   model ``EX_MODEL``, 16-bit numbers.
5. ``check_recurrent_step``: one token of linear attention: the new state S (d_k, d_v), the new
   normaliser z (d_k,) and the token's output (d_v,), from ``EX_S``, ``EX_Z`` and the token's
   ``EX_Q``, ``EX_K``, ``EX_V``, with φ(x) = elu(x) + 1.

Each ``check_...`` computes the right answer and the typical wrong ones with ``helpers``, prints one
verdict per part ("✅ ..." or "❌ ...: what is wrong") and returns a Verdict (truthy when right). None
of them raises on a wrong or missing answer.
"""

from __future__ import annotations

import numpy as np

from helpers.checks import Verdict, check_array_any_shape, check_mask, check_number, exercise_check
from helpers.generation import kv_cache_bytes
from helpers.longcontext import (
    absorbed_matrices,
    elu_plus_one,
    latent_cache_bytes,
    sliding_window_mask,
)

__all__ = [
    "EX_T",
    "EX_W",
    "EX_LAYERS",
    "EX_W_REACH",
    "EX_W_Q",
    "EX_W_UK",
    "EX_HEADS",
    "EX_MODEL",
    "EX_S",
    "EX_Z",
    "EX_Q",
    "EX_K",
    "EX_V",
    "check_band_mask",
    "check_reach",
    "check_absorbed_query",
    "check_cache_bytes",
    "check_recurrent_step",
]

EX_T, EX_W = 6, 3  # exercise 1
EX_LAYERS, EX_W_REACH = 3, 4  # exercise 2
EX_HEADS = 2  # exercise 3: two heads of d_head = 2; d_in = 3, d_c = 2
EX_W_Q = np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 0.0, -1.0], [1.0, 1.0, 0.0, 0.0]])  # (d_in=3, h·d_head=4)
EX_W_UK = np.array([[1.0, 2.0, 0.0, 1.0], [0.0, 1.0, 2.0, -1.0]])  # (d_c=2, h·d_head=4)
EX_MODEL = {"n_layers": 24, "n_heads": 16, "d_head": 64, "d_c": 256, "d_rope": 32}  # exercise 4, made up
EX_S = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])  # (d_k=2, d_v=3) exercise 5: the state after 2 tokens
EX_Z = np.array([2.0, 3.0])  # (d_k,) the normaliser after those tokens
EX_Q = np.array([1.0, 0.0])  # (d_k,) the new token's query: φ gives (2, 1)
EX_K = np.array([0.0, 1.0])  # (d_k,) its key: φ gives (1, 2)
EX_V = np.array([3.0, 0.0, -1.0])  # (d_v,) its value


# --------------------------------------------------------------------------- exercise 1


@exercise_check
def check_band_mask(answer: object) -> Verdict:
    """Exercise 1: the sliding-window mask for EX_T tokens and window EX_W: True where i - w < j <= i."""
    T, w = EX_T, EX_W
    right = sliding_window_mask(T, w)  # (T, T)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    mistakes = {
        "this is the plain causal mask: every token sees the whole past. The window keeps only the last "
        f"w = {w} keys: i − w < j <= i.": j <= i,
        f"each row keeps w + 1 = {w + 1} keys (j >= i − w): the window holds w keys, the token itself "
        "included, so the oldest one is i − w + 1.": (j <= i) & (j >= i - w),
        f"each row keeps w − 1 = {w - 1} keys: the window holds w keys, the token itself included.":
            (j <= i) & (j > i - w + 1),
        "this band looks into the FUTURE (j >= i): row i is query i; it may see itself and the keys before "
        "it, below the diagonal.": (j >= i) & (j < i + w),
        "this band is symmetric (|i − j| < w): it lets a token see the next tokens too. A text-writing model "
        "may look back only.": np.abs(i - j) < w,
        "True and False are swapped: True means \"may attend\".": ~right,
    }
    return check_mask(answer, right, name="Exercise 1, band mask", mistakes=mistakes,
                       hint=f"Hint: query i may attend key j when i − w < j <= i (T = {T}, w = {w}); compare two "
                            "np.arange vectors.")


# --------------------------------------------------------------------------- exercise 2


@exercise_check
def check_reach(answer: object) -> Verdict:
    """Exercise 2: after EX_LAYERS layers of window EX_W_REACH, the last token reaches n = L·(w − 1) tokens back."""
    L, w = EX_LAYERS, EX_W_REACH
    right = float(L * (w - 1))
    return check_number(answer, right, name="Exercise 2, tokens back", hint="Hint: one layer lets a token reach "
                         "w − 1 tokens back (the window holds w keys, itself included); each layer adds that much.",
                         mistakes={
        f"L·w = {L * w} counts the token itself once per layer: one layer reaches only w − 1 = {w - 1} tokens "
        "back, since the window holds the token itself too.": float(L * w),
        f"{w - 1} is one layer's reach; each of the L = {L} layers adds another w − 1.": float(w - 1),
        f"{w} is the window itself; one layer reaches w − 1 tokens back, and there are L = {L} layers.": float(w),
        f"w^L = {w ** L}: the reach adds up layer by layer, it does not multiply.": float(w ** L),
        f"L·(w − 1) + 1 = {L * (w - 1) + 1} counts tokens, the last one included; the question asks how many "
        "tokens BACK (i − n is the earliest one).": float(L * (w - 1) + 1),
    })


# --------------------------------------------------------------------------- exercise 3


@exercise_check
def check_absorbed_query(answer: object) -> Verdict:
    """Exercise 3: head 2's absorbed query matrix W_q^(2) W_uk^(2)ᵀ, shape (d_in, d_c) = (3, 2), without 1/√d_head."""
    A_q, _ = absorbed_matrices(EX_W_Q, EX_W_UK, EX_W_UK, EX_HEADS)  # (h, d_in, d_c)
    right = A_q[1]  # (3, 2) head 2
    Wq2, Wuk2 = EX_W_Q[:, 2:4], EX_W_UK[:, 2:4]  # (3, 2) and (2, 2): head 2's columns
    Wq1, Wuk1 = EX_W_Q[:, 0:2], EX_W_UK[:, 0:2]  # head 1's
    mistakes = {
        "this is head 1's matrix (columns 1–2); head 2 owns columns 3–4 of W_q and of W_uk.": Wq1 @ Wuk1.T,
        "this is W_q^(2) W_uk^(2) without the transpose: W_uk maps the latent (d_c rows) to the key's "
        "columns, so q · k = x W_q^(2) (c W_uk^(2))ᵀ = x (W_q^(2) W_uk^(2)ᵀ) cᵀ.": Wq2 @ Wuk2,
        "you used all of W_q and W_uk (every head at once): that sums the heads' scores. Take head 2's "
        "columns of each first.": EX_W_Q @ EX_W_UK.T,
        "this is the transpose, W_uk^(2) W_q^(2)ᵀ (d_c, d_in): the query side multiplies x (d_in) first, so "
        "the matrix is (d_in, d_c).": Wuk2 @ Wq2.T,
        "you mixed the heads: head 2's columns of W_q with head 1's of W_uk.": Wq2 @ Wuk1.T,
        "you divided by √d_head: the scale stays on the scores (latent_attention applies it after comparing "
        "with c), so the absorbed matrix is W_q^(2) W_uk^(2)ᵀ alone.": Wq2 @ Wuk2.T / np.sqrt(Wq2.shape[1]),
    }
    return check_array_any_shape(answer, right, name="Exercise 3, absorbed query matrix", mistakes=mistakes,
                                 hint="Hint: take head 2's columns of W_q (d_in, d_head) and of W_uk (d_c, d_head); "
                                      "the product must be (d_in, d_c).")


# --------------------------------------------------------------------------- exercise 4


@exercise_check
def check_cache_bytes(mha: object, mla: object) -> Verdict:
    """Exercise 4: bytes per token of EX_MODEL's multi-head key/value cache and of its latent cache, 2 bytes a
    number."""
    m = EX_MODEL
    L, h, d, d_c, d_r = m["n_layers"], m["n_heads"], m["d_head"], m["d_c"], m["d_rope"]
    right_mha = float(kv_cache_bytes(L, h, d, 1))
    right_mla = float(latent_cache_bytes(L, d_c, 1, d_rope=d_r))
    ok_mha = check_number(mha, right_mha, name="Exercise 4, multi-head cache bytes per token",
                           hint="Hint: per layer and head, one key and one value of d_head numbers, 2 bytes each.",
                           mistakes={
        "that is half of it: the cache holds a key AND a value per head, and a 16-bit number takes 2 bytes; "
        "one of these two factors of 2 is missing.": right_mha / 2,
        "that is one layer: every layer has its own cache.": right_mha / L,
        "that is one head: every head has its own key and value.": right_mha / h,
        "these are bits: a 16-bit number takes 2 bytes, not 16.": right_mha * 8,
        "that is float32 (4 bytes a number); the question says 16-bit numbers, 2 bytes.": right_mha * 2,
    })
    ok_mla = check_number(mla, right_mla, name="Exercise 4, latent cache bytes per token",
                           hint="Hint: per layer, the latent c (d_c numbers) and the rotary key (d_rope numbers), "
                                "2 bytes each; no per-head keys or values.", mistakes={
        "the decoupled rotary key is missing: DeepSeek caches its d_rope numbers beside the latent.":
            float(latent_cache_bytes(L, d_c, 1)),
        "the latent is cached once, not as a key and a value: K and V are both made from the same c.": 2 * right_mla,
        "that is one layer: every layer has its own latent cache.": right_mla / L,
        "that counts numbers, not bytes: a 16-bit number takes 2 bytes.": right_mla / 2,
        "the latent is shared by all heads: it is not stored once per head.": right_mla * h,
        "these are bits: a 16-bit number takes 2 bytes, not 16.": right_mla * 8,
    })
    return bool(ok_mha) and bool(ok_mla)


# --------------------------------------------------------------------------- exercise 5


@exercise_check
def check_recurrent_step(S_new: object, z_new: object, out: object) -> Verdict:
    """Exercise 5: S + φ(k)ᵀ v (d_k, d_v; rows, so an outer product), z + φ(k) (d_k,), φ(q) S_new / φ(q)·z_new
    (d_v,)."""
    fq, fk = elu_plus_one(EX_Q), elu_plus_one(EX_K)  # (d_k,) each
    right_S = EX_S + np.outer(fk, EX_V)  # (d_k, d_v)
    right_z = EX_Z + fk  # (d_k,)
    right_out = fq @ right_S / (fq @ right_z)  # (d_v,)
    ok_S = check_array_any_shape(S_new, right_S, name="Exercise 5, new state S", mistakes={
        "φ was not applied to k: the state adds φ(k)ᵀ v, with φ(x) = elu(x) + 1 (x + 1 for x > 0, e^x for x <= 0).":
            EX_S + np.outer(EX_K, EX_V),
        "this is only the new token's φ(k)ᵀ v: the state keeps the sum over every token so far; add it to S.":
            np.outer(fk, EX_V),
        "this is vᵀ φ(k), shape (d_v, d_k): the state is (d_k, d_v), the outer product φ(k)ᵀ v = "
        "np.outer(φ(k), v) (φ(k) and v are rows), added to S.": (EX_S.T + np.outer(EX_V, fk)),
        "you used φ(q) instead of φ(k): the state collects keys and values; the query only reads it.":
            EX_S + np.outer(fq, EX_V),
    }, hint="Hint: S_new = S + φ(k)ᵀ v: φ(k) (1, d_k) and v (1, d_v) are rows, so φ(k)ᵀ v is an outer product "
            "(d_k, d_v), np.outer(φ(k), v).")
    ok_z = check_array_any_shape(z_new, right_z, name="Exercise 5, new normaliser z", mistakes={
        "φ was not applied to k: z adds φ(k).": EX_Z + EX_K,
        "this is only φ(k): z keeps the sum over every token so far.": fk,
    }, hint="Hint: z_new = z + φ(k).")
    ok_out = check_array_any_shape(out, right_out, name="Exercise 5, output", mistakes={
        "the normaliser is missing: divide φ(q) S_new by φ(q) · z_new.": fq @ right_S,
        "you used the OLD state and normaliser: the token attends to itself too, so update S and z first.":
            fq @ EX_S / (fq @ EX_Z),
        "φ was not applied to q: out = φ(q) S_new / (φ(q) · z_new).": EX_Q @ right_S / (EX_Q @ right_z),
        "you divided by the old normaliser: use z_new, which includes the token itself.": fq @ right_S / (fq @ EX_Z),
    }, hint="Hint: out = φ(q) S_new / (φ(q) · z_new), with the NEW S and z.")
    return bool(ok_S) and bool(ok_z) and bool(ok_out)
