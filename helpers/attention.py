"""The math of self-attention, in NumPy, with checked inputs.

Shape notation used throughout this module:

    ...      any leading batch / head dimensions (broadcast)
    T        number of tokens (T_q queries, T_k keys and values)
    d_in     features per input token (the width of X)
    d_model  width of the concatenated heads (the output width of W_q, W_k, W_v)
    d_k      width of one query / key vector (per head)
    d_v      width of one value vector (per head)
    h        number of heads

Tokens are rows. Softmax runs over the last axis, i.e. over the keys, so every row
of an attention-weight matrix sums to 1.

Every public function checks its arguments and raises ``TypeError`` (wrong kind of
thing) or ``ValueError`` (right kind, wrong shape or value) with a message that
names the argument and the shapes it got.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

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
    "xavier_normal",
    "attention_steps",
]

_FLOATS = (np.float16, np.float32, np.float64)


# --------------------------------------------------------------------------- checks


def _as_numeric(x: object, name: str, *, min_ndim: int = 0, finite: str = "all") -> np.ndarray:
    """Return ``x`` as a float array, or raise a message that names ``name``.

    finite: "all" rejects NaN and ±inf, "no_pos_inf" rejects NaN and +inf (softmax
    accepts -inf as "weight 0"), "none" checks nothing (the naive softmax).
    """
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, got a {type(x).__name__}")
    try:
        arr = np.asarray(x)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular numeric array: {err}") from None
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold real numbers (int or float), got dtype {arr.dtype}"
            + (" (booleans are masks, not scores)" if arr.dtype == bool else "")
        )
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}): attention needs at least one token and one feature")
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.float64)
    elif arr.dtype not in _FLOATS:  # longdouble and friends
        arr = arr.astype(np.float64)
    if finite != "none":
        if np.isnan(arr).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(arr))[0])
            raise ValueError(f"{name} contains NaN (first at index {where}, shape {arr.shape})")
        bad = np.isinf(arr) if finite == "all" else np.isposinf(arr)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            kind = "an infinite value" if finite == "all" else "+inf"
            raise ValueError(f"{name} contains {kind} (first at index {where}, shape {arr.shape})")
    return arr


def _check_int(value: object, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def _as_mask(mask: object) -> np.ndarray:
    try:
        arr = np.asarray(mask)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"mask must be a rectangular boolean array: {err}") from None
    if arr.dtype != bool:
        raise TypeError(
            f"mask must be a boolean array (True = may attend), got dtype {arr.dtype} with shape {arr.shape}; "
            "for an additive -inf mask, add it to the scores yourself"
        )
    return arr


def _check_scale(scale: object, d_k: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number or None (meaning 1/sqrt(d_k)), got {scale!r}")
    scale = float(scale)
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a finite number > 0, got {scale}")
    return scale


def _check_weight(W: object, name: str, d_in: int, x_shape: tuple) -> np.ndarray:
    W = _as_numeric(W, name)
    if W.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix (d_in, d_out), got shape {W.shape}")
    if W.shape[0] != d_in:
        raise ValueError(
            f"{name} has shape {W.shape} but X has {d_in} features (X shape {x_shape}); "
            f"{name} needs {d_in} rows"
        )
    return W


# --------------------------------------------------------------------------- softmax


def _check_axis(axis: object, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"axis must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for an array with {ndim} dimensions")
    return int(axis)


def _refuse_empty_rows(row_max: np.ndarray, axis: int, shape: tuple) -> None:
    """Raise if a row's maximum (kept dims) is -inf: every entry of that row is -inf."""
    if np.isneginf(row_max).any():
        where = tuple(int(i) for i in np.argwhere(np.isneginf(np.squeeze(row_max, axis)))[0])
        raise ValueError(
            f"x has a row along axis {axis} whose every entry is -inf (the row at index {where} of the "
            f"other axes, shape {shape}); softmax of nothing is undefined (a fully masked row?)"
        )


def softmax(x: object, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``: exp(x - max) / sum(exp(x - max))."""
    x = _as_numeric(x, "x", min_ndim=1, finite="no_pos_inf")
    axis = _check_axis(axis, x.ndim)
    out_dtype = x.dtype
    work = x.astype(np.float32) if x.dtype == np.float16 else x  # float16 sums lose too much
    m = np.max(work, axis=axis, keepdims=True)  # (..., 1, ...) the row maximum
    _refuse_empty_rows(m, axis, x.shape)
    with np.errstate(over="ignore", under="ignore"):  # 1e308 - (-1e308) = -inf; exp(-inf) = 0 is exact
        e = np.exp(work - m)  # same shape as x; every exponent <= 0, the largest term is exactly 1
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(out_dtype, copy=False)


def naive_softmax(x: object, axis: int = -1) -> np.ndarray:
    """Textbook softmax exp(x) / sum(exp(x)); overflows to inf and nan on purpose."""
    x = _as_numeric(x, "x", min_ndim=1, finite="none")
    axis = _check_axis(axis, x.ndim)
    e = np.exp(x)  # overflows to inf for x > ~709.78 in float64 (88.72 float32, 11.09 float16)
    return e / np.sum(e, axis=axis, keepdims=True)


# --------------------------------------------------------------------------- attention


def scaled_dot_product_attention(
    Q: object, K: object, V: object, mask: object = None, scale: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """softmax(Q Kᵀ · scale, masked) V; returns (output (..., T_q, d_v), weights (..., T_q, T_k))."""
    Q = _as_numeric(Q, "Q", min_ndim=2)
    K = _as_numeric(K, "K", min_ndim=2)
    V = _as_numeric(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q and K must have the same last dimension d_k: Q has shape {Q.shape} (d_k={Q.shape[-1]}) "
            f"but K has shape {K.shape} (d_k={K.shape[-1]})"
        )
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K and V must have the same number of tokens T_k: K has shape {K.shape} ({K.shape[-2]} keys) "
            f"but V has shape {V.shape} ({V.shape[-2]} values)"
        )
    try:
        batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch/head) dimensions of Q {Q.shape}, K {K.shape} and V {V.shape} do not broadcast"
        ) from None
    d_k, T_q, T_k = Q.shape[-1], Q.shape[-2], K.shape[-2]
    scale = _check_scale(scale, d_k)
    scores_shape = (*batch, T_q, T_k)

    if mask is not None:
        mask = _as_mask(mask)
        try:
            ok = np.broadcast_shapes(mask.shape, scores_shape) == scores_shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"mask has shape {mask.shape}, which does not broadcast to the scores' shape "
                f"{scores_shape} (..., T_q, T_k)"
            )
        mask = np.broadcast_to(mask, scores_shape)  # (..., T_q, T_k)
        empty = ~mask.any(axis=-1)  # (..., T_q) rows with nothing to attend to
        if empty.any():
            where = tuple(int(i) for i in np.argwhere(empty)[0])
            raise ValueError(
                f"mask leaves query row {where[-1]} (index {where}) with every key masked; "
                "softmax over no keys is undefined"
            )

    dtype = np.result_type(Q, K, V)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (Q @ np.swapaxes(K, -1, -2)) * dtype.type(scale)  # (..., T_q, d_k) @ (..., d_k, T_k) -> (..., T_q, T_k)
    visible = np.isfinite(scores) if mask is None else np.isfinite(scores) | ~mask
    if not visible.all():
        raise ValueError(
            f"the scores Q Kᵀ overflow {dtype} (Q shape {Q.shape}, largest |Q| {np.abs(Q).max():.3g}; "
            f"K shape {K.shape}, largest |K| {np.abs(K).max():.3g}); "
            "use smaller inputs or a wider float type"
        )
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)  # (..., T_q, T_k) masked keys get weight exactly 0
    weights = softmax(scores, axis=-1)  # (..., T_q, T_k) every row sums to 1
    output = weights @ V  # (..., T_q, T_k) @ (..., T_k, d_v) -> (..., T_q, d_v)
    return output, weights


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
    scale = _check_scale(scale, Q.shape[-1])
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
    """Attention without weights, softmax(X Xᵀ · scale) X, scale=None meaning 1/√d."""
    X = _as_numeric(X, "X", min_ndim=2)
    return scaled_dot_product_attention(X, X, X, scale=scale)


def project_qkv(
    X: object, W_q: object, W_k: object, W_v: object
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q = X W_q, K = X W_k, V = X W_v for X (..., T, d_in) and each W (d_in, d_out)."""
    X = _as_numeric(X, "X", min_ndim=2)
    d_in = X.shape[-1]
    W_q = _check_weight(W_q, "W_q", d_in, X.shape)
    W_k = _check_weight(W_k, "W_k", d_in, X.shape)
    W_v = _check_weight(W_v, "W_v", d_in, X.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        Q = X @ W_q  # (..., T, d_in) @ (d_in, d_k) -> (..., T, d_k)
        K = X @ W_k  # (..., T, d_in) @ (d_in, d_k) -> (..., T, d_k)
        V = X @ W_v  # (..., T, d_in) @ (d_in, d_v) -> (..., T, d_v)
    for name, W, P in (("W_q", W_q, Q), ("W_k", W_k, K), ("W_v", W_v, V)):
        _check_product_finite(P, f"X {X.shape} @ {name} {W.shape}")
    return Q, K, V


def _check_product_finite(P: np.ndarray, what: str) -> None:
    if not np.isfinite(P).all():
        raise ValueError(
            f"the product {what} overflows {P.dtype} (largest finite |entry| is {np.finfo(P.dtype).max:.3g}); "
            "use smaller inputs or weights"
        )


def _check_qk_width(W_q_shape: tuple, W_k_shape: tuple) -> None:
    if W_q_shape[1] != W_k_shape[1]:
        raise ValueError(
            f"W_q has shape {W_q_shape} but W_k has shape {W_k_shape}: queries and keys must have the "
            f"same width d_k to be compared by a dot product"
        )


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
    _check_qk_width(np.shape(W_q), np.shape(W_k))
    return scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)


# --------------------------------------------------------------------------- heads


def _heads_message(name: str, d_model: int, n_heads: int) -> str:
    return (
        f"{name}: the hidden size {d_model} (d_model) is not a multiple of the number of attention "
        f"heads {n_heads}; each head needs d_model / n_heads columns"
    )


def split_heads(x: object, n_heads: int) -> np.ndarray:
    """(..., T, d_model) -> (..., h, T, d_model/h): reshape to (..., T, h, d_head), then swap T and h."""
    x = _as_numeric(x, "x", min_ndim=2)
    n_heads = _check_int(n_heads, "n_heads", minimum=1)
    *lead, T, d_model = x.shape
    if d_model % n_heads:
        raise ValueError(_heads_message(f"x with shape {x.shape}", d_model, n_heads))
    x = x.reshape(*lead, T, n_heads, d_model // n_heads)  # (..., T, d_model) -> (..., T, h, d_head)
    return np.ascontiguousarray(np.swapaxes(x, -3, -2))  # (..., T, h, d_head) -> (..., h, T, d_head), a copy


def merge_heads(x: object) -> np.ndarray:
    """(..., h, T, d_head) -> (..., T, h·d_head): the exact inverse of split_heads."""
    x = _as_numeric(x, "x", min_ndim=3)
    *lead, h, T, d_head = x.shape
    x = np.swapaxes(x, -3, -2)  # (..., h, T, d_head) -> (..., T, h, d_head)
    return x.reshape(*lead, T, h * d_head)  # (..., T, h, d_head) -> (..., T, h * d_head)


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
    n_heads = _check_int(n_heads, "n_heads", minimum=1)
    Q, K, V = project_qkv(X, W_q, W_k, W_v)  # (..., T, d_model) each
    _check_qk_width(np.shape(W_q), np.shape(W_k))
    for name, width in (("W_q", Q.shape[-1]), ("W_v", V.shape[-1])):
        if width % n_heads:
            raise ValueError(_heads_message(f"{name} with shape {np.shape(W_q if name == 'W_q' else W_v)}", width, n_heads))
    d_model_v = V.shape[-1]
    if W_o is not None:
        W_o = _as_numeric(W_o, "W_o")
        if W_o.ndim != 2 or W_o.shape[0] != d_model_v:
            raise ValueError(
                f"W_o has shape {W_o.shape} but the concatenated heads have {d_model_v} columns; "
                f"W_o needs shape ({d_model_v}, d_out)"
            )
    if mask is not None:
        mask = _as_mask(mask)
        T = Q.shape[-2]
        lead = Q.shape[:-2]
        try:
            ok = np.broadcast_shapes(mask.shape, (*lead, T, T)) == (*lead, T, T)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"mask has shape {mask.shape}, which does not broadcast to (..., T, T) = {(*lead, T, T)} "
                f"for X with shape {np.shape(X)}"
            )
        if mask.ndim >= 3:  # a per-batch mask (..., T, T) lines up with (..., h, T, T) once it has a head axis
            mask = np.expand_dims(mask, -3)
    out, weights = scaled_dot_product_attention(
        split_heads(Q, n_heads),  # (..., h, T, d_k)
        split_heads(K, n_heads),  # (..., h, T, d_k)
        split_heads(V, n_heads),  # (..., h, T, d_v)
        mask=mask,
    )  # out (..., h, T, d_v), weights (..., h, T, T)
    concat = merge_heads(out)  # (..., h, T, d_v) -> (..., T, h * d_v)
    if W_o is None:
        return concat, weights
    with np.errstate(over="ignore", invalid="ignore"):
        out = concat @ W_o  # (..., T, h * d_v) @ (h * d_v, d_out) -> (..., T, d_out)
    _check_product_finite(out, f"concat(heads) {concat.shape} @ W_o {W_o.shape}")
    return out, weights


# --------------------------------------------------------------------------- small tools


def causal_mask(T: int) -> np.ndarray:
    """Boolean (T, T) mask, True on and below the diagonal: token i may attend to tokens 0..i."""
    T = _check_int(T, "T", minimum=1)
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def xavier_normal(n_in: int, n_out: int, rng: np.random.Generator) -> np.ndarray:
    """Weights (n_in, n_out) drawn from N(0, std²) with std = sqrt(2 / (n_in + n_out))."""
    n_in = _check_int(n_in, "n_in", minimum=1)
    n_out = _check_int(n_out, "n_out", minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy Generator, e.g. np.random.default_rng(0), got {type(rng).__name__}"
        )
    std = math.sqrt(2.0 / (n_in + n_out))
    return rng.normal(0.0, std, size=(n_in, n_out))  # (n_in, n_out)
