"""The pieces around attention in a transformer block, with their backward passes by hand: LayerNorm, GELU,
and the cross-entropy of next-token prediction.

Shape notation used throughout this module:

    ...      any leading batch / token dimensions
    d        features per token (the last axis; d_model in a transformer)
    V        vocabulary size (the width of the logits)

Each forward formula and its gradient (07's method: a gradient ``dX`` has the shape of ``X``):

    LayerNorm   x̂ = (x − mean(x)) / √(var(x) + eps),  y = x̂ ∘ g + b        (over the last axis; var biased)
                dx = (dx̂ − mean(dx̂) − x̂ ∘ mean(dx̂ ∘ x̂)) / √(var + eps),  dx̂ = dy ∘ g
                dg = Σ dy ∘ x̂,  db = Σ dy                                    (sums over every token)
    GELU        y = ½ x (1 + tanh(u)),  u = √(2/π) (x + 0.044715 x³)          (the tanh form, as GPT-2)
                dy/dx = ½ (1 + tanh u) + ½ x (1 − tanh² u) √(2/π) (1 + 3 · 0.044715 x²)
    cross-entropy  L = mean over positions of −log softmax(logits)[target]  (nats)
                dL/dlogits = (softmax(logits) − onehot(target)) / N          (N positions)

The cross-entropy's softmax is ``helpers.attention``'s and its log-softmax ``helpers.numerics``'.
The public functions check their inputs and name the argument in a ``TypeError``/``ValueError``; the
``..._unchecked`` kernels above them take checked arrays and are what ``helpers.language_model`` runs on every step.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.attention import softmax_in_place
from helpers.numerics import log_softmax_unchecked
from helpers.validate import as_numeric

__all__ = [
    "LN_EPS",
    "layer_norm",
    "layer_norm_backward",
    "gelu",
    "gelu_backward",
    "cross_entropy",
    "cross_entropy_backward",
]

LN_EPS = 1e-5  # added to the variance in LayerNorm (PyTorch's and GPT-2's default)
_GELU_C = math.sqrt(2.0 / math.pi)  # √(2/π) ≈ 0.7979
_GELU_A = 0.044715


# --------------------------------------------------------------------------- kernels (checked arrays in)


def layer_norm_unchecked(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, x̂, 1/√(var + eps)) for x (..., d): what the backward pass needs is x̂ and the inverse deviation."""
    mu = x.mean(axis=-1, keepdims=True)  # (..., 1)
    xc = x - mu  # (..., d) centred
    var = np.mean(xc * xc, axis=-1, keepdims=True)  # (..., 1) biased: divided by d, not d − 1
    rstd = 1.0 / np.sqrt(var + LN_EPS)  # (..., 1)
    xc *= rstd  # (..., d) x̂, in place: mean 0, variance 1 per token
    y = xc * g  # (..., d) * (d,) -> (..., d)
    y += b  # (..., d)
    return y, xc, rstd


def layer_norm_backward_unchecked(
    dy: np.ndarray, xhat: np.ndarray, rstd: np.ndarray, g: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dx (..., d), dg (d,), db (d,)) from dL/dy and the forward pass's x̂ and 1/√(var + eps)."""
    d = xhat.shape[-1]
    dy2 = dy.reshape(-1, d)  # (N, d) every token a row
    dg = np.einsum("nd,nd->d", dy2, xhat.reshape(-1, d))  # (d,) Σ over tokens of dy ∘ x̂
    db = dy2.sum(axis=0)  # (d,)
    dxhat = dy * g  # (..., d)
    m1 = dxhat.mean(axis=-1, keepdims=True)  # (..., 1)
    m2 = np.mean(dxhat * xhat, axis=-1, keepdims=True)  # (..., 1)
    dxhat -= m1  # (..., d)
    dxhat -= xhat * m2  # (..., d)
    dxhat *= rstd  # (..., d) dx
    return dxhat, dg, db


def gelu_unchecked(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(GELU(x), s) elementwise with s = ½(1 + tanh u), so that GELU(x) = x ∘ s; the backward pass re-uses s."""
    s = x * x  # x²
    s *= _GELU_C * _GELU_A
    s += _GELU_C  # √(2/π)(1 + 0.044715 x²)
    s *= x  # u = √(2/π)(x + 0.044715 x³)
    np.tanh(s, out=s)  # tanh u
    s *= 0.5
    s += 0.5  # s = ½(1 + tanh u)
    return x * s, s


def gelu_backward_unchecked(dy: np.ndarray, x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """dL/dx from dL/dy, the input x and s = ½(1 + tanh u) of the forward pass (all the same shape).

    GELU'(x) = s + x ∘ ds/dx with ds/dx = ½(1 − tanh² u) du/dx = 2 s (1 − s) du/dx, so
    GELU'(x) = s ∘ (1 + 2x du/dx ∘ (1 − s)), du/dx = √(2/π)(1 + 3 · 0.044715 x²).
    """
    r = x * x  # x²
    r *= 6 * _GELU_C * _GELU_A
    r += 2 * _GELU_C
    r *= x  # 2x du/dx
    r *= 1.0 - s  # 2x du/dx (1 − s)
    r += 1.0
    r *= s  # GELU'(x)
    r *= dy
    return r


def cross_entropy_unchecked(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """(mean −log p[target], softmax probabilities) for logits (N, V) and targets (N,)."""
    probs = softmax_in_place(logits.copy())  # (N, V) rows sum to 1
    picked = probs[np.arange(len(targets)), targets]  # (N,) p[target]
    with np.errstate(divide="ignore"):
        loss = -np.mean(np.log(picked, dtype=np.float64))  # float64 sum: N may be large
    if not np.isfinite(loss):  # p underflowed to 0 for some target: redo that part in log space
        logp = log_softmax_unchecked(logits)  # (N, V)
        loss = -np.mean(logp[np.arange(len(targets)), targets], dtype=np.float64)
    return float(loss), probs


def cross_entropy_backward_unchecked(probs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """dL/dlogits = (p − onehot(target)) / N (N, V), computed in place in ``probs``."""
    probs[np.arange(len(targets)), targets] -= 1.0  # (N, V)
    probs /= len(targets)
    return probs


# --------------------------------------------------------------------------- public, checked


def _check_vector(v: object, name: str, d: int, x_shape: tuple) -> np.ndarray:
    v = as_numeric(v, name)
    if v.shape != (d,):
        raise ValueError(f"{name} has shape {v.shape} but x has shape {x_shape}: {name} needs shape ({d},)")
    return v


def layer_norm(x: object, g: object, b: object) -> np.ndarray:
    """LayerNorm over the last axis: (x − mean)/√(var + 1e-5) ∘ g + b, x (..., d), g and b (d,)."""
    x = as_numeric(x, "x", min_ndim=1)
    g = _check_vector(g, "g", x.shape[-1], x.shape)
    b = _check_vector(b, "b", x.shape[-1], x.shape)
    dtype = np.result_type(x, g, b)
    return layer_norm_unchecked(x.astype(dtype), g.astype(dtype), b.astype(dtype))[0]


def layer_norm_backward(x: object, g: object, grad_output: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dx (..., d), dg (d,), db (d,)): the gradients of sum(grad_output ∘ layer_norm(x, g, b))."""
    x = as_numeric(x, "x", min_ndim=1)
    g = _check_vector(g, "g", x.shape[-1], x.shape)
    dy = as_numeric(grad_output, "grad_output")
    if dy.shape != x.shape:
        raise ValueError(f"grad_output has shape {dy.shape} but x has shape {x.shape}; they must match")
    dtype = np.result_type(x, g, dy)
    x, g, dy = x.astype(dtype), g.astype(dtype), dy.astype(dtype)
    _, xhat, rstd = layer_norm_unchecked(x, g, np.zeros_like(g))
    return layer_norm_backward_unchecked(dy, xhat, rstd, g)


def gelu(x: object) -> np.ndarray:
    """GELU, the tanh form: ½ x (1 + tanh(√(2/π)(x + 0.044715 x³))), elementwise."""
    x = as_numeric(x, "x")
    return gelu_unchecked(x)[0]


def gelu_backward(x: object, grad_output: object) -> np.ndarray:
    """dL/dx = grad_output ∘ GELU'(x), the shape of x."""
    x = as_numeric(x, "x")
    dy = as_numeric(grad_output, "grad_output")
    if dy.shape != x.shape:
        raise ValueError(f"grad_output has shape {dy.shape} but x has shape {x.shape}; they must match")
    dtype = np.result_type(x, dy)
    x, dy = x.astype(dtype), dy.astype(dtype)
    return gelu_backward_unchecked(dy, x, gelu_unchecked(x)[1])


def _check_logits_targets(logits: object, targets: object) -> tuple[np.ndarray, np.ndarray]:
    logits = as_numeric(logits, "logits", min_ndim=1)
    if isinstance(targets, (str, bytes)):
        raise TypeError(f"targets must be integer token ids, got a {type(targets).__name__}")
    targets = np.asarray(targets)
    if targets.dtype == bool or targets.dtype.kind not in "iu":
        raise TypeError(f"targets must hold integer token ids, got dtype {targets.dtype} with shape {targets.shape}")
    if targets.shape != logits.shape[:-1]:
        raise ValueError(
            f"targets has shape {targets.shape} but logits has shape {logits.shape} (..., V); targets needs "
            f"shape {logits.shape[:-1]}"
        )
    V = logits.shape[-1]
    if targets.size and ((targets < 0).any() or (targets >= V).any()):
        bad = int(targets[(targets < 0) | (targets >= V)].ravel()[0])
        raise ValueError(f"targets holds {bad}, not a token id 0 .. {V - 1} (logits has V = {V} columns)")
    return logits.reshape(-1, V), targets.reshape(-1).astype(np.intp)


def cross_entropy(logits: object, targets: object) -> float:
    """Mean over every position of −log softmax(logits)[target], in nats; logits (..., V), targets (...)."""
    logits, targets = _check_logits_targets(logits, targets)
    return cross_entropy_unchecked(logits, targets)[0]


def cross_entropy_backward(logits: object, targets: object) -> np.ndarray:
    """dL/dlogits = (softmax(logits) − onehot(targets)) / N, the shape of logits."""
    shape = np.shape(logits)
    logits, targets = _check_logits_targets(logits, targets)
    _, probs = cross_entropy_unchecked(logits, targets)
    return cross_entropy_backward_unchecked(probs, targets).reshape(shape)
