"""The math of self-attention, in NumPy, with checked inputs.

Shape notation used throughout this module:

    ...      any leading batch / head dimensions (broadcast)
    T        number of tokens (T_q queries, T_k keys and values)
    d_in     features per input token (the width of X)
    d_model  width of the concatenated heads (the output width of W_q, W_k, W_v)
    d_k      width of one query / key vector (per head)
    d_v      width of one value vector (per head)
    h        number of heads
    B        sentences in a batch (padding_mask)
    B_c      keys in one block of tiled_attention (the FlashAttention paper's name)

Tokens are rows. Softmax runs over the last axis, i.e. over the keys, so every row
of an attention-weight matrix sums to 1.

Every public function checks its arguments (with ``helpers.validate``) and raises
``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind, wrong shape or value)
with a message that names the argument and the shapes it got. The exceptions are the
building blocks the other math modules reuse on arrays they have already checked, named
so: ``attend``, ``softmax_in_place``, ``split_heads_unchecked``, ``merge_heads_unchecked``
(not in ``__all__``).
"""

from __future__ import annotations

import math

import numpy as np

from helpers.validate import (
    MAX_BYTES,
    as_array,
    as_numeric,
    byte_size,
    check_axis,
    check_int,
    check_mask,
    check_qk_width,
    check_qkv,
    check_rng,
    check_scale,
    check_weight,
    refuse_empty_rows,
    refuse_overflow,
)

__all__ = [
    "softmax",
    "naive_softmax",
    "scaled_dot_product_attention",
    "self_attention",
    "project_qkv",
    "single_head_attention",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "causal_mask",
    "padding_mask",
    "tiled_attention",
    "tiled_attention_steps",
    "online_softmax_steps",
    "xavier_normal",
    "attention_steps",
]

# Limits on what one call may allocate, so that a typo (10**6 for 10**2) ends in a message, not a MemoryError
# or a frozen kernel. Far above the notebooks: notebook 08 measures attention up to T = 4,096.
MAX_T = 32_768  # causal_mask / padding_mask: a (T, T) boolean mask of 1 GiB
# xavier_normal: one float64 matrix of at most MAX_BYTES (1 GiB, helpers.validate)


# --------------------------------------------------------------------------- checks


def _check_T(T: object, func: str, what: str, itemsize: int) -> int:
    """T as an int from 1 to MAX_T; above, a ValueError naming T and the bytes of ``what`` (T², itemsize each)."""
    T = check_int(T, "T", minimum=1)
    if T > MAX_T:
        n_bytes = T * T * itemsize
        limit = "(a 1 GiB boolean mask)" if func == "causal_mask" else "as causal_mask does"
        raise ValueError(
            f"T = {T:,} is too large: {what} would take {n_bytes:,} bytes ({byte_size(n_bytes)}); "
            f"{func} accepts T up to {MAX_T:,} {limit}, so that a typo cannot exhaust the memory"
        )
    return T


# --------------------------------------------------------------------------- softmax


def softmax(x: object, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``: exp(x - max) / sum(exp(x - max))."""
    x = as_numeric(x, "x", min_ndim=1, finite="no_pos_inf")
    axis = check_axis(axis, x.ndim)
    out_dtype = x.dtype
    work = x.astype(np.float32) if x.dtype == np.float16 else x  # float16 sums lose too much
    m = np.max(work, axis=axis, keepdims=True)  # (..., 1, ...) the row maximum
    refuse_empty_rows(m, axis, x.shape)
    with np.errstate(over="ignore", under="ignore"):  # 1e308 - (-1e308) = -inf; exp(-inf) = 0 is exact
        e = np.exp(work - m)  # same shape as x; every exponent <= 0, the largest term is exactly 1
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(out_dtype, copy=False)


def naive_softmax(x: object, axis: int = -1) -> np.ndarray:
    """Textbook softmax exp(x) / sum(exp(x)); overflows to inf and nan on purpose."""
    x = as_numeric(x, "x", min_ndim=1, finite="none")
    axis = check_axis(axis, x.ndim)
    e = np.exp(x)  # overflows to inf for x > ~709.78 in float64 (88.72 float32, 11.09 float16)
    return e / np.sum(e, axis=axis, keepdims=True)


# --------------------------------------------------------------------------- attention


def _check_attention_inputs(
    Q: object, K: object, V: object, mask: object, scale: object
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, float]:
    """The checks of scaled_dot_product_attention and tiled_attention: (Q, K, V, mask, scale), checked."""
    Q, K, V, batch = check_qkv(Q, K, V)
    scale = check_scale(scale, Q.shape[-1])
    if mask is not None:
        scores_shape = (*batch, Q.shape[-2], K.shape[-2])
        mask = check_mask(mask, scores_shape, f"the scores' shape {scores_shape} (..., T_q, T_k)")
    return Q, K, V, mask, scale


def _max_abs(a: np.ndarray) -> float:
    return max(float(a.max()), -float(a.min()))  # two reductions, no |a| array


def _scores_cannot_overflow(Q: np.ndarray, K: np.ndarray, scale: float) -> bool:
    """True if no score Q Kᵀ · scale can overflow: a bound from Q and K, with no pass over the scores.

    A score is a sum of d_k products, so |score| <= d_k · max|Q| · max|K| · max(1, scale) (Q Kᵀ is
    formed before the scaling). Rounding the sum multiplies that by at most 1 + d_k·eps/(1 - d_k·eps)
    (Higham, Accuracy and Stability, 3.1): while d_k·eps <= 1/4, a margin of 4 covers it.
    False means "maybe": then the caller looks at the scores themselves.
    """
    finfo = np.finfo(np.result_type(Q, K))  # Q Kᵀ is computed in this type (the weights may be wider)
    d_k = Q.shape[-1]
    if d_k * float(finfo.eps) > 0.25:  # only float16, with d_k > 256
        return False
    bound = d_k * _max_abs(Q) * _max_abs(K) * max(1.0, scale)  # Python floats: inf, not an error, if huge
    return bound <= float(finfo.max) / 4


def _refuse_overflowing_scores(scores: np.ndarray, Q: np.ndarray, K: np.ndarray, mask: object) -> None:
    """Raise if a score that a query may see is not finite; overflow under a masked key is harmless."""
    visible = np.isfinite(scores) if mask is None else np.isfinite(scores) | ~mask
    if not visible.all():
        raise ValueError(
            f"the scores Q Kᵀ overflow {np.result_type(Q, K)} (Q shape {Q.shape}, largest |Q| {_max_abs(Q):.3g}; "
            f"K shape {K.shape}, largest |K| {_max_abs(K):.3g}); "
            "use smaller inputs or a wider float type"
        )


def softmax_in_place(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of checked scores (finite, or -inf where masked), overwriting them."""
    work = scores.astype(np.float32) if scores.dtype == np.float16 else scores  # float16 sums lose too much
    with np.errstate(over="ignore", under="ignore"):  # 1e308 - (-1e308) = -inf; exp(-inf) = 0 is exact
        work -= work.max(axis=-1, keepdims=True)  # (..., T_q, T_k) every entry <= 0, the largest exactly 0
        np.exp(work, out=work)  # (..., T_q, T_k) the largest entry of each row is exactly 1
    work /= work.sum(axis=-1, keepdims=True)  # (..., T_q, T_k) / (..., T_q, 1): every row sums to 1
    return work.astype(scores.dtype, copy=False)


def _scaled_scores(Q: np.ndarray, K: np.ndarray, scale: float, dtype: np.dtype) -> np.ndarray:
    """Q Kᵀ · scale as one new array of ``dtype``; an overflow gives inf, for the caller to check."""
    with np.errstate(over="ignore", invalid="ignore"):
        scores = Q @ np.swapaxes(K, -1, -2)  # (..., T_q, d_k) @ (..., d_k, T_k) -> (..., T_q, T_k)
        scores = scores.astype(dtype, copy=False)  # (..., T_q, T_k) a copy only if V is wider than Q, K
        scores *= dtype.type(scale)  # (..., T_q, T_k) in place: no second array
    return scores


def attend(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """The math of scaled_dot_product_attention, on checked arrays: one (T_q, T_k) array (float16: two)."""
    scores = _scaled_scores(Q, K, scale, np.result_type(Q, K, V))  # (..., T_q, T_k)
    if not _scores_cannot_overflow(Q, K, scale):
        _refuse_overflowing_scores(scores, Q, K, mask)
    if mask is not None:
        shape = np.broadcast_shapes(scores.shape, mask.shape)  # more batch dims than Q Kᵀ if V or the mask has them
        if shape != scores.shape:
            scores = np.broadcast_to(scores, shape).copy()  # (..., T_q, T_k) one row of scores per mask row
        np.copyto(scores, -np.inf, where=~mask)  # (..., T_q, T_k) masked keys get weight exactly 0
    weights = softmax_in_place(scores)  # (..., T_q, T_k) every row sums to 1; scores are gone
    output = weights @ V  # (..., T_q, T_k) @ (..., T_k, d_v) -> (..., T_q, d_v)
    return output, weights


def scaled_dot_product_attention(
    Q: object, K: object, V: object, mask: object = None, scale: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """softmax(Q Kᵀ · scale, masked) V; returns (output (..., T_q, d_v), weights (..., T_q, T_k))."""
    Q, K, V, mask, scale = _check_attention_inputs(Q, K, V, mask, scale)
    return attend(Q, K, V, mask, scale)


def tiled_attention(
    Q: object, K: object, V: object, block_size: int, mask: object = None, scale: float | None = None
) -> np.ndarray:
    """scaled_dot_product_attention's output (..., T_q, d_v), one key block at a time (online softmax).

    Never forms the (T_q, T_k) scores: per block of B_c keys it keeps, for every query row, the
    running maximum m, the running sum l of exp(score - m) and the running output acc, and rescales
    l and acc by exp(m_old - m_new) whenever the maximum grows (Milakov & Gimelshein 2018; Dao et
    al. 2022, FlashAttention). Same checks as scaled_dot_product_attention.
    """
    Q, K, V, mask, scale = _check_attention_inputs(Q, K, V, mask, scale)
    block_size = check_int(block_size, "block_size", minimum=1)
    dtype = np.result_type(Q, K, V)
    work = np.float32 if dtype == np.float16 else dtype  # as softmax: float16 sums lose too much
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    if mask is not None:
        mask = np.broadcast_to(mask, (*batch, T_q, T_k))  # (..., T_q, T_k) a view: no memory
    check_blocks = not _scores_cannot_overflow(Q, K, scale)  # usually False: no per-block pass

    m = np.full((*batch, T_q, 1), -np.inf, dtype=work)  # (..., T_q, 1) running row maximum
    l = np.zeros((*batch, T_q, 1), dtype=work)  # (..., T_q, 1) running sum of exp(score - m)
    acc = np.zeros((*batch, T_q, d_v), dtype=work)  # (..., T_q, d_v) running sum of exp(score - m) · v
    for start in range(0, T_k, block_size):
        stop = min(start + block_size, T_k)  # the last block may be shorter
        K_b, V_b = K[..., start:stop, :], V[..., start:stop, :]  # (..., B_c, d_k), (..., B_c, d_v)
        S_b = _scaled_scores(Q, K_b, scale, dtype)  # (..., T_q, d_k) @ (..., d_k, B_c) -> (..., T_q, B_c)
        mask_b = None if mask is None else mask[..., start:stop]  # (..., T_q, B_c)
        if check_blocks:
            _refuse_overflowing_scores(S_b, Q, K, mask_b)
        S_b = S_b.astype(work, copy=False)  # (..., T_q, B_c)
        if mask_b is not None:
            S_b = np.where(mask_b, S_b, -np.inf)  # (..., T_q, B_c) masked keys get weight exactly 0

        m_new = np.maximum(m, S_b.max(axis=-1, keepdims=True))  # (..., T_q, 1) the maximum so far
        # A row that has seen only masked keys keeps m_new = -inf; exp(-inf - (-inf)) would be NaN.
        # Subtract 0 there instead: its exponentials are exp(-inf) = 0, as they should be.
        m_safe = np.where(m_new == -np.inf, 0.0, m_new)  # (..., T_q, 1)
        with np.errstate(over="ignore", under="ignore"):  # -1e308 - 1e308 = -inf; exp(-inf) = 0
            alpha = np.exp(m - m_safe)  # (..., T_q, 1) rescales what was summed under the old maximum
            S_b -= m_safe  # (..., T_q, B_c) every entry <= 0
            P_b = np.exp(S_b, out=S_b)  # (..., T_q, B_c) in place: the block's scores become exp(score - m)
        l = alpha * l + P_b.sum(axis=-1, keepdims=True)  # (..., T_q, 1)
        acc *= alpha  # (..., T_q, d_v) the old sum, rescaled to the new maximum
        acc += P_b @ V_b.astype(work, copy=False)  # (..., T_q, B_c) @ (..., B_c, d_v) -> (..., T_q, d_v)
        m = m_new
    return (acc / l).astype(dtype, copy=False)  # (..., T_q, d_v) / (..., T_q, 1)


def tiled_attention_steps(Q: object, K: object, V: object, block_size: int, scale: float | None = None) -> list[dict]:
    """Every step of tiled_attention for one sequence (no mask): one dict per block of keys, in order.

    Each dict: start, stop (the block is keys start..stop-1), scores (T_q, B_c) the block's scaled
    scores, running_max m (T_q, 1), rescale exp(m_old - m) (T_q, 1; 0 at the first block, where
    nothing was summed), running_sum l (T_q, 1), acc (T_q, d_v) the sum of exp(score - m) · v so far,
    and output = acc / l (T_q, d_v): exact attention over the keys seen so far.
    """
    Q, K, V, _, scale = _check_attention_inputs(Q, K, V, None, scale)
    if Q.ndim != 2 or K.ndim != 2 or V.ndim != 2:
        raise ValueError(f"Q, K, V must be 2-D (one sequence), got shapes {Q.shape}, {K.shape}, {V.shape}; "
                         "for batches use tiled_attention")
    block_size = check_int(block_size, "block_size", minimum=1)
    dtype = np.result_type(Q, K, V, np.float32)  # float16 sums lose too much, as in softmax
    Q, K, V = Q.astype(dtype), K.astype(dtype), V.astype(dtype)
    T_q, T_k = Q.shape[0], K.shape[0]
    m = np.full((T_q, 1), -np.inf, dtype=dtype)  # (T_q, 1) running row maximum
    l = np.zeros((T_q, 1), dtype=dtype)  # (T_q, 1) running sum of exp(score - m)
    acc = np.zeros((T_q, V.shape[1]), dtype=dtype)  # (T_q, d_v) running sum of exp(score - m) · v
    steps = []
    for start in range(0, T_k, block_size):
        stop = min(start + block_size, T_k)  # the last block may be shorter
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
            S_b = Q @ K[start:stop].T * dtype.type(scale)  # (T_q, d_k) @ (d_k, B_c) -> (T_q, B_c)
        if not np.isfinite(S_b).all():
            raise ValueError(f"the scores of keys {start + 1}..{stop} overflow {dtype}: use smaller Q and K")
        m_new = np.maximum(m, S_b.max(axis=-1, keepdims=True))  # (T_q, 1) finite from the first block on
        rescale = np.exp(m - m_new)  # (T_q, 1) exp(-inf) = 0 at the first block: nothing to rescale
        P_b = np.exp(S_b - m_new)  # (T_q, B_c) every entry in (0, 1]
        l = rescale * l + P_b.sum(axis=-1, keepdims=True)  # (T_q, 1)
        acc = rescale * acc + P_b @ V[start:stop]  # (T_q, B_c) @ (B_c, d_v) -> (T_q, d_v)
        m = m_new
        steps.append({"start": start, "stop": stop, "scores": S_b, "running_max": m, "rescale": rescale,
                      "running_sum": l, "acc": acc, "output": acc / l})
    return steps


def online_softmax_steps(x: object, block_size: int) -> tuple[list[dict], np.ndarray]:
    """The online softmax of one row x, block by block: (one dict per block, the final softmax(x)).

    Each dict: start, stop (the block is x[start:stop]), block_max, running_max (m), rescale
    (exp(m_old - m_new), which multiplies the old sum), block_sum (sum of exp(x_b - m_new)) and
    running_sum (l). The final weights are exp(x - m) / l with the last m and l.
    """
    x = as_numeric(x, "x", min_ndim=1, finite="no_pos_inf")
    if x.ndim != 1:
        raise ValueError(f"x must be one row (1-D), got shape {x.shape}; for batches use tiled_attention")
    block_size = check_int(block_size, "block_size", minimum=1)
    work = x.astype(np.float32) if x.dtype == np.float16 else x  # as softmax
    if work.max() == -np.inf:
        raise ValueError(
            f"x is -inf everywhere (shape {x.shape}): softmax of nothing is undefined (a fully masked row?)"
        )
    m, l = -np.inf, 0.0
    steps = []
    with np.errstate(over="ignore", under="ignore"):
        for start in range(0, work.size, block_size):
            stop = min(start + block_size, work.size)
            x_b = work[start:stop]  # (B_c,)
            m_new = max(m, float(x_b.max()))
            m_safe = 0.0 if m_new == -np.inf else m_new  # a block of only -inf so far: see tiled_attention
            alpha = math.exp(m - m_safe)  # exp(-inf) = 0.0 in Python too
            block_sum = float(np.exp(x_b - m_safe).sum())
            l = alpha * l + block_sum
            m = m_new
            steps.append({"start": start, "stop": stop, "block_max": float(x_b.max()), "running_max": m,
                          "rescale": alpha, "block_sum": block_sum, "running_sum": l})
        weights = np.exp(work - m) / l  # (T,) the final max and sum, applied once
    return steps, weights.astype(x.dtype, copy=False)


def attention_steps(
    Q: object, K: object, V: object, scale: float | None = None
) -> dict[str, np.ndarray]:
    """Every intermediate of softmax(Q Kᵀ · scale) V, in order, for the step view.

    Keys: scores (Q Kᵀ), scaled, shifted (minus each row's max), exp, row_sums (..., T_q, 1),
    weights, output. Same checks and the same numbers as scaled_dot_product_attention.
    """
    output, weights = scaled_dot_product_attention(Q, K, V, scale=scale)
    dtype = weights.dtype
    Q, K = np.asarray(Q, dtype=dtype), np.asarray(K, dtype=dtype)
    scale = check_scale(scale, Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2)  # (..., T_q, d_k) @ (..., d_k, T_k) -> (..., T_q, T_k)
    scaled = scores * dtype.type(scale)  # (..., T_q, T_k)
    work = scaled.astype(np.float32) if dtype == np.float16 else scaled  # as softmax does
    shifted = work - work.max(axis=-1, keepdims=True)  # (..., T_q, T_k) every entry <= 0
    with np.errstate(under="ignore"):
        exp = np.exp(shifted)  # (..., T_q, T_k) the largest entry of each row is exactly 1
    row_sums = exp.sum(axis=-1, keepdims=True)  # (..., T_q, 1)
    return {
        "scores": scores,
        "scaled": scaled,
        "shifted": shifted.astype(dtype, copy=False),
        "exp": exp.astype(dtype, copy=False),
        "row_sums": row_sums.astype(dtype, copy=False),
        "weights": weights,
        "output": output,
    }


def self_attention(X: object, scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Attention without weight matrices, softmax(X Xᵀ · scale) X, scale=None meaning 1/√d."""
    X = as_numeric(X, "X", min_ndim=2)
    return scaled_dot_product_attention(X, X, X, scale=scale)


def project_qkv(
    X: object, W_q: object, W_k: object, W_v: object
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q = X W_q, K = X W_k, V = X W_v for X (..., T, d_in) and each W (d_in, d_out)."""
    X = as_numeric(X, "X", min_ndim=2)
    d_in = X.shape[-1]
    W_q = check_weight(W_q, "W_q", d_in, X.shape)
    W_k = check_weight(W_k, "W_k", d_in, X.shape)
    W_v = check_weight(W_v, "W_v", d_in, X.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        Q = X @ W_q  # (..., T, d_in) @ (d_in, d_k) -> (..., T, d_k)
        K = X @ W_k  # (..., T, d_in) @ (d_in, d_k) -> (..., T, d_k)
        V = X @ W_v  # (..., T, d_in) @ (d_in, d_v) -> (..., T, d_v)
    for name, W, P in (("W_q", W_q, Q), ("W_k", W_k, K), ("W_v", W_v, V)):
        refuse_overflow(P, f"X {X.shape} @ {name} {W.shape}")
    return Q, K, V


def single_head_attention(
    X: object,
    W_q: object,
    W_k: object,
    W_v: object,
    mask: object = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """softmax((X W_q)(X W_k)ᵀ · scale) (X W_v); returns (output (..., T, d_v), weights (..., T, T))."""
    Q, K, V = project_qkv(X, W_q, W_k, W_v)
    check_qk_width(np.shape(W_q), np.shape(W_k))
    return scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)


# --------------------------------------------------------------------------- heads


def _heads_message(name: str, d_model: int, n_heads: int) -> str:
    return (
        f"{name}: the hidden size {d_model} (d_model) is not a multiple of the number of attention "
        f"heads {n_heads}; each head needs d_model / n_heads columns"
    )


def split_heads_unchecked(x: np.ndarray, n_heads: int) -> np.ndarray:
    """split_heads without its checks, as a view: for arrays already checked (d_model a multiple of n_heads)."""
    *lead, T, d_model = x.shape
    x = x.reshape(*lead, T, n_heads, d_model // n_heads)  # (..., T, d_model) -> (..., T, h, d_head)
    return np.swapaxes(x, -3, -2)  # (..., T, h, d_head) -> (..., h, T, d_head), a view


def merge_heads_unchecked(x: np.ndarray) -> np.ndarray:
    """merge_heads without its checks: (..., h, T, d_head) -> (..., T, h·d_head)."""
    *lead, h, T, d_head = x.shape
    x = np.swapaxes(x, -3, -2)  # (..., h, T, d_head) -> (..., T, h, d_head)
    return x.reshape(*lead, T, h * d_head)  # (..., T, h, d_head) -> (..., T, h * d_head)


def split_heads(x: object, n_heads: int) -> np.ndarray:
    """(..., T, d_model) -> (..., h, T, d_model/h): reshape to (..., T, h, d_head), then swap T and h."""
    x = as_numeric(x, "x", min_ndim=2)
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    if x.shape[-1] % n_heads:
        raise ValueError(_heads_message(f"x with shape {x.shape}", x.shape[-1], n_heads))
    return np.ascontiguousarray(split_heads_unchecked(x, n_heads))  # (..., h, T, d_head), a copy


def merge_heads(x: object) -> np.ndarray:
    """(..., h, T, d_head) -> (..., T, h·d_head): the exact inverse of split_heads."""
    x = as_numeric(x, "x", min_ndim=3)
    return merge_heads_unchecked(x)  # (..., h, T, d_head) -> (..., T, h * d_head)


def multi_head_attention(
    X: object,
    W_q: object,
    W_k: object,
    W_v: object,
    n_heads: int,
    W_o: object = None,
    mask: object = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Project, split into h heads, attend per head (scale 1/√d_head), concatenate, then W_o if given.

    Returns (output (..., T, d_out), weights (..., h, T, T)); with W_o=None the output is the
    concatenated heads (..., T, d_model), as the PyTorch reference text returns it.
    """
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    Q, K, V = project_qkv(X, W_q, W_k, W_v)  # (..., T, d_model) each; checks X and every W, once
    check_qk_width(np.shape(W_q), np.shape(W_k))
    for name, width in (("W_q", Q.shape[-1]), ("W_v", V.shape[-1])):
        if width % n_heads:
            raise ValueError(
                _heads_message(f"{name} with shape {np.shape(W_q if name == 'W_q' else W_v)}", width, n_heads)
            )
    d_model_v = V.shape[-1]
    if W_o is not None:
        W_o = as_numeric(W_o, "W_o")
        if W_o.ndim != 2 or W_o.shape[0] != d_model_v:
            raise ValueError(
                f"W_o has shape {W_o.shape} but the concatenated heads have {d_model_v} columns; "
                f"W_o needs shape ({d_model_v}, d_out)"
            )
    if mask is not None:
        *lead, T, _ = Q.shape
        shape = (*lead, T, T)
        mask = check_mask(mask, shape, f"(..., T, T) = {shape} for X with shape {np.shape(X)}")
        if mask.ndim >= 3:  # a per-batch mask (..., T, T) lines up with (..., h, T, T) once it has a head axis
            mask = np.expand_dims(mask, -3)
    # The heads are views of Q, K, V (no copies) and were checked as part of them: attend directly.
    out, weights = attend(
        split_heads_unchecked(Q, n_heads),  # (..., h, T, d_k)
        split_heads_unchecked(K, n_heads),  # (..., h, T, d_k)
        split_heads_unchecked(V, n_heads),  # (..., h, T, d_v)
        mask,
        scale=1.0 / math.sqrt(Q.shape[-1] // n_heads),  # 1/√d_head, not 1/√d_model
    )  # out (..., h, T, d_v), weights (..., h, T, T)
    concat = merge_heads_unchecked(out)  # (..., h, T, d_v) -> (..., T, h * d_v)
    if W_o is None:
        return concat, weights
    with np.errstate(over="ignore", invalid="ignore"):
        out = concat @ W_o  # (..., T, h * d_v) @ (h * d_v, d_out) -> (..., T, d_out)
    refuse_overflow(out, f"concat(heads) {concat.shape} @ W_o {W_o.shape}")
    return out, weights


# --------------------------------------------------------------------------- small tools


def causal_mask(T: int) -> np.ndarray:
    """Boolean (T, T) mask, True on and below the diagonal: token i may attend to tokens 0..i."""
    T = _check_T(T, "causal_mask", "the (T, T) boolean mask", 1)
    return np.arange(T)[:, None] >= np.arange(T)  # (T, 1) >= (T,) -> (T, T) key j <= query i


def padding_mask(lengths: object, T: int) -> np.ndarray:
    """Boolean (B, 1, T) key padding mask: True where key j < lengths[b], broadcast over the queries.

    For scores with a head axis (B, h, T_q, T_k), add one: ``padding_mask(...)[:, None]``
    (multi_head_attention does that itself).
    """
    T = _check_T(T, "padding_mask", "the (T, T) float64 attention weights it masks", 8)
    words = "a 1-D sequence of integers"
    arr = as_array(lengths, "lengths", what=words, rectangular=words)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"lengths must be a non-empty 1-D sequence (one length per sentence), got shape {arr.shape}")
    # a list such as [True, 2] becomes an int array: look at the caller's own items for booleans
    has_bool = not isinstance(lengths, np.ndarray) and any(
        isinstance(v, (bool, np.bool_)) for v in np.asarray(lengths, dtype=object).ravel()
    )
    if arr.dtype == bool or arr.dtype.kind not in "iu" or has_bool:
        raise TypeError(
            f"lengths must hold integers (the number of real tokens of each sentence), got {lengths!r} "
            f"(dtype {arr.dtype}); 2.0 and True are not lengths"
        )
    for b, n in enumerate(arr.tolist()):
        if n < 1:
            raise ValueError(
                f"lengths[{b}] is {n}: a sentence needs at least 1 real token, or its query rows would be "
                "left with nothing to attend to"
            )
        if n > T:
            raise ValueError(f"lengths[{b}] is {n} but T is {T}: a sentence cannot be longer than the padded length T")
    return np.arange(T) < arr[:, None, None]  # (T,) < (B, 1, 1) -> (B, 1, T)


def xavier_normal(n_in: int, n_out: int, rng: np.random.Generator) -> np.ndarray:
    """Weights (n_in, n_out) drawn from N(0, std²) with std = sqrt(2 / (n_in + n_out))."""
    n_in = check_int(n_in, "n_in", minimum=1)
    n_out = check_int(n_out, "n_out", minimum=1)
    if n_in * n_out * 8 > MAX_BYTES:
        raise ValueError(
            f"n_in = {n_in:,} and n_out = {n_out:,} are too large: the (n_in, n_out) float64 matrix would take "
            f"{n_in * n_out * 8:,} bytes ({byte_size(n_in * n_out * 8)}); xavier_normal makes matrices of at most "
            f"{MAX_BYTES // 8:,} numbers (1 GiB), so that a typo cannot exhaust the memory"
        )
    check_rng(rng)
    std = math.sqrt(2.0 / (n_in + n_out))
    return rng.normal(0.0, std, size=(n_in, n_out))  # (n_in, n_out)
