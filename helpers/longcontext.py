"""Attention for long texts: sliding windows, multi-head latent attention (MLA), linear attention.

Three answers to attention's cost at long contexts (notebook 10):

* a **sliding window**: query i sees only the last ``window`` keys, i - window < j <= i (Mistral 7B
  in every layer; Gemma 2 and 3 in every other or five of six layers); a key/value cache of ``window``
  positions is then enough;
* **multi-head latent attention** (DeepSeek-V2, 2024): keys and values are made from one shared
  low-rank latent C = X W_dkv, so a cache stores C only; W_uk folds into the query side and W_uv
  into the output side (``absorb=True``), so attention runs against C directly;
* **linear attention** (Katharopoulos et al. 2020): exp(q·k) is replaced by φ(q)·φ(k) with
  φ(x) = elu(x) + 1 > 0, so the causal output is a running sum: a state S (d_k, d_v) and a
  normaliser z (d_k,), updated once per token.

Shape notation used throughout this module (as in helpers/attention.py):

    ...      any leading batch dimensions (broadcast)
    T        number of tokens
    d_in     features per input token (the width of X)
    h        heads (n_heads)
    d_head   width of one head's query and key (the scale is 1/√d_head)
    d_v      width of one head's value
    d_c      the latent width: columns of W_dkv, what a latent cache stores per token
    d_out    output width of W_o
    d_k      width of a query / key vector in linear attention (d_v: of a value vector)
    L        layers (window_reach)

Tokens are rows. Every public function checks its arguments and raises ``TypeError`` (wrong kind of
thing) or ``ValueError`` (right kind, wrong shape or value) with a message that names the argument.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.attention import attend, merge_heads_unchecked, split_heads_unchecked
from helpers.validate import (
    as_matrix,
    as_numeric,
    check_flag,
    check_int,
    check_mask,
    check_qkv,
    check_weight,
    refuse_overflow,
)

__all__ = [
    "sliding_window_mask",
    "streaming_mask",
    "window_reach",
    "latent_attention",
    "absorbed_matrices",
    "low_rank_kv",
    "latent_cache_bytes",
    "elu_plus_one",
    "linear_attention_weights",
    "linear_attention",
    "linear_attention_recurrent",
    "linear_state_bytes",
]


# --------------------------------------------------------------------------- sliding windows


def sliding_window_mask(T: int, window: int) -> np.ndarray:
    """Boolean (T, T) band mask, True where query i may attend key j: i - window < j <= i."""
    T = check_int(T, "T", minimum=1)
    window = check_int(window, "window", minimum=1)
    i = np.arange(T)[:, None]  # (T, 1) query positions
    j = np.arange(T)[None, :]  # (1, T) key positions
    return (j <= i) & (j > i - window)  # (T, T); window >= T gives the causal mask


def streaming_mask(T: int, window: int, sinks: int) -> np.ndarray:
    """Boolean (T, T), True where query i may attend key j: j <= i and (j < sinks or i - j < window).

    The band of ``sliding_window_mask`` plus the first ``sinks`` keys, which every query keeps
    (StreamingLLM, Xiao et al. 2023: a sliding cache that keeps the first tokens); sinks=0 is the band.
    """
    band = sliding_window_mask(T, window)  # (T, T) checks T and window
    sinks = check_int(sinks, "sinks", minimum=0)
    j = np.arange(band.shape[0])[None, :]  # (1, T) key positions
    return band | (np.tri(band.shape[0], dtype=bool) & (j < sinks))  # (T, T): j <= i and a sink


def window_reach(T: int, window: int, n_layers: int) -> np.ndarray:
    """Boolean (T, T): True where token i's output after ``n_layers`` windowed layers depends on token j.

    One layer mixes along the band mask M; L layers along the boolean matrix product M·M·…·M (L
    factors): i reaches j if some path i -> k -> … -> j steps back at most window - 1 tokens per layer.
    """
    M = sliding_window_mask(T, window).astype(np.int64)  # (T, T) 0/1
    n_layers = check_int(n_layers, "n_layers", minimum=1)
    reach = M.copy()  # (T, T) after one layer
    for _ in range(n_layers - 1):
        reach = np.minimum(M @ reach, 1)  # (T, T) @ (T, T) -> (T, T), 0/1 again: "some path exists"
    return reach.astype(bool)  # (T, T)


# --------------------------------------------------------------------------- latent attention


def _check_up(W_q: np.ndarray, W_uk: object, W_uv: object, d_c: int, dkv: str, n_heads: int,
              W_o: object) -> tuple:
    """Checks of the up-projections against the latent width d_c (described by ``dkv``) and the heads."""
    Ws = []
    for name, W in (("W_uk", W_uk), ("W_uv", W_uv)):
        W = as_matrix(W, name, "(d_c, h·d_head)")
        if W.shape[0] != d_c:
            raise ValueError(
                f"the latent widths do not chain: {dkv} but {name} has shape {W.shape} ({W.shape[0]} rows); "
                f"{name} needs {d_c} rows"
            )
        Ws.append(W)
    W_uk, W_uv = Ws
    if W_uk.shape[1] != W_q.shape[1]:
        raise ValueError(
            f"W_q has shape {W_q.shape} but W_uk has shape {W_uk.shape}: queries and keys must have the same "
            "width h·d_head to be compared by a dot product"
        )
    for name, W in (("W_q", W_q), ("W_uv", W_uv)):
        if W.shape[1] % n_heads:
            raise ValueError(
                f"{name} has shape {W.shape}: its {W.shape[1]} columns do not split into n_heads = {n_heads} "
                "heads of equal width"
            )
    d_head, d_v = W_q.shape[1] // n_heads, W_uv.shape[1] // n_heads
    if W_o is not None:
        W_o = as_numeric(W_o, "W_o")
        if W_o.ndim != 2 or W_o.shape[0] != n_heads * d_v:
            raise ValueError(
                f"W_o has shape {W_o.shape} but the concatenated heads have {n_heads * d_v} columns; "
                f"W_o needs shape ({n_heads * d_v}, d_out)"
            )
    return W_uk, W_uv, d_head, d_v, W_o


def _check_latent(X: object, W_q: object, W_dkv: object, W_uk: object, W_uv: object, n_heads: object,
                  W_o: object) -> tuple:
    """Every check of latent_attention: (X, W_q, W_dkv, W_uk, W_uv, n_heads, d_head, d_v, W_o), checked."""
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    X = as_numeric(X, "X", min_ndim=2)
    d_in = X.shape[-1]
    W_q = check_weight(W_q, "W_q", d_in, X.shape)  # (d_in, h·d_head)
    W_dkv = check_weight(W_dkv, "W_dkv", d_in, X.shape)  # (d_in, d_c)
    d_c = W_dkv.shape[1]
    W_uk, W_uv, d_head, d_v, W_o = _check_up(W_q, W_uk, W_uv, d_c, f"W_dkv has shape {W_dkv.shape} ({d_c} latent "
                                             "columns)", n_heads, W_o)
    return X, W_q, W_dkv, W_uk, W_uv, n_heads, d_head, d_v, W_o


def absorbed_matrices(W_q: object, W_uk: object, W_uv: object, n_heads: int,
                      W_o: object = None) -> tuple[np.ndarray, np.ndarray]:
    """(A_q (h, d_in, d_c), A_o): W_uk folded into each head's query side, W_uv into its output side.

    A_q[i] = W_q^(i) W_uk^(i)ᵀ, so q_t · k_s = (x_t A_q[i]) · c_s. A_o is (h, d_c, d_out) with
    A_o[i] = W_uv^(i) W_o^(i) (the rows of W_o that head i feeds), or (h, d_c, d_v) = W_uv^(i) without W_o.
    """
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    W_q = as_matrix(W_q, "W_q", "(d_in, h·d_head)")
    W_uk = as_matrix(W_uk, "W_uk", "(d_c, h·d_head)")
    d_c = W_uk.shape[0]
    W_uk, W_uv, _, _, W_o = _check_up(W_q, W_uk, W_uv, d_c, f"W_uk has shape {W_uk.shape} ({d_c} latent rows)",
                                      n_heads, W_o)
    return _absorb(W_q, W_uk, W_uv, n_heads, W_o)


def _absorb(W_q: np.ndarray, W_uk: np.ndarray, W_uv: np.ndarray, n_heads: int,
            W_o: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    d_in, d_c = W_q.shape[0], W_uk.shape[0]
    Wq_h = np.swapaxes(W_q.reshape(d_in, n_heads, -1), 0, 1)  # (d_in, h·d_head) -> (h, d_in, d_head)
    Wuk_h = np.swapaxes(W_uk.reshape(d_c, n_heads, -1), 0, 1)  # (d_c, h·d_head) -> (h, d_c, d_head)
    Wuv_h = np.swapaxes(W_uv.reshape(d_c, n_heads, -1), 0, 1)  # (d_c, h·d_v) -> (h, d_c, d_v)
    A_q = Wq_h @ np.swapaxes(Wuk_h, -1, -2)  # (h, d_in, d_head) @ (h, d_head, d_c) -> (h, d_in, d_c)
    if W_o is None:
        return A_q, Wuv_h  # (h, d_c, d_v): nothing to fold into
    Wo_h = W_o.reshape(n_heads, -1, W_o.shape[1])  # (h·d_v, d_out) -> (h, d_v, d_out): head i's rows
    return A_q, Wuv_h @ Wo_h  # (h, d_c, d_v) @ (h, d_v, d_out) -> (h, d_c, d_out)


def latent_attention(
    X: object,
    W_q: object,
    W_dkv: object,
    W_uk: object,
    W_uv: object,
    n_heads: int,
    W_o: object = None,
    mask: object = None,
    absorb: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention whose keys and values come from one latent C = X W_dkv: K = C W_uk, V = C W_uv.

    Returns (output (..., T, d_out), weights (..., h, T, T)) like multi_head_attention; without W_o the
    output is the concatenated heads (..., T, h·d_v). Scale 1/√d_head, d_head = W_q's width / n_heads.
    absorb=True never forms K or V: each head's queries are x W_q^(i) W_uk^(i)ᵀ, compared with C
    itself, and its attention-weighted sum of C goes through W_uv^(i) (and W_o) afterwards. The same
    result in exact arithmetic (associativity of matrix products); in floats to rounding.
    """
    X, W_q, W_dkv, W_uk, W_uv, n_heads, d_head, d_v, W_o = _check_latent(X, W_q, W_dkv, W_uk, W_uv, n_heads, W_o)
    absorb = check_flag(absorb, "absorb")
    *lead, T, _ = X.shape
    if mask is not None:
        shape = (*lead, T, T)
        mask = check_mask(mask, shape, f"(..., T, T) = {shape} for X with shape {X.shape}")
        if mask.ndim >= 3:  # a per-batch mask (..., T, T) lines up with (..., h, T, T) once it has a head axis
            mask = np.expand_dims(mask, -3)
    scale = 1.0 / math.sqrt(d_head)  # 1/√d_head, as in multi_head_attention
    with np.errstate(over="ignore", invalid="ignore"):
        C = X @ W_dkv  # (..., T, d_in) @ (d_in, d_c) -> (..., T, d_c): all a latent cache stores
    refuse_overflow(C, f"X {X.shape} @ W_dkv {W_dkv.shape}")
    if not absorb:
        with np.errstate(over="ignore", invalid="ignore"):
            Q = X @ W_q  # (..., T, d_in) @ (d_in, h·d_head) -> (..., T, h·d_head)
            K = C @ W_uk  # (..., T, d_c) @ (d_c, h·d_head) -> (..., T, h·d_head)
            V = C @ W_uv  # (..., T, d_c) @ (d_c, h·d_v) -> (..., T, h·d_v)
        for name, P in (("X @ W_q", Q), ("C @ W_uk", K), ("C @ W_uv", V)):
            refuse_overflow(P, name)
        out, weights = attend(split_heads_unchecked(Q, n_heads), split_heads_unchecked(K, n_heads),
                              split_heads_unchecked(V, n_heads), mask, scale)
        # out (..., h, T, d_v), weights (..., h, T, T)
        concat = merge_heads_unchecked(out)  # (..., h, T, d_v) -> (..., T, h·d_v)
        if W_o is None:
            return concat, weights
        with np.errstate(over="ignore", invalid="ignore"):
            result = concat @ W_o  # (..., T, h·d_v) @ (h·d_v, d_out) -> (..., T, d_out)
        refuse_overflow(result, f"concat(heads) {concat.shape} @ W_o {W_o.shape}")
        return result, weights
    A_q, A_o = _absorb(W_q, W_uk, W_uv, n_heads, W_o)  # (h, d_in, d_c), (h, d_c, d_v or d_out)
    Ch = np.expand_dims(C, -3)  # (..., T, d_c) -> (..., 1, T, d_c): one latent shared by every head
    with np.errstate(over="ignore", invalid="ignore"):
        Qa = np.expand_dims(X, -3) @ A_q  # (..., 1, T, d_in) @ (h, d_in, d_c) -> (..., h, T, d_c)
    refuse_overflow(Qa, "X @ (W_q W_ukᵀ)")
    lat, weights = attend(Qa, Ch, Ch, mask, scale)  # (..., h, T, d_c) weighted sums of C, (..., h, T, T)
    with np.errstate(over="ignore", invalid="ignore"):
        heads = lat @ A_o  # (..., h, T, d_c) @ (h, d_c, d_v or d_out) -> (..., h, T, d_v or d_out)
    refuse_overflow(heads, "heads @ W_uv (W_o)")
    if W_o is None:
        return merge_heads_unchecked(heads), weights  # (..., h, T, d_v) -> (..., T, h·d_v)
    return heads.sum(axis=-3), weights  # (..., h, T, d_out) -> (..., T, d_out): Σ_i head_i W_o^(i)


def low_rank_kv(W_k: object, W_v: object, d_c: int, X: object = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W_dkv (d_in, d_c), W_uk (d_c, d_k), W_uv (d_c, d_v)): the best rank-d_c factors of [W_k | W_v].

    With W = [W_k | W_v] (d_in, d_k + d_v) and P (d_k + d_v, d_c) the top d_c right singular vectors of
    X W (of W itself when X is None): W_dkv = W P and [W_uk | W_uv] = Pᵀ. Then X W_dkv [W_uk | W_uv] is
    the closest rank-d_c stand-in for the keys and values [K | V] = X W (Eckart-Young), exactly them when
    d_c >= the rank of X W. Each column of P has its largest entry positive (SVD leaves the sign open).
    A d_c above d_k + d_v is refused; d_c above the rank gives columns that add nothing.
    """
    W_k, W_v = as_matrix(W_k, "W_k", "(d_in, d_out)"), as_matrix(W_v, "W_v", "(d_in, d_out)")
    if W_k.shape[0] != W_v.shape[0]:
        raise ValueError(f"W_k has shape {W_k.shape} but W_v has shape {W_v.shape}: both need d_in rows")
    W = np.concatenate([W_k, W_v], axis=1).astype(np.float64)  # (d_in, d_k + d_v)
    d_c = check_int(d_c, "d_c", minimum=1)
    if d_c > W.shape[1]:
        raise ValueError(f"d_c is {d_c} but keys and values have only {W.shape[1]} columns together "
                         f"(W_k {W_k.shape}, W_v {W_v.shape}): a wider latent stores more than K and V")
    target = W
    if X is not None:
        X = as_numeric(X, "X", min_ndim=2)
        check_weight(W_k, "W_k", X.shape[-1], X.shape)
        target = X.reshape(-1, X.shape[-1]) @ W  # (..·T, d_in) @ (d_in, d_k + d_v) -> (..·T, d_k + d_v): [K | V]
    _, _, Vt = np.linalg.svd(target, full_matrices=True)  # Vt (d_k + d_v, d_k + d_v), rows by singular value
    P = Vt[:d_c].T.copy()  # (d_k + d_v, d_c) the top d_c right singular vectors
    big = np.argmax(np.abs(P), axis=0)  # (d_c,) row of each column's largest entry
    P *= np.where(P[big, np.arange(d_c)] < 0, -1.0, 1.0)  # (d_k + d_v, d_c) that entry made positive
    W_dkv = W @ P  # (d_in, d_k + d_v) @ (d_k + d_v, d_c) -> (d_in, d_c)
    return W_dkv, P.T[:, : W_k.shape[1]].copy(), P.T[:, W_k.shape[1]:].copy()  # (d_in, d_c), (d_c, d_k), (d_c, d_v)


def latent_cache_bytes(n_layers: int, d_c: int, T: int, batch: int = 1, bytes_per_value: int = 2,
                       d_rope: int = 0) -> int:
    """Bytes of a latent cache: layers · (d_c + d_rope) · T · batch · bytes per number (one C, no K or V).

    d_rope: the width of DeepSeek-V2's decoupled rotary key, cached beside C (0: none).
    """
    values = [check_int(v, name, minimum=1) for name, v in (("n_layers", n_layers), ("d_c", d_c), ("T", T),
                                                             ("batch", batch), ("bytes_per_value", bytes_per_value))]
    d_rope = check_int(d_rope, "d_rope", minimum=0)
    n_layers, d_c, T, batch, size = values
    return n_layers * (d_c + d_rope) * T * batch * size  # Python ints: exact at any size


# --------------------------------------------------------------------------- linear attention


def elu_plus_one(x: object) -> np.ndarray:
    """φ(x) = elu(x) + 1: x + 1 for x > 0, e^x for x <= 0; always > 0 (Katharopoulos et al. 2020)."""
    x = as_numeric(x, "x")
    out = np.minimum(x, 0, out=np.empty_like(x))  # same shape: x where x <= 0, 0 elsewhere
    with np.errstate(under="ignore"):
        np.exp(out, out=out)  # e^x where x <= 0 (no overflow), e^0 = 1 elsewhere; in place: no second array
    np.add(x, 1, out=out, where=x > 0)  # x + 1 where x > 0
    return out


def _check_linear_qkv(
    Q: object, K: object, V: object, same_length: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Q, K and V (None: Q and K only) checked as for softmax attention; as many queries as keys if same_length."""
    Q, K, V, _ = check_qkv(Q, K, V)
    if same_length and Q.shape[-2] != K.shape[-2]:
        raise ValueError(
            f"causal attention needs as many queries as keys: Q has shape {Q.shape} ({Q.shape[-2]} queries) "
            f"but K has shape {K.shape} ({K.shape[-2]} keys)"
        )
    return Q, K, V


def _work_dtype(*arrays: np.ndarray) -> np.dtype:
    return np.result_type(*arrays, np.float32)  # float16 sums lose too much, as in softmax


def linear_attention_weights(Q: object, K: object, causal: bool = True) -> np.ndarray:
    """(..., T_q, T_k): φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j'), over j <= i when causal; every row sums to 1."""
    causal = check_flag(causal, "causal")
    Q, K, _ = _check_linear_qkv(Q, K, None, causal)
    dtype = _work_dtype(Q, K)
    fQ = elu_plus_one(Q).astype(dtype, copy=False)  # (..., T_q, d_k); a new array already: no copy
    fK = elu_plus_one(K).astype(dtype, copy=False)  # (..., T_k, d_k)
    A = fQ @ np.swapaxes(fK, -1, -2)  # (..., T_q, d_k) @ (..., d_k, T_k) -> (..., T_q, T_k), every entry > 0
    if causal:
        A = A * np.tri(A.shape[-1], dtype=bool)  # (..., T, T) the future gets exactly 0
    return A / A.sum(axis=-1, keepdims=True)  # (..., T_q, T_k) / (..., T_q, 1)


def linear_attention(Q: object, K: object, V: object, causal: bool = True) -> np.ndarray:
    """Linear attention, parallel form: row i is φ(q_i) Σ_j φ(k_j)ᵀ v_j / (φ(q_i) · Σ_j φ(k_j)), j <= i if causal.

    Q (..., T, d_k), K (..., T, d_k), V (..., T, d_v) -> (..., T, d_v). Causal: the (T, T) matrix of
    φ(q_i)·φ(k_j), masked and normalised (linear_attention_weights), times V, as softmax attention
    does with exp(q·k). Not causal: φ(Q) (φ(K)ᵀ V) / (φ(Q) Σ_j φ(k_j)), never forming a (T, T) matrix.
    """
    causal = check_flag(causal, "causal")
    Q, K, V = _check_linear_qkv(Q, K, V, causal)
    dtype = _work_dtype(Q, K, V)
    if causal:
        return linear_attention_weights(Q, K, causal=True).astype(dtype) @ V.astype(dtype)  # (.., T, T) @ (.., T, d_v)
    fQ = elu_plus_one(Q).astype(dtype, copy=False)  # (..., T, d_k); a new array already: no copy
    fK = elu_plus_one(K).astype(dtype, copy=False)  # (..., T, d_k)
    S = np.swapaxes(fK, -1, -2) @ V.astype(dtype)  # (..., d_k, T) @ (..., T, d_v) -> (..., d_k, d_v)
    z = fK.sum(axis=-2)[..., None]  # (..., T, d_k) -> (..., d_k, 1)
    return (fQ @ S) / (fQ @ z)  # (..., T, d_v) / (..., T, 1)


def linear_attention_recurrent(Q: object, K: object, V: object) -> np.ndarray:
    """Causal linear attention one token at a time: S += φ(k_t)ᵀ v_t, z += φ(k_t), out_t = φ(q_t) S / φ(q_t)·z.

    Q (..., T, d_k), K (..., T, d_k), V (..., T, d_v) -> (..., T, d_v). The state S (..., d_k, d_v) and
    z (..., d_k) have the same size at every step, whatever T: time grows like T, the state not at all.
    Equals linear_attention(Q, K, V, causal=True) in exact arithmetic; in floats to rounding.
    """
    Q, K, V = _check_linear_qkv(Q, K, V, same_length=True)
    dtype = _work_dtype(Q, K, V)
    fQ = elu_plus_one(Q).astype(dtype, copy=False)  # (..., T, d_k); a new array already: no copy
    fK = elu_plus_one(K).astype(dtype, copy=False)  # (..., T, d_k)
    V = V.astype(dtype, copy=False)  # (..., T, d_v), read only: no copy when it already has the work dtype
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    T, d_k, d_v = Q.shape[-2], Q.shape[-1], V.shape[-1]
    S = np.zeros((*lead, d_k, d_v), dtype=dtype)  # (..., d_k, d_v) Σ φ(k_j)ᵀ v_j so far (rows: outer products)
    z = np.zeros((*lead, d_k), dtype=dtype)  # (..., d_k) Σ φ(k_j) so far
    out = np.empty((*lead, T, d_v), dtype=dtype)  # (..., T, d_v)
    for t in range(T):
        k, q = fK[..., t, :], fQ[..., t, :]  # (..., d_k) each
        S += k[..., :, None] * V[..., t, None, :]  # (..., d_k, 1) * (..., 1, d_v) -> (..., d_k, d_v)
        z += k  # (..., d_k)
        num = (q[..., None, :] @ S)[..., 0, :]  # (..., 1, d_k) @ (..., d_k, d_v) -> (..., d_v)
        out[..., t, :] = num / (q * z).sum(axis=-1, keepdims=True)  # (..., d_v) / (..., 1)
    return out


def linear_state_bytes(d_k: int, d_v: int, n_heads: int = 1, n_layers: int = 1, batch: int = 1,
                       bytes_per_value: int = 2) -> int:
    """Bytes of linear attention's recurrent state: layers · heads · (d_k·d_v + d_k) · batch · bytes; no T."""
    vals = [check_int(v, name, minimum=1) for name, v in (("d_k", d_k), ("d_v", d_v), ("n_heads", n_heads),
                                                           ("n_layers", n_layers), ("batch", batch),
                                                           ("bytes_per_value", bytes_per_value))]
    d_k, d_v, n_heads, n_layers, batch, size = vals
    return n_layers * n_heads * (d_k * d_v + d_k) * batch * size
