"""Argument checks shared by every module: one wording for each kind of mistake.

Each check returns the argument in the form the caller uses (an int, a float, a float array, ...) or
raises ``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind, wrong shape or value) with a
message that names the argument and what it got. The modules of ``helpers`` call these at the entry of
their public functions, so that a student never sees a raw NumPy error, a NaN or a silently wrong result.

Sections: numbers (ints, reals, flags, a choice, a slider range, colour limits), text (labels, titles, names,
format specs), arrays (numeric arrays, matrices, boolean matrices, finite values), sizes (memory, figures), and
last the checks that several attention functions share (Q, K, V, a mask, a scale); shapes there are named as
in helpers/attention.py (T_q queries, T_k keys, d_k, d_in). A new lesson's module checks its arguments with
these; a check that two modules need is added here, never copied.

Nothing here draws or interacts: no matplotlib, no ipywidgets.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence

import numpy as np

__all__ = [
    "MAX_BYTES",
    "FLOAT_DTYPES",
    "check_int",
    "check_index_pairs",
    "check_real",
    "check_positive",
    "check_finite_real",
    "check_flag",
    "check_choice",
    "check_range",
    "check_limits",
    "check_rng",
    "check_callable",
    "check_labels",
    "check_tokens",
    "check_titles",
    "check_name",
    "check_fmt",
    "as_array",
    "as_numeric",
    "check_finite",
    "refuse_nonfinite",
    "as_matrix",
    "check_matrix",
    "check_bool_matrix",
    "check_weights_range",
    "check_matrices",
    "as_token_ids",
    "byte_size",
    "refuse_large",
    "MAX_INCHES",
    "MAX_CELLS",
    "check_figsize",
    "check_dpi",
    "check_fontsize",
    "refuse_many_cells",
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
# Limits that keep a typo from freezing the kernel in a figure (notebooks stay far below: 14.5 inches, 10 × 10 cells)
MAX_INCHES = 100.0  # a side of a figure: 10,000 pixels at 100 dots per inch
MAX_CELLS = 10_000  # cells that print their value in one figure (a 100 × 100 heatmap draws in about 25 s)

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


def check_index_pairs(pairs: object, name: str, shape: tuple[int, int], what: tuple[str, str]) -> tuple[tuple[int, int],
                                                                                                        ...]:
    """``pairs`` (an iterable of (i, j) ints with 0 <= i < shape[0], 0 <= j < shape[1], none repeated) as a
    tuple of int pairs, or an error naming ``name``, the pair and, through ``what``, what i and j count."""
    if isinstance(pairs, (str, bytes, dict)) or not isinstance(pairs, Iterable):
        raise TypeError(f"{name} must be a list of ({what[0]}, {what[1]}) pairs, got {pairs!r}")
    out: list[tuple[int, int]] = []
    for k, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Iterable) or len(tuple(pair)) != 2:
            raise TypeError(f"{name}[{k}] must be a ({what[0]}, {what[1]}) pair of integers, got {pair!r}")
        i, j = tuple(pair)
        for value, label, n in ((i, what[0], shape[0]), (j, what[1], shape[1])):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name}[{k}] = {pair!r}: the {label} must be an integer, got {value!r} "
                                f"({type(value).__name__})")
            if not 0 <= value < n:
                raise ValueError(f"{name}[{k}] = {pair!r}: the {label} must be 0 .. {n - 1} "
                                 f"(there are {n}, counted from 0), got {value}")
        if (int(i), int(j)) in out:
            raise ValueError(f"{name}[{k}] = {pair!r} is repeated: name each ({what[0]}, {what[1]}) pair once")
        out.append((int(i), int(j)))
    return tuple(out)


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


def check_positive(value: object, name: str, what: str) -> float:
    """``value`` as a finite float > 0 (not a bool); both errors say "{name} must be {what}, got {value!r}" as given."""
    try:
        return check_real(value, name, low=0.0, kind=what, rule=what)
    except ValueError:
        raise ValueError(f"{name} must be {what}, got {value!r}") from None  # 0, not 0.0: the number as typed


def check_finite_real(value: object, name: str, *, optional: bool = False) -> float | None:
    """``value`` as a finite float (None passes when ``optional``), else a TypeError naming ``name``."""
    if optional and value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise TypeError(f"{name} must be a finite real number{' or None' if optional else ''}, got {value!r}")
    return float(value)


def check_flag(value: object, name: str) -> bool:
    """``value`` as a bool: True or False (NumPy's too), nothing else."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_choice(value: object, name: str, options: Sequence) -> object:
    """``value`` if it is one of ``options`` (shown as given: a tuple or a list), else a ValueError naming ``name``."""
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def check_range(min: object, max: object, step: object, what: str, *, allow_equal: bool = False) -> None:
    """A slider range: min, max and step finite numbers, min < max (or <=), 0 < step <= max - min.

    Each argument is blamed by its own name ("min of {what} ..."), min and max before step (a step cannot fit
    a reversed range).
    """
    for arg, v in (("min", min), ("max", max), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{arg} of {what} must be a number, got {v!r} ({type(v).__name__})")
        if not np.isfinite(v):
            raise ValueError(f"{arg} of {what} must be a finite number, got {v!r}")
    if min > max or (min == max and not allow_equal):
        need = "at most" if allow_equal else "smaller than"
        swapped = " (are they swapped?)" if min > max else ""
        raise ValueError(f"min of {what} must be {need} max, got min={min} and max={max}{swapped}")
    if not step > 0:
        raise ValueError(f"step of {what} must be > 0, got {step}")
    if max > min and step > max - min:
        raise ValueError(f"step of {what} must be at most max - min = {max - min}, got {step}")


def check_limits(vmin: object, vmax: object) -> None:
    """Fixed colour limits: each a finite number or None, and vmin < vmax when both are given."""
    for name, v in (("vmin", vmin), ("vmax", vmax)):
        check_finite_real(v, name, optional=True)
    if vmin is not None and vmax is not None and not vmin < vmax:
        raise ValueError(f"vmin must be smaller than vmax, got vmin={vmin}, vmax={vmax}")


def check_rng(rng: object) -> np.random.Generator:
    """``rng`` if it is a numpy Generator (np.random.default_rng(seed)), else a TypeError."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy Generator, e.g. np.random.default_rng(0), got {type(rng).__name__}"
        )
    return rng


def check_callable(value: object, name: str, what: str = "a function to call") -> Callable:
    """``value`` if it can be called, else a TypeError: "{name} must be {what}, got {its type}"."""
    if not callable(value):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
    return value


# --------------------------------------------------------------------------- text


def check_labels(labels: object, n: int, name: str, *, against: str, start: int = 1, prefix: str = "") -> list[str]:
    """``labels`` as a list of n strings (None: numbers from ``start``, as the series counts from 1, after ``prefix``).

    ``against`` says where n comes from: the ValueError reads "{name} has 2 labels but {against}",
    e.g. against="X has 3 tokens".
    """
    if labels is None:
        return [f"{prefix}{start + i}" for i in range(n)]
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a list of {n} labels, got {type(labels).__name__}")
    out = [str(s) for s in labels]
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} labels but {against}")
    return out


def check_tokens(labels: object, T: int, name: str = "token_labels", what: str = "tokens (rows)",
                 of: str = "X") -> list[str]:
    """Token labels of the T rows of ``of`` as T strings (x1 … xT when None), or a TypeError/ValueError naming
    ``name``."""
    return check_labels(labels, T, name, against=f"{of} has {T} {what}", prefix="x")


def check_titles(titles: object, n: int, what: str) -> list:
    """``titles`` as a list of n titles, one per ``what`` (a panel, a stream), or a named error."""
    if isinstance(titles, (str, bytes)) or not isinstance(titles, Sequence | np.ndarray):
        raise TypeError(f"titles must be a list of {n} strings (one per {what}), got {titles!r}")
    if len(titles) != n:
        raise ValueError(f"titles must be a list of {n} strings (one per {what}), got {len(titles)}: {titles!r}")
    return list(titles)


def check_name(name: object, what: str = "name") -> str:
    """``name`` as a non-empty string without spaces: it becomes part of a CSS class."""
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise TypeError(f"{what} must be a non-empty string without spaces (it becomes a CSS class), got {name!r}")
    return name


def check_fmt(fmt: object) -> None:
    """A cell format must be None, a callable or a valid float format spec such as '.4f'."""
    if fmt is None or callable(fmt):
        return
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a format spec like '.4f', a callable or None, got {fmt!r}")
    try:
        format(0.5, fmt)
    except ValueError as err:
        raise ValueError(f"fmt {fmt!r} is not a valid float format spec: {err}") from None


# --------------------------------------------------------------------------- arrays


def as_array(x: object, name: str, *, what: str, rectangular: str) -> np.ndarray:
    """np.asarray(x), refusing text ("{name} must be {what}") and ragged lists ("{name} must be {rectangular}")."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be {what}, got a {type(x).__name__}")
    try:
        return np.asarray(x)
    except ValueError:  # ragged nested lists
        raise ValueError(f"{name} must be {rectangular}: its rows have different lengths") from None


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


def refuse_nonfinite(arr: np.ndarray, name: str, why: str) -> None:
    """A ValueError naming the first NaN or ±inf of ``arr``, its index and ``why`` finite numbers are needed."""
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} contains {arr[where]} at index {where} (shape {arr.shape}); {why}")


def check_matrix(x: object, name: str, *, one_row: bool = False, finite: bool = True,
                 what: str | None = None) -> np.ndarray:
    """``x`` as a non-empty 2-D array (R, C) of real numbers in its own dtype, or a named error.

    one_row: a 1-D array becomes one row (1, n) (a heatmap of one query); finite: refuse NaN and ±inf (what a
    slider or an explorer takes); what: what text is refused as (default "a 2-D numeric array").
    """
    if what is None:
        what = "a numeric array (1-D or 2-D)" if one_row else "a 2-D numeric array"
    arr = as_array(x, name, what=what, rectangular="a rectangular matrix")
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers (int or float), got dtype {arr.dtype}")
    if one_row and arr.ndim == 1:
        arr = arr[None, :]  # (n,) -> (1, n): one query row
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix (rows, columns), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    return check_finite(arr, name, finite="all" if finite else "none")  # (R, C)


def check_bool_matrix(x: object, name: str) -> np.ndarray:
    """``x`` as a copy of a non-empty 2-D boolean matrix (True = may attend), or a named error."""
    arr = as_array(x, name, what="a boolean matrix (True = may attend)", rectangular="a rectangular matrix")
    if arr.dtype != bool:
        raise TypeError(f"{name} must be a boolean matrix (True = may attend), got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D boolean matrix, got shape {arr.shape}")
    return arr.copy()  # (R, C)


def check_weights_range(data: np.ndarray, what: str) -> None:
    """A ValueError if ``data`` (described as ``what``) has finite values outside 0..1, the scale of attention
    weights."""
    finite = data[np.isfinite(data)]
    if finite.size and (finite.min() < -1e-9 or finite.max() > 1 + 1e-9):
        raise ValueError(
            f"{what} has values from {finite.min():.4g} to {finite.max():.4g}, but kind='weights' draws "
            "attention weights on the fixed scale 0..1; use kind='scores' or kind='values' for other numbers"
        )


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
    """``tokens`` as an integer array; a TypeError or ValueError naming ``name`` for text, ragged lists,
    non-integers."""
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


def check_figsize(figsize: object, name: str = "figsize", *, screen_dpi: float = 100) -> tuple[float, float]:
    """(width, height) in inches, each a finite number > 0 and at most MAX_INCHES (shown at ``screen_dpi``)."""
    if isinstance(figsize, (str, bytes)) or not isinstance(figsize, Sequence | np.ndarray) or len(figsize) != 2:
        raise TypeError(f"{name} must be (width, height) in inches, such as (6.4, 4.8), got {figsize!r}")
    w, h = (check_positive(v, f"{name}[{k}]", "a width or height in inches, a number > 0")
            for k, v in enumerate(figsize))
    if max(w, h) > MAX_INCHES:
        raise ValueError(
            f"{name} = {figsize!r} is too large: a side of at most {MAX_INCHES:g} inches "
            f"({MAX_INCHES * screen_dpi:,.0f} pixels on screen), so that a typo cannot freeze the kernel"
        )
    return w, h


def check_dpi(dpi: object, figsize: tuple[float, float]) -> float:
    """dots per inch > 0 for a figure of ``figsize`` inches, whose image stays under Agg's 2**16 pixels and 1 GiB."""
    dpi = check_positive(dpi, "dpi", "dots per inch, a number > 0 (100 on screen, 200 for images/)")
    w, h = round(figsize[0] * dpi), round(figsize[1] * dpi)
    if max(w, h) >= 2**16 or 4 * w * h > MAX_BYTES:
        raise ValueError(
            f"dpi = {dpi:g} is too large for a figure of {figsize[0]:g} × {figsize[1]:g} inches: its image would be "
            f"{w:,} × {h:,} pixels ({byte_size(4 * w * h)}); at most 65,535 pixels a side and 1 GiB, so that a typo "
            "cannot exhaust the memory"
        )
    return dpi


def check_fontsize(fontsize: object) -> float | None:
    """None (matplotlib's default) or a size in points > 0 and at most 100."""
    if fontsize is None:
        return None
    size = check_positive(fontsize, "fontsize", "None or a size in points, such as 9")
    if size > 100:
        raise ValueError(f"fontsize must be at most 100 points, got {fontsize!r}")
    return size


def refuse_many_cells(n_cells: int, what: str) -> None:
    """A ValueError if a figure would print more than MAX_CELLS values (a figure that takes minutes to draw)."""
    if n_cells > MAX_CELLS:
        raise ValueError(
            f"{what} has {n_cells:,} cells; a heatmap prints every value, so it draws at most {MAX_CELLS:,} "
            "(100 × 100, readable only far below that): show a slice, such as matrix[:10, :10]"
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
    arr = as_array(mask, "mask", what="a boolean array (True = may attend)", rectangular="a rectangular boolean array")
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
        at = f"NumPy row {where[0]}" if len(where) == 1 else f"NumPy index {where}"  # batched: (batch..., row)
        raise ValueError(
            f"mask leaves query {where[-1] + 1} (counted from 1; {at}) with every key masked; "
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
