"""Backpropagation through attention by hand, in NumPy, with checked inputs.

Shape notation used throughout this module (the same as in ``helpers.attention``):

    ...      any leading batch / head dimensions (broadcast)
    T        number of tokens (T_q queries, T_k keys and values)
    d_k      width of one query / key vector
    d_v      width of one value vector

The forward pass is ``helpers.attention.scaled_dot_product_attention``:

    S = Q Kᵀ · scale     scaled scores         (..., T_q, T_k)
    P = softmax(S)        attention weights     (..., T_q, T_k), softmax over the keys
    O = P V               output                (..., T_q, d_v)

Given ``grad_output`` = dL/dO for some scalar loss L, the backward pass runs these steps in
reverse. A gradient ``dX`` always has the shape of ``X``:

    dV = Pᵀ dO                                  (..., T_k, d_v)
    dP = dO Vᵀ                                  (..., T_q, T_k)
    dS = P ∘ (dP − rowsum(dP ∘ P))              (..., T_q, T_k)  the softmax step, row by row
    dQ = dS K · scale,   dK = dSᵀ Q · scale     (..., T_q, d_k), (..., T_k, d_k)

When Q, K and V broadcast against each other (for example one K shared by every batch entry),
each gradient is summed over the axes that broadcasting added or stretched, so it has the
shape of its own input.

Every public function checks its arguments and raises ``TypeError`` (wrong kind of thing) or
``ValueError`` (right kind, wrong shape or value) with a message that names the argument and
the shapes it got. ``softmax_backward_unchecked`` (not in ``__all__``) is the softmax step on checked arrays:
this module's attention backward and the small GPT's (``helpers.language_model``) both call it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from helpers.attention import scaled_dot_product_attention
from helpers.validate import as_numeric, check_callable, check_real, check_scale

__all__ = [
    "softmax_jacobian",
    "softmax_backward",
    "attention_backward",
    "attention_backward_steps",
    "numerical_gradient",
]


# --------------------------------------------------------------------------- checks


def _row_sum_tolerance(dtype: np.dtype, T: int) -> float:
    """How far a row of rounded probabilities may sum from 1: 8 roundings per entry, at least 1e-6."""
    return max(1e-6, 8 * T * float(np.finfo(dtype).eps))


def _check_probability_rows(P: np.ndarray, name: str) -> None:
    """Raise unless every row (last axis) of ``P`` is >= 0 and sums to 1: attention weights."""
    if (P < 0).any():
        where = tuple(int(i) for i in np.argwhere(P < 0)[0])
        raise ValueError(
            f"{name} must hold attention weights (each row >= 0, summing to 1), but {name}{list(where)} = "
            f"{float(P[where]):.6g} is negative (shape {P.shape}); did you pass scores instead of weights?"
        )
    sums = P.sum(axis=-1, dtype=np.float64)  # (...,) one sum per row
    tol = _row_sum_tolerance(P.dtype, P.shape[-1])
    bad = np.abs(sums - 1.0) > tol
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} must hold attention weights (each row >= 0, summing to 1), but the row at index "
            f"{where} sums to {float(sums[where]):.6g} (tolerance {tol:.1g}, shape {P.shape}); "
            "did you pass scores instead of weights?"
        )


def _check_finite_result(arrays: dict[str, np.ndarray], why: str) -> None:
    for name, arr in arrays.items():
        if not np.isfinite(arr).all():
            raise ValueError(
                f"the gradient {name} (shape {arr.shape}) overflows {arr.dtype} ({why}); "
                "use smaller inputs or a wider float type"
            )


def _sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes that broadcasting added (leading) or stretched (size 1 in ``shape``)."""
    added = grad.ndim - len(shape)
    if added:
        grad = grad.sum(axis=tuple(range(added)))  # (*added, *shape') -> shape'
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)  # size n -> size 1 on each stretched axis
    return grad


# --------------------------------------------------------------------------- softmax


def softmax_backward_unchecked(P: np.ndarray, dP: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The one place of the formula, on checked arrays (helpers.language_model's backward pass calls it too):
    returns (rowsum(dP ∘ P) (..., T_q, 1), dS (..., T_q, T_k))."""
    row_dot = np.sum(dP * P, axis=-1, keepdims=True)  # (..., T_q, T_k) -> (..., T_q, 1)
    dS = P * (dP - row_dot)  # (..., T_q, T_k)
    return row_dot, dS


def softmax_jacobian(p: object) -> np.ndarray:
    """The Jacobian ∂softmax_i/∂s_j = diag(p) − p pᵀ (T, T) of one row of attention weights p (T,)."""
    p = as_numeric(p, "p", min_ndim=1)
    if p.ndim != 1:
        raise ValueError(
            f"p must be one row of attention weights, shape (T,), got shape {p.shape}; "
            "for a whole matrix use softmax_backward(P, dP)"
        )
    _check_probability_rows(p, "p")
    return np.diag(p) - np.outer(p, p)  # (T, T) - (T, 1)(1, T) -> (T, T), symmetric, rows sum to 0


def softmax_backward(P: object, dP: object) -> np.ndarray:
    """dS = P ∘ (dP − rowsum(dP ∘ P)) (..., T_q, T_k): each row equals softmax_jacobian(P[i]) @ dP[i]."""
    P = as_numeric(P, "P", min_ndim=1)
    dP = as_numeric(dP, "dP", min_ndim=1)
    if P.shape != dP.shape:
        raise ValueError(
            f"dP has shape {dP.shape} but P has shape {P.shape}; the gradient with respect to the "
            "attention weights must have the weights' shape (..., T_q, T_k)"
        )
    _check_probability_rows(P, "P")
    dtype = np.result_type(P, dP)
    P, dP = P.astype(dtype, copy=False), dP.astype(dtype, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        _, dS = softmax_backward_unchecked(P, dP)  # (..., T_q, T_k)
    _check_finite_result({"dS": dS}, f"P shape {P.shape}, largest |dP| {np.abs(dP).max():.3g}")
    return dS


# --------------------------------------------------------------------------- attention


def _checked_forward(
    Q: object, K: object, V: object, grad_output: object, mask: object, scale: object
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Run the forward pass (it checks Q, K, V, mask, scale), then check grad_output against its output."""
    output, weights = scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)
    dO = as_numeric(grad_output, "grad_output")
    if dO.shape != output.shape:
        raise ValueError(
            f"grad_output has shape {dO.shape} but the attention output has shape {output.shape} "
            f"(..., T_q, d_v); grad_output = dL/d(output) must have exactly the output's shape"
        )
    dtype = weights.dtype  # gradients come back in the forward pass's float type
    Q, K, V = (np.asarray(A, dtype=dtype) for A in (Q, K, V))
    scale = check_scale(scale, Q.shape[-1])
    return Q, K, V, weights, dO.astype(dtype, copy=False), scale


def _backward(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, P: np.ndarray, dO: np.ndarray, scale: float
) -> dict[str, np.ndarray]:
    """Every step of the backward pass, in order; dQ, dK, dV summed back to Q's, K's, V's shapes."""
    s = P.dtype.type(scale)
    with np.errstate(over="ignore", invalid="ignore"):
        dV = np.swapaxes(P, -1, -2) @ dO  # (..., T_k, T_q) @ (..., T_q, d_v) -> (..., T_k, d_v)
        dP = dO @ np.swapaxes(V, -1, -2)  # (..., T_q, d_v) @ (..., d_v, T_k) -> (..., T_q, T_k)
        row_dot, dS = softmax_backward_unchecked(P, dP)  # (..., T_q, 1), (..., T_q, T_k)
        dscores = dS * s  # (..., T_q, T_k) gradient with respect to the unscaled scores Q Kᵀ
        dQ = dscores @ K  # (..., T_q, T_k) @ (..., T_k, d_k) -> (..., T_q, d_k)
        dK = np.swapaxes(dscores, -1, -2) @ Q  # (..., T_k, T_q) @ (..., T_q, d_k) -> (..., T_k, d_k)
        dQ = _sum_to_shape(dQ, Q.shape)  # (..., T_q, d_k) -> Q.shape
        dK = _sum_to_shape(dK, K.shape)  # (..., T_k, d_k) -> K.shape
        dV = _sum_to_shape(dV, V.shape)  # (..., T_k, d_v) -> V.shape
    _check_finite_result(
        {"dV": dV, "dP": dP, "dQ": dQ, "dK": dK},
        f"Q {Q.shape}, K {K.shape}, V {V.shape}, largest |grad_output| {np.abs(dO).max():.3g}",
    )
    return {
        "weights": P,
        "dV": dV,
        "dP": dP,
        "row_dot": row_dot,
        "dS": dS,
        "dscores": dscores,
        "dQ": dQ,
        "dK": dK,
    }


def attention_backward(
    Q: object,
    K: object,
    V: object,
    grad_output: object,
    mask: object = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dQ, dK, dV): the gradients of sum(grad_output ∘ attention(Q, K, V)), each of its input's shape."""
    Q, K, V, P, dO, scale = _checked_forward(Q, K, V, grad_output, mask, scale)
    steps = _backward(Q, K, V, P, dO, scale)
    return steps["dQ"], steps["dK"], steps["dV"]


def attention_backward_steps(
    Q: object, K: object, V: object, grad_output: object, scale: float | None = None
) -> dict[str, np.ndarray]:
    """Every intermediate of the backward pass of softmax(Q Kᵀ · scale) V, in order, for the step view.

    Keys: weights (P, from the forward pass; its batch dims are those of Q and K), dV (Pᵀ dO),
    dP (dO Vᵀ, gradient with respect to the attention weights), row_dot (rowsum(dP ∘ P), (..., T_q, 1)),
    dS (P ∘ (dP − row_dot), gradient with respect to the scaled scores), dscores (dS · scale, gradient with
    respect to Q Kᵀ), dQ (dscores K), dK (dscoresᵀ Q). Same checks and the same numbers as attention_backward.
    """
    Q, K, V, P, dO, scale = _checked_forward(Q, K, V, grad_output, None, scale)
    return _backward(Q, K, V, P, dO, scale)


# --------------------------------------------------------------------------- checking by finite differences


def _scalar_value(value: object, where: tuple) -> float:
    arr = np.asarray(value)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"f must return a real number, got {value!r} (dtype {arr.dtype}) at x index {where}")
    if arr.ndim != 0:
        raise ValueError(
            f"f must return a scalar (a loss), got an array of shape {arr.shape} at x index {where}; "
            "reduce it, e.g. with np.sum"
        )
    out = float(arr)
    if not math.isfinite(out):
        raise ValueError(f"f returned {out} when x was nudged at index {where}; f must be finite near x")
    return out


def numerical_gradient(f: Callable[[np.ndarray], float], x: object, eps: float = 1e-6) -> np.ndarray:
    """Central differences (f(x + eps·e_i) − f(x − eps·e_i)) / (2·eps) for every entry i; shape of x."""
    check_callable(f, "f", "a function from an array to a number")
    x = as_numeric(x, "x").astype(np.float64)  # a float64 copy: finite differences need the precision
    eps = check_real(eps, "eps", low=0.0, rule="a finite number > 0")
    grad = np.empty_like(x)  # same shape as x
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()  # same shape as x; f may keep or modify what it gets
        up[i] += eps
        down[i] -= eps
        grad[i] = (_scalar_value(f(up), i) - _scalar_value(f(down), i)) / (2 * eps)
    return grad
