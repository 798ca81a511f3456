"""Argument checks shared by every module: one wording for each kind of mistake.

Each check returns the argument in the form the caller uses (an int, a float, a float array, ...) or
raises ``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind, wrong shape or value) with a
message that names the argument and what it got. The modules of ``helpers`` call these at the entry of
their public functions, so that a student never sees a raw NumPy error, a NaN or a silently wrong result.

The last section holds the checks that several attention functions share (Q, K, V, a mask, a scale);
shapes there are named as in helpers/attention.py (T_q queries, T_k keys, d_k, d_in).

Nothing here draws or interacts: no matplotlib, no ipywidgets.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

__all__ = [
    "MAX_BYTES",
    "FLOAT_DTYPES",
    "check_int",
    "check_real",
    "check_flag",
    "check_rng",
    "check_labels",
    "as_array",
    "as_numeric",
    "check_finite",
    "as_matrix",
    "check_matrices",
    "as_token_ids",
    "byte_size",
    "refuse_large",
    "check_axis",
    "check_scale",
    "check_weight",
    "check_qk_width",
    "check_qkv",
    "check_mask",
    "refuse_empty_rows",
    "refuse_overflow",
]

# Limit on what one call may allocate, so that a typo (10**6 for 10**2) ends in a message, not a MemoryError
# or a frozen kernel.
MAX_BYTES = 2**30  # one array of at most 1 GiB

FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


# --------------------------------------------------------------------------- numbers


def check_int(value: object, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int (not a bool) from ``minimum`` to ``maximum`` (None: no bound), or a named error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return int(value)


def check_real(
    value: object,
    name: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = True,
    kind: str = "a real number",
    rule: str | None = None,
) -> float:
    """``value`` as a finite float in (low, high) ([low, high) with low_open=False), not a bool, or a named error.

    kind: what the TypeError says the value must be ("a real number"); rule: what the ValueError says
    (default "a finite number in (low, high)"), for a message with a hint such as "> 0 (10000.0 in the paper)".
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {kind}, got {value!r} ({type(value).__name__})")
    value = float(value)
    too_low = value <= low if low_open else value < low
    if not math.isfinite(value) or too_low or value >= high:
        if rule is None:
            rule = f"a finite number in {'(' if low_open else '['}{low}, {high})"
        raise ValueError(f"{name} must be {rule}, got {value}")
    return value


def check_flag(value: object, name: str) -> bool:
    """``value`` as a bool: True or False (NumPy's too), nothing else."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_rng(rng: object) -> np.random.Generator:
    """``rng`` if it is a numpy Generator (np.random.default_rng(seed)), else a TypeError."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy Generator, e.g. np.random.default_rng(0), got {type(rng).__name__}"
        )
    return rng


def check_labels(labels: object, n: int, name: str, *, against: str, start: int = 1) -> list[str]:
    """``labels`` as a list of n strings (None: numbers from ``start``, as the series counts from 1).

    ``against`` says where n comes from: the ValueError reads "{name} has 2 labels but {against}",
    e.g. against="X has 3 tokens".
    """
    if labels is None:
        return [str(start + i) for i in range(n)]
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a list of {n} labels, got {type(labels).__name__}")
    out = [str(s) for s in labels]
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} labels but {against}")
    return out


# --------------------------------------------------------------------------- arrays


def as_array(x: object, name: str, *, what: str, rectangular: str) -> np.ndarray:
    """np.asarray(x), refusing text ("{name} must be {what}") and ragged lists ("{name} must be {rectangular}")."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be {what}, got a {type(x).__name__}")
    try:
        return np.asarray(x)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"{name} must be {rectangular}: {err}") from None


def as_numeric(x: object, name: str, *, min_ndim: int = 0, finite: str = "all") -> np.ndarray:
    """``x`` as a non-empty float array with at least ``min_ndim`` axes, checked by ``finite`` (see check_finite)."""
    arr = as_array(x, name, what="a numeric array", rectangular="a rectangular numeric array")
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold real numbers (int or float), got dtype {arr.dtype}"
            + (" (booleans are masks, not scores)" if arr.dtype == bool else "")
        )
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}): attention needs at least one token and one feature")
    if arr.dtype not in FLOAT_DTYPES:  # ints, longdouble and friends
        arr = arr.astype(np.float64)
    return check_finite(arr, name, finite=finite)


def check_finite(arr: np.ndarray, name: str, *, finite: str = "all") -> np.ndarray:
    """``arr`` unchanged, or a ValueError naming the first NaN or inf and where it is.

    finite: "all" rejects NaN and ±inf, "no_pos_inf" rejects NaN and +inf (softmax accepts -inf as
    "weight 0"), "none" checks nothing (the naive softmax).
    """
    if finite == "none":
        return arr
    # one pass over the data (no NaN/inf: the common case); find out what and where only on failure
    ok = np.isfinite(arr).all() if finite == "all" else (arr < np.inf).all()  # NaN < inf is False
    if ok:
        return arr
    if np.isnan(arr).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(arr))[0])
        raise ValueError(f"{name} contains NaN (first at index {where}, shape {arr.shape})")
    bad = np.isinf(arr) if finite == "all" else np.isposinf(arr)
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    kind = "an infinite value" if finite == "all" else "+inf"
    raise ValueError(f"{name} contains {kind} (first at index {where}, shape {arr.shape})")


def as_matrix(W: object, name: str, layout: str = "") -> np.ndarray:
    """``W`` as a finite 2-D float array; ``layout`` names its axes in the message, e.g. "(d_in, d_out)"."""
    W = as_numeric(W, name)
    if W.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix{' ' + layout if layout else ''}, got shape {W.shape}")
    return W


def check_matrices(params: object, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """``params`` as {name: 2-D numeric matrix} for every one of ``names``; an error naming what is missing or wrong."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict with keys {list(names)}, got a {type(params).__name__}")
    missing = [n for n in names if n not in params]
    if missing:
        raise ValueError(f"params is missing {missing}; it needs {list(names)}, got {sorted(params)}")
    p = {n: as_numeric(params[n], f"params[{n!r}]") for n in names}
    for n, W in p.items():
        if W.ndim != 2:
            raise ValueError(f"params[{n!r}] must be a 2-D matrix, got shape {W.shape}")
    return p


def as_token_ids(tokens: object, name: str) -> np.ndarray:
    """``tokens`` as an integer array; a TypeError or ValueError naming ``name`` for text, ragged lists, non-integers."""
    arr = as_array(tokens, name, what="an integer array of token ids",
                   rectangular="a rectangular integer array of token ids")
    if arr.dtype == bool or arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer token ids, got dtype {arr.dtype} with shape {arr.shape}")
    return arr


# --------------------------------------------------------------------------- sizes


def byte_size(n_bytes: int) -> str:
    """n_bytes in words: '1.5 GiB'."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= size:
            return f"{n_bytes / size:.3g} {unit}"
    return f"{n_bytes} bytes"


def refuse_large(n_numbers: int, what: str, lower: str) -> None:
    """A ValueError if an array of n_numbers float64 (or int64) would exceed MAX_BYTES (1 GiB), saying what and why."""
    n_bytes = 8 * n_numbers
    if n_bytes > MAX_BYTES:
        raise ValueError(
            f"{what} would take {n_bytes:,} bytes ({byte_size(n_bytes)}), above the limit of 1 GiB per array that "
            f"keeps a typo from exhausting the memory: lower {lower}"
        )


# --------------------------------------------------------------------------- attention's arguments


def check_axis(axis: object, ndim: int) -> int:
    """``axis`` as an int that indexes an array of ``ndim`` dimensions (negative counts from the end)."""
    axis = check_int(axis, "axis")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for an array with {ndim} dimensions")
    return axis


def check_scale(scale: object, d_k: int) -> float:
    """The score scale as a float > 0; None means 1/√d_k."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    return check_real(scale, "scale", low=0.0, kind="a real number or None (meaning 1/sqrt(d_k))",
                      rule="a finite number > 0")


def check_weight(W: object, name: str, d_in: int, x_shape: tuple) -> np.ndarray:
    """A weight matrix (d_in, d_out) that multiplies X of shape ``x_shape`` (..., T, d_in) from the right."""
    W = as_matrix(W, name, "(d_in, d_out)")
    if W.shape[0] != d_in:
        raise ValueError(
            f"{name} has shape {W.shape} but X has {d_in} features (X shape {x_shape}); "
            f"{name} needs {d_in} rows"
        )
    return W


def check_qk_width(W_q_shape: tuple, W_k_shape: tuple) -> None:
    """A ValueError unless W_q and W_k have the same number of columns d_k."""
    if W_q_shape[1] != W_k_shape[1]:
        raise ValueError(
            f"W_q has shape {W_q_shape} but W_k has shape {W_k_shape}: queries and keys must have the "
            f"same width d_k to be compared by a dot product"
        )


def check_qkv(
    Q: object, K: object, V: object = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, tuple[int, ...]]:
    """Q, K and V (None: Q and K only) as numeric arrays whose shapes fit attention, and their batch shape."""
    Q = as_numeric(Q, "Q", min_ndim=2)
    K = as_numeric(K, "K", min_ndim=2)
    V = None if V is None else as_numeric(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q and K must have the same last dimension d_k: Q has shape {Q.shape} (d_k={Q.shape[-1]}) "
            f"but K has shape {K.shape} (d_k={K.shape[-1]})"
        )
    if V is not None and K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K and V must have the same number of tokens T_k: K has shape {K.shape} ({K.shape[-2]} keys) "
            f"but V has shape {V.shape} ({V.shape[-2]} values)"
        )
    try:
        batch = np.broadcast_shapes(*(x.shape[:-2] for x in (Q, K, V) if x is not None))
    except ValueError:
        which = f"Q {Q.shape} and K {K.shape}" if V is None else f"Q {Q.shape}, K {K.shape} and V {V.shape}"
        raise ValueError(f"the leading (batch/head) dimensions of {which} do not broadcast") from None
    return Q, K, V, batch


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


def check_mask(mask: object, scores_shape: tuple, expected: str) -> np.ndarray:
    """``mask`` as a bool array that broadcasts to ``scores_shape`` (described as ``expected``); no row without a key.

    The mask is not broadcast (no memory): every check runs on the caller's own shape.
    """
    mask = _as_mask(mask)
    try:
        ok = np.broadcast_shapes(mask.shape, scores_shape) == scores_shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"mask has shape {mask.shape}, which does not broadcast to {expected}")
    empty = ~np.atleast_1d(mask).any(axis=-1)  # mask.shape[:-1]: query rows with nothing to attend to
    if empty.any():
        where = tuple(int(i) for i in np.argwhere(np.broadcast_to(empty, scores_shape[:-1]))[0])
        raise ValueError(
            f"mask leaves query {where[-1] + 1} (counted from 1; NumPy index {where}) with every key masked; "
            "softmax over no keys is undefined"
        )
    return mask


def refuse_empty_rows(row_max: np.ndarray, axis: int, shape: tuple) -> None:
    """A ValueError if a row's maximum (kept dims) is -inf: every entry of that row is -inf."""
    if np.isneginf(row_max).any():
        where = tuple(int(i) for i in np.argwhere(np.isneginf(np.squeeze(row_max, axis)))[0])
        raise ValueError(
            f"x has a row along axis {axis} whose every entry is -inf (the row at index {where} of the "
            f"other axes, shape {shape}); softmax of nothing is undefined (a fully masked row?)"
        )


def refuse_overflow(P: np.ndarray, what: str) -> None:
    """A ValueError if the product ``P`` (described by ``what``, e.g. "X (3, 4) @ W_q (4, 2)") is not finite."""
    if not np.isfinite(P).all():
        raise ValueError(
            f"the product {what} overflows {P.dtype} (largest finite |entry| is {np.finfo(P.dtype).max:.3g}); "
            "use smaller inputs or weights"
        )
