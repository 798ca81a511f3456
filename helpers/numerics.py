"""Floating-point facts behind a stable softmax: where exp overflows, log-sum-exp, mask sentinels.

Shape notation (as in ``helpers.attention``):

    ...      any leading batch / head dimensions
    T_q      number of queries (rows), T_k number of keys (columns)

Every limit here is computed from ``np.finfo``, ``np.log`` and ``np.nextafter`` for the
float type at hand and checked against ``np.exp`` itself; no threshold is typed in.
Public functions validate their arguments like ``helpers.attention`` does and raise
``TypeError`` / ``ValueError`` with a message that names the argument.
"""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from helpers.attention import naive_softmax, softmax
from helpers.validate import (
    as_numeric,
    check_axis,
    check_callable,
    check_flag,
    check_int,
    check_positive,
    check_rng,
    refuse_empty_rows,
    refuse_large,
)

__all__ = [
    "FLOAT_TYPES",
    "ExpLimits",
    "exp_limits",
    "float_class",
    "logsumexp",
    "log_softmax",
    "call_catching_warnings",
    "SweepRow",
    "naive_vs_stable",
    "score_spread",
    "SentinelResult",
    "compare_mask_sentinels",
    "format_sentinel_table",
]

FLOAT_TYPES = (np.float16, np.float32, np.float64)
_MAX_STEPS = 10_000  # nextafter steps allowed when refining a limit (a few are ever needed)
_MAX_ROWS = 10_000  # rows of a naive_vs_stable or compare_mask_sentinels table (one softmax each); notebooks use < 20


def _float_dtype(dtype: object, name: str = "dtype") -> np.dtype:
    if dtype is None:  # np.dtype(None) would silently mean float64
        raise TypeError(f"{name} must be one of np.float16, np.float32, np.float64, got None")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name} must be a NumPy float type such as np.float32, got {dtype!r}") from None
    if dt.type not in FLOAT_TYPES:
        raise TypeError(f"{name} must be one of float16, float32, float64, got {dtype!r} ({dt})")
    return dt


def _items(values: object, name: str, what: str) -> list:
    """``values`` (a list, tuple, array or other iterable, not text or a dict) as a list of at most _MAX_ROWS items."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a list of {what}, got {values!r} ({type(values).__name__})")
    items = list(itertools.islice(values, _MAX_ROWS + 1))  # a range(10**12) is never expanded
    if not items:
        raise ValueError(f"{name} is empty: give at least one of {what}")
    if len(items) > _MAX_ROWS:
        raise ValueError(
            f"{name} has more than {_MAX_ROWS:,} items: each one is a row of the table (a softmax of the whole input), "
            "so a typo could run for hours; give fewer"
        )
    return items


# --------------------------------------------------------------------------- where exp breaks


class ExpLimits(NamedTuple):
    """Where exp(x) stops being an ordinary number in one float type (x values in that type)."""

    dtype: str
    max_finite: float  # largest x with finite exp(x); exp of the next float up is inf
    min_normal: float  # smallest x with exp(x) >= finfo.tiny; below it exp(x) is subnormal
    min_nonzero: float  # smallest x with exp(x) > 0; below it exp(x) underflows to exactly 0


def _refine(start: np.generic, ok: Callable[[np.generic], bool], direction: float) -> np.generic:
    """The last x, walking from ``start`` towards ``direction``, for which ``ok(x)`` holds."""
    x = start
    for _ in range(_MAX_STEPS):  # step back until ok
        if ok(x):
            break
        x = np.nextafter(x, -direction)
    else:
        raise RuntimeError(f"no value near {start} satisfies the condition")
    for _ in range(_MAX_STEPS):  # then forward while the next one is still ok
        nxt = np.nextafter(x, direction)
        if not ok(nxt):
            return x
        x = nxt
    raise RuntimeError(f"the limit near {start} did not converge")


def exp_limits(dtype: object) -> ExpLimits:
    """Largest x with finite exp(x), and where exp(x) becomes subnormal and 0, for one float type."""
    dt = _float_dtype(dtype)
    fi = np.finfo(dt)
    t = dt.type
    ln = np.log  # on float64 values; each estimate is then rounded to dt and refined with np.exp in dt

    def exp(x: np.generic) -> np.generic:
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(t(x))

    top = _refine(t(ln(np.float64(fi.max))), lambda x: bool(np.isfinite(exp(x))), math.inf)
    normal = _refine(t(ln(np.float64(fi.tiny))), lambda x: bool(exp(x) >= fi.tiny), -math.inf)
    # exp(x) rounds to 0 below half the smallest subnormal, so start at log(smallest_subnormal / 2)
    start = ln(np.float64(fi.smallest_subnormal)) - ln(2.0)
    nonzero = _refine(t(start), lambda x: bool(exp(x) > 0), -math.inf)
    return ExpLimits(str(dt), float(top), float(normal), float(nonzero))


def float_class(value: float, dtype: object = np.float64) -> str:
    """'normal', 'subnormal', 'zero', 'inf' or 'nan': what ``value`` becomes when stored in ``dtype``."""
    dt = _float_dtype(dtype)
    if isinstance(value, (str, bytes, bool, np.bool_)) or not isinstance(value,
                                                                         (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"value must be a single real number, got {value!r}")
    with np.errstate(over="ignore", under="ignore"):
        try:
            v = abs(dt.type(value))
        except OverflowError:  # a Python int beyond every float: it rounds to inf, as 1e400 does
            v = dt.type(math.inf)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf"
    if v == 0:
        return "zero"
    return "normal" if v >= np.finfo(dt).tiny else "subnormal"


# --------------------------------------------------------------------------- log-sum-exp


def _working(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype == np.float16 else x  # float16 sums lose too much


def logsumexp(x: object, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """log(sum(exp(x))) along ``axis`` without overflow: m + log(sum(exp(x - m))) with m = max(x).

    -inf entries are allowed (they contribute exp(-inf) = 0); a slice of only -inf gives -inf.
    """
    x = as_numeric(x, "x", min_ndim=1, finite="no_pos_inf")
    axis = check_axis(axis, x.ndim)
    keepdims = check_flag(keepdims, "keepdims")
    work = _working(x)
    m = np.max(work, axis=axis, keepdims=True)  # (..., 1, ...) the maximum of each slice
    m = np.where(np.isneginf(m), 0, m)  # an all -inf slice: sum of exp is 0, log gives -inf below
    with np.errstate(over="ignore", divide="ignore"):
        s = np.sum(np.exp(work - m), axis=axis, keepdims=True)  # (..., 1, ...) in [1, n] unless all -inf
        out = np.log(s) + m  # (..., 1, ...)
    if not keepdims:
        out = np.squeeze(out, axis=axis)  # drop the summed axis
    return out.astype(x.dtype, copy=False)


def log_softmax(x: object, axis: int = -1) -> np.ndarray:
    """log(softmax(x)) = x - logsumexp(x), computed without exp overflow or log(0) of an underflow."""
    x = as_numeric(x, "x", min_ndim=1, finite="no_pos_inf")
    axis = check_axis(axis, x.ndim)
    lse = logsumexp(x, axis=axis, keepdims=True)  # (..., 1, ...)
    refuse_empty_rows(lse, axis, x.shape)
    return (_working(x) - _working(lse)).astype(x.dtype, copy=False)  # same shape as x


def log_softmax_unchecked(logits: np.ndarray) -> np.ndarray:
    """log_softmax over the last axis of finite float logits, unchecked, as (x - m) - log(sum(exp(x - m))).

    For training loops, which call it on arrays they made themselves (no scan for NaN, no -inf rows);
    never -inf, since the largest entry of each row contributes exp(0) = 1 to the sum.
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)  # (..., n_vocab) every entry <= 0
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (..., n_vocab), never -inf


# --------------------------------------------------------------------------- warnings, sweeps


def call_catching_warnings(func: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, list[str]]:
    """Call func(*args, **kwargs); return (result, ["RuntimeWarning: overflow encountered in exp", ...]).

    NumPy's default float settings are switched on for the call (overflow, divide-by-zero and
    invalid warn; underflow to 0 stays silent, as it is usually harmless). The warnings are
    recorded, not printed, so a notebook can show them without a file path.
    """
    check_callable(func, "func", "callable")
    with warnings.catch_warnings(record=True) as caught, np.errstate(over="warn", divide="warn", invalid="warn",
                                                                     under="ignore"):
        warnings.simplefilter("always")  # record a repeated warning every time, not once per line
        result = func(*args, **kwargs)
    messages = []
    for w in caught:
        text = f"{w.category.__name__}: {w.message}"
        if text not in messages:
            messages.append(text)
    return result, messages


class SweepRow(NamedTuple):
    """One magnitude of naive_vs_stable."""

    magnitude: float
    largest: float  # the largest entry of magnitude·x, i.e. the largest exponent the naive softmax uses
    naive_finite: bool  # every naive weight is a finite number
    naive_sums_to_1: bool  # every naive row sums to 1 (within 1e-3): fails when the sum of exp overflows
    max_abs_diff: float  # max |naive - stable| if the naive weights are finite, else nan


def naive_vs_stable(x: object, magnitudes: Iterable[float], dtype: object = np.float64) -> list[SweepRow]:
    """Softmax of magnitude·x, naive and stable, in ``dtype``, for each magnitude: where do they agree?"""
    dt = _float_dtype(dtype)
    x = as_numeric(x, "x", min_ndim=1)
    magnitudes = _items(magnitudes, "magnitudes", "finite numbers such as [1, 10, 100]")
    rows = []
    for k, m in enumerate(magnitudes):
        if isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, float, np.integer, np.floating)):
            raise TypeError(f"magnitudes must be finite numbers, got magnitudes[{k}] = {m!r} ({type(m).__name__})")
        if not math.isfinite(m):
            raise ValueError(f"magnitudes must be finite numbers, got magnitudes[{k}] = {m!r}")
        with np.errstate(over="ignore", under="ignore"):
            z = (float(m) * x).astype(dt)  # same shape as x, in the float type under test
        if not np.isfinite(z).all():
            raise ValueError(f"magnitude {m} times x does not fit in {dt}; choose smaller magnitudes")
        with np.errstate(all="ignore"):
            naive = naive_softmax(z).astype(np.float64)  # may hold inf / nan
        stable = softmax(z).astype(np.float64)
        finite = bool(np.isfinite(naive).all())
        sums = bool(finite and np.allclose(naive.sum(axis=-1), 1.0, atol=1e-3))
        diff = float(np.max(np.abs(naive - stable))) if finite else math.nan
        rows.append(SweepRow(float(m), float(z.max()), finite, sums, diff))
    return rows


def score_spread(
    magnitude: float, d_k: int, rng: np.random.Generator, T: int = 64
) -> dict[str, float]:
    """Spread of the scores q·k for random Q, K of shape (T, d_k) with entries magnitude·N(0, 1).

    Returns the standard deviation and the largest |score|, unscaled and divided by √d_k.
    Expect std ≈ magnitude² · √d_k unscaled and ≈ magnitude² scaled.
    """
    check_rng(rng)
    d_k = check_int(d_k, "d_k", minimum=1)
    T = check_int(T, "T", minimum=2)
    check_positive(magnitude, "magnitude", "a finite number > 0")
    refuse_large(T * d_k, f"the (T, d_k) = ({T:,}, {d_k:,}) random Q (and K)", "T or d_k")
    refuse_large(T * T, f"the (T, T) = ({T:,}, {T:,}) scores", "T")
    Q = magnitude * rng.standard_normal((T, d_k))  # (T, d_k)
    K = magnitude * rng.standard_normal((T, d_k))  # (T, d_k)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = Q @ K.T  # (T, d_k) @ (d_k, T) -> (T, T)
    if not np.isfinite(scores).all():
        raise ValueError(f"the scores overflow float64 for magnitude {magnitude:g} and d_k {d_k}; use a smaller "
                         "magnitude")
    scaled = scores / math.sqrt(d_k)  # (T, T)
    return {
        "std": float(scores.std()),
        "max_abs": float(np.abs(scores).max()),
        "std_scaled": float(scaled.std()),
        "max_abs_scaled": float(np.abs(scaled).max()),
    }


# --------------------------------------------------------------------------- mask sentinels


class SentinelResult(NamedTuple):
    """What one mask value does in one float type (see compare_mask_sentinels)."""

    dtype: str
    sentinel: float  # the value written into masked positions, as given
    stored: float  # the same value after the cast to dtype (-1e9 becomes -inf in float16)
    masked_weight: float  # largest weight any masked key gets in a row that keeps >= 1 key
    full_row: np.ndarray | None  # weights of the first fully masked row (nan or uniform), None if none


def _plain_stable_softmax(x: np.ndarray) -> np.ndarray:
    """exp(x - max) / sum, in x's own float type, with no guard for all -inf rows (as frameworks do)."""
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))  # (..., T_q, T_k); all -inf row -> nan
        return e / np.sum(e, axis=-1, keepdims=True)  # (..., T_q, T_k)


def compare_mask_sentinels(
    scores: object,
    keep: object,
    sentinels: Sequence[float] = (-math.inf, -1e9, -1e6, -1e4),
    dtypes: Sequence[object] = (np.float16, np.float32),
) -> list[SentinelResult]:
    """Fill the masked scores (keep == False) with each sentinel in each float type and softmax the rows.

    scores (T_q, T_k) real numbers, keep (T_q, T_k) bool (True = may attend). The softmax is the
    usual max-subtracted one, run in the float type itself and without a fully-masked-row guard,
    so a row of -inf gives nan exactly as it does in a framework.
    """
    scores = as_numeric(scores, "scores", min_ndim=2)
    try:
        keep = np.asarray(keep)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"keep must be a rectangular boolean array (True = may attend): {err}") from None
    if keep.dtype != bool:
        raise TypeError(f"keep must be a boolean array (True = may attend), got dtype {keep.dtype}")
    if keep.shape != scores.shape:
        raise ValueError(f"keep has shape {keep.shape} but scores has shape {scores.shape}; they must match")
    sentinels = _items(sentinels, "sentinels", "mask values such as (-np.inf, -1e9)")
    dtypes = _items(dtypes, "dtypes", "float types such as (np.float16, np.float32)")
    if len(sentinels) * len(dtypes) > _MAX_ROWS:
        raise ValueError(
            f"{len(sentinels):,} sentinels × {len(dtypes):,} dtypes make more than {_MAX_ROWS:,} rows, each a softmax "
            "of the whole scores; give fewer"
        )
    partial = keep.any(axis=-1) & ~keep.all(axis=-1)  # (..., T_q) rows with some keys masked, some kept
    full = ~keep.any(axis=-1)  # (..., T_q) rows with every key masked
    results = []
    for dtype in dtypes:
        dt = _float_dtype(dtype, "dtypes")
        with np.errstate(over="ignore"):
            s = scores.astype(dt)  # (T_q, T_k)
        if not np.isfinite(s).all():
            raise ValueError(f"scores do not fit in {dt} (largest |score| {np.abs(scores).max():.3g})")
        for sentinel in sentinels:
            if isinstance(sentinel, bool) or not isinstance(sentinel, (int, float, np.integer, np.floating)):
                raise TypeError(f"sentinels must be numbers, got {sentinel!r}")
            if not float(sentinel) < 0:
                raise ValueError(f"a mask sentinel must be negative (-inf or a large negative number), got {sentinel}")
            with np.errstate(over="ignore"):
                stored = dt.type(sentinel)  # -1e9 -> -inf in float16
            w = _plain_stable_softmax(np.where(keep, s, stored))  # (T_q, T_k)
            masked = np.where(~keep & partial[..., None], w, 0)  # weights of masked keys in partial rows
            leak = float(np.nanmax(masked)) if partial.any() else math.nan
            full_row = w[tuple(np.argwhere(full)[0])].copy() if full.any() else None  # (T_k,) one row
            results.append(SentinelResult(str(dt), float(sentinel), float(stored), leak, full_row))
    return results


def format_sentinel_table(results: Sequence[SentinelResult]) -> str:
    """A plain-text table of compare_mask_sentinels' results, one line per (dtype, sentinel)."""
    if (
        not isinstance(results, Sequence)
        or not results
        or not all(isinstance(r, SentinelResult) for r in results)
    ):
        raise TypeError(f"results must be the non-empty list that compare_mask_sentinels returns, got {results!r:.80}")

    def full_text(row: np.ndarray | None) -> str:
        if row is None:
            return "(no fully masked row)"
        if np.isnan(row).any():
            return "nan in every weight"
        if np.allclose(row, row[0]):
            return f"uniform, each {float(row[0]):.4g}"
        return " ".join(f"{float(v):.4g}" for v in row)

    lines = [f"{'dtype':<8} {'sentinel':>9} {'stored as':>10}  {'masked key weight':>17}  fully masked row"]
    for r in results:
        lines.append(
            f"{r.dtype:<8} {r.sentinel:>9.0e} {r.stored:>10.4g}  {r.masked_weight:>17.4g}  {full_text(r.full_row)}"
        )
    return "\n".join(lines)
